// Package podsecurity recognises the Pod Security admission's refusals of
// Pods. Such a refusal is lifted by a change of the namespace (its label
// pod-security.kubernetes.io/enforce, or enforce-version, naming a level
// the Pod meets) or of the Pod. The agent waits on the namespace; kubectl
// kro says which level the namespace enforces.
package podsecurity

import "regexp"

// EnforceLabel is the namespace label that sets the level Pod Security
// admission enforces on the namespace's Pods.
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// refusal matches the admission's words, `violates PodSecurity
// "LEVEL:VERSION": what the Pod does that the level forbids`.
var refusal = regexp.MustCompile(`violates PodSecurity "([a-z]+):[^"]*"`)

// RefusedAt returns the level that message (an API server error, or a
// condition quoting one) says a Pod was refused for not meeting, and
// whether it says so.
func RefusedAt(message string) (string, bool) {
	m := refusal.FindStringSubmatch(message)
	if m == nil {
		return "", false
	}
	return m[1], true
}
