package clusters

import (
	"strings"
	"testing"
)

const embedded = `apiVersion: v1
kind: Config
current-context: w
contexts: [{name: w, context: {cluster: w, user: w}}]
clusters: [{name: w, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ""}}]
users: [{name: w, user: {token: abc}}]
`

func TestLoad(t *testing.T) {
	cfg, digest, err := Load([]byte(embedded))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "abc" || len(digest) != 16 {
		t.Errorf("Load = %s %q %q", cfg.Host, cfg.BearerToken, digest)
	}
	_, other, _ := Load([]byte(strings.Replace(embedded, "abc", "xyz", 1)))
	if other == digest {
		t.Error("a changed kubeconfig has the same digest")
	}
}

func TestLoadRefusals(t *testing.T) {
	for _, tc := range []struct{ name, kubeconfig, want string }{
		{"empty", "", "the kubeconfig is empty"},
		{"garbage", "{", "does not parse"},
		{"missing context", strings.Replace(embedded, "current-context: w", "current-context: nope", 1), `current context "nope" does not exist`},
		{"file references", strings.Replace(embedded, "{token: abc}", "{client-certificate: /home/me/admin.crt, client-key: /home/me/admin.key}", 1),
			"refers to files (/home/me/admin.crt, /home/me/admin.key); embed them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load([]byte(tc.kubeconfig))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load error = %v, want %q", err, tc.want)
			}
		})
	}
}
