//go:build e2e

// Package e2e runs kro-agent's end-to-end tests against a real local
// Kubernetes (see hack/cluster), created once for the test binary, with the
// agent running in-process so tests can stop and restart it.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/kro-agent/kro-agent/test/localcluster"
)

var testenv env.Environment

func TestMain(m *testing.M) {
	// A name of its own, so a demo cluster left running is not touched.
	name := fmt.Sprintf("kro-agent-e2e-%d", os.Getpid())
	testenv = env.NewWithConfig(envconf.New())
	testenv.Setup(localcluster.Create(name), installRGDCRD)
	testenv.Finish(stopAgent, localcluster.Destroy(name))
	os.Exit(testenv.Run(m))
}

// installRGDCRD applies the ResourceGraphDefinition CRD from manifests/.
func installRGDCRD(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return ctx, err
	}
	raw, err := os.ReadFile(filepath.Join(root, "manifests", "crds", "kro.run_resourcegraphdefinitions.yaml"))
	if err != nil {
		return ctx, err
	}
	return ctx, applyYAML(ctx, cfg, string(raw))
}
