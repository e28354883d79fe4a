package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/version"
)

// agentWebhookConfig is the ValidatingWebhookConfiguration kro-agent
// registers (webhook.ConfigName; the plugin does not link the webhook
// server). The agent labels it with its version each time it registers.
const agentWebhookConfig = "kro-agent"

var validatingWebhookConfigs = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// Versions is what `kubectl kro version` reports. Where the agent's
// version cannot be told, AgentVersion is empty and AgentUnknown says why.
type Versions struct {
	ClientVersion string `json:"clientVersion"`
	ServerVersion string `json:"serverVersion,omitempty"`
	AgentVersion  string `json:"agentVersion,omitempty"`
	AgentUnknown  string `json:"agentUnknown,omitempty"`
}

func newVersionCommand(o *Options) *cobra.Command {
	var output printFlags
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, the cluster's and that of the kro-agent serving it",
		Long: `Print the version of kubectl kro, of the cluster's API server, and of the
kro-agent that last registered its admission webhooks in the cluster (the
kro.run/kro-version label of the kro-agent ValidatingWebhookConfiguration).
With --client, only the plugin's, without contacting the cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := Versions{ClientVersion: version.Version}
			var err error
			if !clientOnly {
				err = o.serverVersions(cmd.Context(), &v)
			}
			// What is known is printed even when the cluster cannot be
			// reached, as kubectl version does.
			if output.output != "" {
				if perr := output.printObject(o.Streams.Out, v); perr != nil {
					return perr
				}
				return err
			}
			fmt.Fprintf(o.Streams.Out, "Client Version: %s\n", v.ClientVersion)
			if v.ServerVersion != "" {
				fmt.Fprintf(o.Streams.Out, "Server Version: %s\n", v.ServerVersion)
			}
			switch {
			case v.AgentVersion != "":
				fmt.Fprintf(o.Streams.Out, "Agent Version: %s\n", v.AgentVersion)
			case v.AgentUnknown != "":
				fmt.Fprintf(o.Streams.Out, "Agent Version: unknown: %s\n", v.AgentUnknown)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print the plugin's version only, without contacting the cluster")
	addOutputFlag(cmd, &output, "", "json", "yaml")
	return cmd
}

// serverVersions fills in the API server's version and the agent's.
func (o *Options) serverVersions(ctx context.Context, v *Versions) error {
	dc, err := o.Config.ToDiscoveryClient()
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the server's version: %w", err)
	}
	v.ServerVersion = info.GitVersion
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	hooks, err := md.Resource(validatingWebhookConfigs).Get(ctx, agentWebhookConfig, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		v.AgentUnknown = fmt.Sprintf("no kro-agent has registered its webhooks in this cluster (ValidatingWebhookConfiguration %s not found)", agentWebhookConfig)
	case apierrors.IsForbidden(err):
		v.AgentUnknown = fmt.Sprintf("not allowed to get ValidatingWebhookConfiguration %s, where the agent records its version", agentWebhookConfig)
	case err != nil:
		return fmt.Errorf("reading the agent's version from ValidatingWebhookConfiguration %s: %w", agentWebhookConfig, err)
	case hooks.Labels[v1alpha1.LabelKroVersion] == "":
		v.AgentUnknown = fmt.Sprintf("ValidatingWebhookConfiguration %s has no %s label: the agent that registered it is older than the label", agentWebhookConfig, v1alpha1.LabelKroVersion)
	default:
		v.AgentVersion = hooks.Labels[v1alpha1.LabelKroVersion]
	}
	return nil
}
