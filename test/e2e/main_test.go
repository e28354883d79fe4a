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

// kubeCacheDir is where kubectl and kubectl kro cache discovery in the
// tests. kubectl's own cache (~/.kube/cache) is keyed by the API server's
// address, which a demo cluster may have had before the test cluster got
// it: its kinds, with their scopes, would be taken for the test cluster's.
var kubeCacheDir string

// clusterPrefix begins the names of the test binary's clusters, followed
// by its pid: a demo cluster left running is not touched, nor the clusters
// of another test binary running beside this one, and those of one that is
// gone are found (localcluster.DeleteOrphans).
const clusterPrefix = "kro-agent-e2e-"

func TestMain(m *testing.M) {
	name := fmt.Sprintf("%s%d", clusterPrefix, os.Getpid())
	dir, err := os.MkdirTemp("", name+"-kube-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kubeCacheDir = dir
	testenv = env.NewWithConfig(envconf.New())
	testenv.Setup(localcluster.DeleteOrphans(clusterPrefix), localcluster.Create(name), installCRDs)
	testenv.Finish(stopAgent, localcluster.Destroy(name))
	code := testenv.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
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
