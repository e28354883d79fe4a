// Package plugin implements `kubectl kro`, the kubectl plugin that explains
// kro instances and validates ResourceGraphDefinitions. Each command is a
// small pipeline: read input, compute a result, print it as text or as
// -o json|yaml.
package plugin

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Options are shared by every command: the standard kubectl connection
// flags and the I/O streams.
type Options struct {
	Config  *genericclioptions.ConfigFlags
	Streams genericiooptions.IOStreams
}

// NewRootCommand builds `kubectl kro` and its subcommands.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return NewRootCommandWithFlags(genericclioptions.NewConfigFlags(true), streams)
}

// NewRootCommandWithFlags builds `kubectl kro` over the given connection
// flags, for callers (tests) that wrap the client configuration.
func NewRootCommandWithFlags(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{Config: flags, Streams: streams}
	cmd := &cobra.Command{
		Use:   "kubectl kro",
		Short: "Validate ResourceGraphDefinitions and explain kro instances",
		Long: `kubectl kro validates ResourceGraphDefinitions (offline for built-in kinds, through
the cluster for custom resources) and explains the instances kro-agent manages.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			// Makes cobra print "kubectl kro" in usage lines.
			cobra.CommandDisplayNameAnnotation: "kubectl kro",
		},
	}
	o.Config.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newValidateCommand(o), newTreeCommand(o), newExplainCommand(o), newWhyNotReadyCommand(o), newStatusCommand(o), newDryRunCommand(o))
	return cmd
}

// instanceCommand builds a command over one instance (KIND NAME): shell
// completion of both, -o in the given formats, and --color.
func instanceCommand(o *Options, use, short, long, formats string, output, color *string, run func(ctx context.Context, kind, name string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:               use,
		Short:             short,
		Long:              long,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeInstances(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), args[0], args[1])
		},
	}
	cmd.Flags().StringVarP(output, "output", "o", "", "output format: "+formats)
	addColorFlag(cmd, color)
	return cmd
}
