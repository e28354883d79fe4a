package graph

import "testing"

func TestCamelCaseIsTheNameMeant(t *testing.T) {
	for _, tc := range []struct {
		name  string
		upper bool
		want  string
	}{
		{"my-secret", false, "mySecret"},
		{"web_app", true, "WebApp"},
		{"Web-App", false, "webApp"},
		{"database reachable", true, "DatabaseReachable"},
		{"tls.cert", false, "tlsCert"},
		{"app-v2", false, "appV2"},
		{"webapp", true, "Webapp"},
		// Nothing to suggest: no word, a digit first, or the name itself.
		{"--", false, ""},
		{"2fa-app", false, ""},
		{"webApp", false, ""},
	} {
		if got := camelCase(tc.name, tc.upper); got != tc.want {
			t.Errorf("camelCase(%q, %v) = %q, want %q", tc.name, tc.upper, got, tc.want)
		}
	}
}
