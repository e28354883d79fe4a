// Package webhook holds kro-agent's admission control: a validating webhook
// that denies invalid ResourceGraphDefinitions with the full graph
// validation, a mutating webhook that puts the ownership labels and the
// finalizer on instances from their first write, a ValidatingAdmissionPolicy
// that keeps everyone but the agent from changing ownership labels, and the
// self-managed TLS the webhooks are served with.
package webhook
