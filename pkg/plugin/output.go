package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// addOutputFlag adds -o/--output with the formats a command prints, offers
// them to shell completion, and refuses any other before the command
// contacts the cluster. usage describes the formats when they differ in
// more than encoding.
func addOutputFlag(cmd *cobra.Command, output *string, usage string, formats ...string) {
	list := strings.Join(formats[:len(formats)-1], ", ") + " or " + formats[len(formats)-1]
	if usage == "" {
		usage = "output format: " + list
	}
	cmd.Flags().StringVarP(output, "output", "o", "", usage)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if *output != "" && !slices.Contains(formats, *output) {
			return fmt.Errorf("unknown output format %q: use %s", *output, list)
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}

// printObject prints v as -o json or -o yaml.
func printObject(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", format)
}
