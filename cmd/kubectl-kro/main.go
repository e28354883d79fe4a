// Command kubectl-kro is the kubectl plugin for kro-agent: `kubectl kro ...`.
package main

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kro-agent/kro-agent/pkg/plugin"
)

func main() {
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		// A failed validation or diagnosis has printed its report already.
		if !errors.Is(err, plugin.ErrInvalid) && !errors.Is(err, plugin.ErrNotReady) {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}
