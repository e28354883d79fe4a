// Package plugin implements `kubectl kro`, the kubectl plugin that explains
// kro instances and validates ResourceGraphDefinitions. Each command is a
// small pipeline: read input, compute a result, print it as text or as
// -o json|yaml.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

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
	// Help, usage and shell completion are written where the commands write.
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	o.Config.AddFlags(cmd.PersistentFlags())
	completeConnectionFlags(cmd, o)
	cmd.AddCommand(newValidateCommand(o), newTreeCommand(o), newExplainCommand(o), newWhyNotReadyCommand(o), newStatusCommand(o), newDryRunCommand(o), newVersionCommand(o))
	return cmd
}

// instanceCommand builds a command over one instance (KIND NAME or
// KIND/NAME, or -f FILE as kubectl get takes it), or also an RGD (rgd NAME)
// where takesRGD: shell completion of both, -o in the given formats, and
// --color.
func instanceCommand(o *Options, use, short, long string, takesRGD bool, formats []string, output *printFlags, color *string, run func(ctx context.Context, kind, name string) error) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(_ *cobra.Command, args []string) error {
			if file != "" {
				return notBoth(args, file)
			}
			_, _, err := instanceArgs(args)
			if errors.As(err, new(*nameMissingError)) {
				return nil // answered with the names there are, below
			}
			return err
		},
		ValidArgsFunction: completeInstances(o, takesRGD),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				kind, name, err := o.namedInFile(cmd, file)
				if err != nil {
					return err
				}
				return run(cmd.Context(), kind, name)
			}
			kind, name, err := instanceArgs(args)
			if missing := (*nameMissingError)(nil); errors.As(err, &missing) {
				return o.whichInstance(cmd.Context(), cmd.Name(), takesRGD, missing)
			}
			if err != nil {
				return err
			}
			return run(cmd.Context(), kind, name)
		},
	}
	what := "the instance"
	if takesRGD {
		what = "the instance or RGD"
	}
	addNamingFileFlag(cmd, &file, what)
	addOutputFlag(cmd, output, "", formats...)
	addColorFlag(cmd, color)
	return cmd
}

// addNamingFileFlag registers -f on a command about one object (what),
// which names it by the file it was applied from, as kubectl get -f.
func addNamingFileFlag(cmd *cobra.Command, file *string, what string) {
	cmd.Flags().StringVarP(file, "filename", "f", "", "file or URL that holds "+what+", as applied (its kind, name and namespace are read); - reads standard input")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// notBoth refuses an object named both by arguments and with -f file.
func notBoth(args []string, file string) error {
	if len(args) > 0 {
		return fmt.Errorf("give the instance as KIND NAME or with -f, not both (got %s and -f %s)", strings.Join(args, " "), file)
	}
	return nil
}

// namedInFile reads the one object file holds, as kubectl get -f does: the
// KIND (kind, version and group, so that no other kind of its name is
// meant) and NAME that name it, and its namespace, which the command then
// looks in. A namespace given with -n that is not the file's is an error,
// as kubectl makes it, rather than a look in the wrong place.
func (o *Options) namedInFile(cmd *cobra.Command, file string) (kind, name string, err error) {
	if info, err := os.Stat(file); err == nil && info.IsDir() {
		return "", "", fmt.Errorf("%s is a directory: -f takes the file of one object, or give KIND NAME", file)
	}
	data, err := readInput(file, o.Streams.In)
	if err != nil {
		return "", "", err
	}
	objs, err := documents(file, data)
	if err != nil {
		return "", "", err
	}
	if len(objs) != 1 {
		return "", "", fmt.Errorf("%s holds %d objects: -f takes the file of one, or give KIND NAME", file, len(objs))
	}
	obj := objs[0]
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Kind == "" || gvk.Version == "":
		return "", "", fmt.Errorf("%s: the object has no kind or apiVersion", file)
	case obj.GetName() == "":
		return "", "", fmt.Errorf("%s: %s has no metadata.name (one made from generateName is found by KIND NAME)", file, gvk.Kind)
	}
	kind = gvk.Kind
	if gvk.Group != "" {
		kind += "." + gvk.Version + "." + gvk.Group
	}
	if ns := obj.GetNamespace(); ns != "" {
		flag := cmd.Flag("namespace")
		if flag != nil && flag.Changed && flag.Value.String() != ns {
			return "", "", fmt.Errorf("%s puts %s %s in namespace %s, but -n names %s: leave -n out, or give -n %s", file, gvk.Kind, obj.GetName(), ns, flag.Value.String(), ns)
		}
		if o.Config.Namespace == nil {
			o.Config.Namespace = new(string)
		}
		*o.Config.Namespace = ns
	}
	return kind, obj.GetName(), nil
}

// nameMissingError is a KIND given without the NAME of an instance.
type nameMissingError struct {
	kind string
	// names are the kind's objects in the namespace, when they were
	// listed; more tells that there are others beside them.
	names  []string
	listed bool
	more   bool
	// command and namespace say how to name one, and where they are.
	command, namespace string
}

// namespaceWords names where objects are: namespace NAME, or the cluster
// for cluster-scoped ones (namespace "").
func namespaceWords(namespace string) string {
	if namespace == "" {
		return "the cluster"
	}
	return "namespace " + namespace
}

func (e *nameMissingError) Error() string {
	ask := "which " + e.kind + "?"
	where := namespaceWords(e.namespace)
	switch {
	case !e.listed:
		return fmt.Sprintf("%s give KIND NAME or KIND/NAME, such as %s demo", ask, e.kind)
	case len(e.names) == 0 && e.namespace == "":
		return fmt.Sprintf("%s %s has none to name", ask, where)
	case len(e.names) == 0:
		return fmt.Sprintf("%s %s has none (kubectl kro status %s -A lists those of every namespace)", ask, where, e.kind)
	}
	names := strings.Join(e.names, ", ")
	if e.more {
		names += ", and more: kubectl kro status " + e.kind + " lists them"
	}
	return fmt.Sprintf("%s give its name too, as in kubectl kro %s %s %s (%s has %s)", ask, e.command, e.kind, e.names[0], where, names)
}

// instanceArgs reads one instance from the arguments the way kubectl takes
// an object: KIND NAME, or KIND/NAME as one argument.
func instanceArgs(args []string) (kind, name string, err error) {
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
		if kind == "" || name == "" || strings.Contains(name, "/") {
			return "", "", fmt.Errorf("%q is not KIND/NAME, such as webapp/demo", args[0])
		}
		return kind, name, nil
	case len(args) == 2:
		if strings.Contains(args[0], "/") || strings.Contains(args[1], "/") {
			return "", "", fmt.Errorf("%q %q: give the instance as KIND NAME or as KIND/NAME, not both", args[0], args[1])
		}
		return args[0], args[1], nil
	case len(args) == 1:
		return "", "", &nameMissingError{kind: args[0]}
	case len(args) == 0:
		return "", "", errors.New("which instance? give KIND NAME or KIND/NAME, such as webapp demo")
	}
	return "", "", fmt.Errorf("one instance at a time: got %d arguments, want KIND NAME or KIND/NAME", len(args))
}
