// Command kubectl-kro is the kubectl plugin for kro-agent: `kubectl kro ...`.
package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kro-agent/kro-agent/pkg/plugin"
)

func main() {
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	// kubectl's -v: at 6 client-go logs every request the command makes
	// and how long it took, at 8 their bodies too. It is set here, on the
	// process's one logger, rather than in the command tests build.
	logFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(logFlags)
	cmd.PersistentFlags().AddGoFlag(logFlags.Lookup("v"))
	if err := cmd.Execute(); err != nil {
		// A failed validation or diagnosis has printed its report already.
		if !errors.Is(err, plugin.ErrInvalid) && !errors.Is(err, plugin.ErrNotReady) {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}
