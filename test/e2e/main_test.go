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
	testenv.Setup(localcluster.Create(name), installCRDs)
	testenv.Finish(stopAgent, localcluster.Destroy(name))
	os.Exit(testenv.Run(m))
}

// installCRDs applies the CRDs from manifests/: ResourceGraphDefinition
// and Cluster.
func installCRDs(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return ctx, err
	}
	for _, name := range []string{"kro.run_resourcegraphdefinitions.yaml", "agent.kro.run_clusters.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, "manifests", "crds", name))
		if err != nil {
			return ctx, err
		}
		if err := applyYAML(ctx, cfg, string(raw)); err != nil {
			return ctx, err
		}
	}
	return ctx, localcluster.WaitEstablished(ctx, cfg.Client().RESTConfig(), "clusters.agent.kro.run")
}
