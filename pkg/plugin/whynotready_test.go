package plugin

import (
	"strings"
	"testing"
)

// A webhook that did not answer is named with where to look, for
// namespaced and cluster-scoped resources alike, and for what a
// Deployment makes; one configured with a URL has no Service to look at.
func TestAdmissionAdviceForAWebhookThatDidNotAnswer(t *testing.T) {
	const viaService = `applying ConfigMap app (resource config) in the local cluster: Internal error occurred: failed calling webhook "v.policy.example.com": failed to call webhook: Post "https://policy.policy-system.svc:443/validate?timeout=10s": no endpoints available for service "policy"`
	const viaURL = `Internal error occurred: failed calling webhook "u.example.com": failed to call webhook: Post "https://hooks.example.com/v?timeout=10s": dial tcp: lookup hooks.example.com: no such host`
	for _, tc := range []struct {
		message string
		row     Row
		made    bool
		want    []string
	}{
		{viaService, Row{NodeID: "config", Kind: "ConfigMap", Name: "app", Namespace: "team"}, false, []string{
			`admission webhook "v.policy.example.com", served by Service policy in namespace policy-system, did not answer the API server, and its failure policy refuses what it cannot check, ConfigMap app among it: bring its pods back (kubectl get endpointslices -n policy-system -l kubernetes.io/service-name=policy shows its endpoints)`,
			"; kro-agent creates it within seconds of either change",
		}},
		{viaService, Row{NodeID: "ns", Kind: "Namespace", Name: "app"}, false, []string{
			"its failure policy refuses what it cannot check, Namespace app among it:",
		}},
		{viaService, Row{NodeID: "deployment", Kind: "Deployment", Name: "app", Namespace: "team"}, true, []string{
			"what Deployment app makes among it",
			"; its controller makes it again at its next try after either change",
		}},
		{viaURL, Row{NodeID: "config", Kind: "ConfigMap", Name: "app", Namespace: "team"}, false, []string{
			`admission webhook "u.example.com" did not answer the API server at https://hooks.example.com/v?timeout=10s, and its failure policy refuses what it cannot check, ConfigMap app among it: make it answer`,
			"; kro-agent tries again within seconds of a change of the webhook configuration, and with backoff until then",
		}},
	} {
		got := admissionAdvice(tc.message, &tc.row, tc.made)
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("advice for %s %s (made %v):\n%s\nwant it to say:\n%s", tc.row.Kind, tc.row.Name, tc.made, got, want)
			}
		}
	}
	if got := admissionAdvice(`admission webhook "v.example.com" denied the request: no`, &Row{Kind: "ConfigMap", Name: "a", Namespace: "team"}, false); got != "" {
		t.Errorf("advice for a webhook that answered and denied: %q; want none (its message says why)", got)
	}
}
