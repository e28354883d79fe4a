package podsecurity

import "testing"

func TestRefusedAt(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    string
	}{
		// The API server's words (k8s.io/pod-security-admission).
		{`pods "p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`, "restricted"},
		{`pods "p" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostNetwork=true)`, "baseline"},
		// As a Deployment's ReplicaFailure condition quotes it.
		{`pods "web-7d9f-x2x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`, "restricted"},
		{`pods "p" is forbidden: exceeded quota: room, requested: pods=1, used: pods=1, limited: pods=1`, ""},
	} {
		got, ok := RefusedAt(tc.message)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("RefusedAt(%q) = %q, %v; want %q", tc.message, got, ok, tc.want)
		}
	}
}
