package plugin

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kro-agent/kro-agent/pkg/version"
	"github.com/kro-agent/kro-agent/pkg/webhook"
)

// The plugin reads the agent's version where the agent registers its
// webhooks, by name.
func TestVersionReadsTheConfigurationTheAgentRegisters(t *testing.T) {
	if agentWebhookConfig != webhook.ConfigName {
		t.Errorf("the plugin reads ValidatingWebhookConfiguration %q, the agent registers %q", agentWebhookConfig, webhook.ConfigName)
	}
}

func TestVersionClientNeedsNoCluster(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "--client"}, "Client Version: " + version.Version + "\n"},
		{[]string{"version", "--client", "-o", "json"}, "{\n  \"clientVersion\": \"" + version.Version + "\"\n}\n"},
		{[]string{"version", "--client", "-o", "yaml"}, "clientVersion: " + version.Version + "\n"},
	} {
		var out bytes.Buffer
		cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		// A kubeconfig that does not exist: --client must not read it.
		cmd.SetArgs(append(tc.args, "--kubeconfig", t.TempDir()+"/none"))
		if err := cmd.Execute(); err != nil {
			t.Errorf("%q: %v", tc.args, err)
		}
		if out.String() != tc.want {
			t.Errorf("%q printed %q, want %q", tc.args, out.String(), tc.want)
		}
	}
}

// Without --client an unreachable cluster is an error, after the client's
// version.
func TestVersionPrintsTheClientsBeforeAServerError(t *testing.T) {
	var out bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "5s"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "reading the server's version") {
		t.Errorf("got %v, want an error reading the server's version", err)
	}
	if out.String() != "Client Version: "+version.Version+"\n" {
		t.Errorf("printed %q, want the client's version alone", out.String())
	}
}
