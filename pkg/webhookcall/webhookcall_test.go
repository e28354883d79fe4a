package webhookcall

import "testing"

func TestFailed(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    Failure
	}{
		// The API server's words (k8s.io/apiserver's webhook dispatchers),
		// with the endpoint resolver and without endpoints.
		{`Internal error occurred: failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy-webhook.policy-system.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`,
			Failure{Webhook: "validate.policy.example.com", Namespace: "policy-system", Service: "policy-webhook", URL: "https://policy-webhook.policy-system.svc:443/validate?timeout=10s"}},
		// Dialled, refused; no path.
		{`Internal error occurred: failed calling webhook "m.example.com": failed to call webhook: Post "https://hook.hooks.svc:8443?timeout=5s": dial tcp 10.0.0.12:8443: connect: connection refused`,
			Failure{Webhook: "m.example.com", Namespace: "hooks", Service: "hook", URL: "https://hook.hooks.svc:8443?timeout=5s"}},
		// As a condition of the instance quotes it.
		{`applying ConfigMap a (resource config) in the local cluster: Internal error occurred: failed calling webhook "v.example.com": failed to call webhook: Post "https://v.team.svc:443/?timeout=1s": context deadline exceeded`,
			Failure{Webhook: "v.example.com", Namespace: "team", Service: "v", URL: "https://v.team.svc:443/?timeout=1s"}},
		// A webhook configured with a URL: no Service to follow.
		{`Internal error occurred: failed calling webhook "u.example.com": failed to call webhook: Post "https://webhooks.example.com/validate?timeout=10s": dial tcp: lookup webhooks.example.com: no such host`,
			Failure{Webhook: "u.example.com", URL: "https://webhooks.example.com/validate?timeout=10s"}},
		// No port (the API server writes one, but a URL need not).
		{`Internal error occurred: failed calling webhook "m.example.com": failed to call webhook: Post "https://hook.hooks.svc?timeout=5s": EOF`,
			Failure{Webhook: "m.example.com", Namespace: "hooks", Service: "hook", URL: "https://hook.hooks.svc?timeout=5s"}},
		{`Internal error occurred: failed calling webhook "u.example.com": failed to call webhook: Post "https://hook.hooks.svc.cluster.local:443/v": EOF`,
			Failure{Webhook: "u.example.com", URL: "https://hook.hooks.svc.cluster.local:443/v"}},
	} {
		got, ok := Failed(tc.message)
		if got != tc.want || !ok {
			t.Errorf("Failed(%q) = %+v, %v; want %+v", tc.message, got, ok, tc.want)
		}
	}
	for _, message := range []string{
		// The webhook answered, and denied: not a failure to call it.
		`admission webhook "v.example.com" denied the request: no`,
		// Its configuration is wrong, not its availability.
		`Internal error occurred: failed calling webhook "v.example.com": could not get REST client: bad caBundle`,
		`Internal error occurred: failed calling webhook "v.example.com": received invalid webhook response: expected response.uid="a", got ""`,
		`configmaps "a" is forbidden: exceeded quota: q, requested: count/configmaps=1`,
	} {
		if got, ok := Failed(message); ok {
			t.Errorf("Failed(%q) = %+v; want no failed call", message, got)
		}
	}
}
