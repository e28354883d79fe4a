//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

// Every example works as shipped, with the agent running as the roles of
// manifests/agent grant it: whatever else its directory holds (a grant of
// the RGD's kinds, an object it reads), its RGD, then its instance, which
// comes up ACTIVE. examples/regional needs a second cluster; the placement
// test registers one.
func TestExamples(t *testing.T) {
	const ns = "examples"
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rgds, err := filepath.Glob(filepath.Join(root, "examples", "*", "rgd.yaml"))
	if err != nil || len(rgds) < 4 {
		t.Fatalf("examples with an RGD: %v (%v)", rgds, err)
	}
	f := features.New("every example comes up ACTIVE as shipped").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			agentWithShippedRoles(ctx, t, cfg, ns)
			return ctx
		}).
		Teardown(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The next test starts the suite's agent again.
			stopAgentNow(t)
			return ctx
		})
	inNamespace := func(doc string) string {
		return strings.ReplaceAll(doc, "  namespace: default\n", "  namespace: "+ns+"\n")
	}
	for _, rgdFile := range rgds {
		dir := filepath.Dir(rgdFile)
		name := filepath.Base(dir)
		f = f.Assess(name, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			others, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range others {
				if base := filepath.Base(file); !slices.Contains([]string{"rgd.yaml", "instance.yaml"}, base) {
					b, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					c.apply(t, inNamespace(string(b)))
				}
			}
			rgd := c.apply(t, example(t, name, "rgd.yaml"))
			c.waitRGDActive(t, rgd.GetName())
			inst := c.apply(t, inNamespace(example(t, name, "instance.yaml")))
			c.waitState(t, inst.GetAPIVersion(), inst.GetKind(), ns, inst.GetName(), v1alpha1.InstanceActive)
			return ctx
		})
	}
	testenv.Test(t, f.Feature())
}
