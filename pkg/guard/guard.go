// Package guard holds the ValidatingAdmissionPolicies that protect what
// kro-agent manages, in every cluster it writes to: only the agent changes
// ownership labels, and the agent never takes over an object it did not
// create. They run in the API server: no webhook round trip, and they hold
// while the agent is down.
package guard

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// Names of the policies; each binding has its policy's name.
const (
	LabelsPolicyName     = "kro-agent-ownership-labels"
	NoTakeoverPolicyName = "kro-agent-no-takeover"
)

// Policies returns both policies with their bindings, for agentUser: the
// username the agent has in the cluster they are for.
func Policies(agentUser string) []Policy {
	return []Policy{labelsPolicy(agentUser), noTakeoverPolicy(agentUser)}
}

// managedBy labels what the agent registers as its own.
func managedBy() map[string]string {
	return map[string]string{v1alpha1.LabelManagedBy: ownership.FieldManager}
}

// Policy is a policy and its binding.
type Policy struct {
	Policy  *admissionregv1.ValidatingAdmissionPolicy
	Binding *admissionregv1.ValidatingAdmissionPolicyBinding
}

// Identity returns the username the client's credentials have in its
// cluster, from a SelfSubjectReview: what the policies recognise the agent
// by, and what no caller can claim for itself.
func Identity(ctx context.Context, client kubernetes.Interface) (string, error) {
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("finding the agent's own identity (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// Ensure applies both policies and their bindings for agentUser with
// server-side apply: created when missing, put back as they should be
// when changed, untouched (no write to storage) when already right.
func Ensure(ctx context.Context, client kubernetes.Interface, agentUser string) error {
	api := client.AdmissionregistrationV1()
	opts := metav1.PatchOptions{FieldManager: ownership.FieldManager, Force: ptr.To(true)}
	for _, p := range Policies(agentUser) {
		body, err := applyBody(p.Policy, "ValidatingAdmissionPolicy")
		if err != nil {
			return err
		}
		if _, err := api.ValidatingAdmissionPolicies().Patch(ctx, p.Policy.Name, types.ApplyPatchType, body, opts); err != nil {
			return fmt.Errorf("applying ValidatingAdmissionPolicy %s: %w", p.Policy.Name, err)
		}
		if body, err = applyBody(p.Binding, "ValidatingAdmissionPolicyBinding"); err != nil {
			return err
		}
		if _, err := api.ValidatingAdmissionPolicyBindings().Patch(ctx, p.Binding.Name, types.ApplyPatchType, body, opts); err != nil {
			return fmt.Errorf("applying ValidatingAdmissionPolicyBinding %s: %w", p.Binding.Name, err)
		}
	}
	return nil
}

// applyBody is obj as an apply configuration: with its kind, and without
// the fields a typed object always carries but the agent does not own
// (status, creationTimestamp).
func applyBody(obj any, kind string) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = admissionregv1.SchemeGroupVersion.String(), kind
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return json.Marshal(m)
}

// labelsPolicy is the ValidatingAdmissionPolicy (and its binding) that denies
// changes to kro.run/* and applyset.kubernetes.io/* labels on anything the
// agent manages, by anyone but the agent. It runs in the API server, so it
// holds while the agent is down, and it reads the caller's identity from
// the request's authenticated user info, which no caller can set.
func labelsPolicy(agentUser string) Policy {
	owned := &metav1.LabelSelector{MatchLabels: map[string]string{v1alpha1.LabelOwned: "true"}}
	const guarded = `(k.startsWith('kro.run/') || k.startsWith('applyset.kubernetes.io/'))`
	policy := &admissionregv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: LabelsPolicyName, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregv1.Fail),
			MatchConstraints: &admissionregv1.MatchResources{
				ObjectSelector: owned,
				ResourceRules: []admissionregv1.NamedRuleWithOperations{{RuleWithOperations: admissionregv1.RuleWithOperations{
					Operations: []admissionregv1.OperationType{admissionregv1.Update},
					Rule:       admissionregv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
			},
			MatchConditions: []admissionregv1.MatchCondition{{
				Name:       "not-kro-agent",
				Expression: fmt.Sprintf("request.userInfo.username != %q", agentUser),
			}},
			Variables: []admissionregv1.Variable{
				{Name: "old", Expression: "oldObject.metadata.?labels.orValue({})"},
				{Name: "new", Expression: "object.metadata.?labels.orValue({})"},
				{Name: "changed", Expression: "variables.old.filter(k, " + guarded + " && (!(k in variables.new) || variables.new[k] != variables.old[k])) + " +
					"variables.new.filter(k, " + guarded + " && !(k in variables.old))"},
			},
			Validations: []admissionregv1.Validation{{
				Expression:        "size(variables.changed) == 0",
				MessageExpression: "'label ' + variables.changed[0] + ' records ownership by kro-agent; only kro-agent may change or remove it'",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	return Policy{Policy: policy, Binding: denyBinding(LabelsPolicyName)}
}

// noTakeoverPolicy is the ValidatingAdmissionPolicy (and its binding) that
// keeps the agent from taking over an object it did not create. The agent
// knows the objects it made from its informers, which only hold objects
// with its labels; an object of the same name made by someone else is not
// among them, and a server-side apply would quietly make it the agent's,
// to be changed and, with its instance, deleted. Such an apply is an
// update that adds kro.run/instance-id where there was none, which this
// policy denies. Updates that keep the label, and creates, are untouched.
func noTakeoverPolicy(agentUser string) Policy {
	instanceID := fmt.Sprintf("%q in ", v1alpha1.LabelInstanceID)
	policy := &admissionregv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: NoTakeoverPolicyName, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregv1.Fail),
			MatchConstraints: &admissionregv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{v1alpha1.LabelOwned: "true"}},
				ResourceRules: []admissionregv1.NamedRuleWithOperations{{RuleWithOperations: admissionregv1.RuleWithOperations{
					Operations: []admissionregv1.OperationType{admissionregv1.Update},
					Rule:       admissionregv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
			},
			MatchConditions: []admissionregv1.MatchCondition{
				{Name: "kro-agent", Expression: fmt.Sprintf("request.userInfo.username == %q", agentUser)},
				// Managed resources carry the label; instances and
				// generated CRDs do not.
				{Name: "managed-resource", Expression: instanceID + "object.metadata.?labels.orValue({})"},
			},
			Validations: []admissionregv1.Validation{{
				Expression:        instanceID + "oldObject.metadata.?labels.orValue({})",
				MessageExpression: "object.kind + ' ' + object.metadata.name + ' already exists and was not created by kro-agent, which does not take over objects it did not create'",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	return Policy{Policy: policy, Binding: denyBinding(NoTakeoverPolicyName)}
}

// denyBinding binds a policy to every object it matches, denying what it
// refuses.
func denyBinding(policy string) *admissionregv1.ValidatingAdmissionPolicyBinding {
	return &admissionregv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy,
			ValidationActions: []admissionregv1.ValidationAction{admissionregv1.Deny},
		},
	}
}
