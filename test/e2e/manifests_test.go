//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/test/localcluster"
)

func TestManifestsApplyServerSide(t *testing.T) {
	f := features.New("manifests/").
		Assess("kubectl apply --dry-run=server -k manifests/ passes", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			bin, err := localcluster.BinDir(ctx)
			if err != nil {
				t.Fatal(err)
			}
			root, err := localcluster.RepoRoot()
			if err != nil {
				t.Fatal(err)
			}
			// A server-side dry run cannot place objects in a namespace
			// that exists only in the same dry run, so it is made first.
			c := newClients(t, cfg)
			namespace(t, c, "kro-system")
			// An in-process agent from another test registers the same
			// admission objects in local mode (clientConfig.url); a real
			// installation never has those, so check against a cluster
			// without them.
			stopAgentNow(t)
			defer startAgent(t, cfg)
			for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
				c.delete(t, "admissionregistration.k8s.io/v1", kind, "", "kro-agent")
			}
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", cfg.KubeconfigFile(), "--cache-dir", kubeCacheDir,
				"apply", "--dry-run=server", "-k", filepath.Join(root, "manifests"))
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl apply --dry-run=server -k manifests/: %v\n%s", err, out.String())
			}
			for _, want := range []string{"deployment.apps/kro-agent", "poddisruptionbudget.policy/kro-agent", "clusterrole.rbac.authorization.k8s.io/kro-agent-managed-resources", "customresourcedefinition.apiextensions.k8s.io/resourcegraphdefinitions.kro.run",
				"validatingwebhookconfiguration.admissionregistration.k8s.io/kro-agent", "mutatingwebhookconfiguration.admissionregistration.k8s.io/kro-agent", "validatingadmissionpolicy.admissionregistration.k8s.io/kro-agent-ownership-labels",
				"validatingadmissionpolicy.admissionregistration.k8s.io/kro-agent-no-takeover"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %s:\n%s", want, out.String())
				}
			}

			// An overlay of one's own with the crd-deletion component.
			overlay := t.TempDir()
			base, err := filepath.Rel(overlay, filepath.Join(root, "manifests"))
			if err != nil {
				t.Fatal(err)
			}
			kustomization := fmt.Sprintf("resources: [%s]\ncomponents: [%s]\n", base, filepath.Join(base, "components", "crd-deletion"))
			if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			cmd = exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", cfg.KubeconfigFile(), "--cache-dir", kubeCacheDir,
				"apply", "--dry-run=server", "-o", "yaml", "-k", overlay)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl apply --dry-run=server -k with components/crd-deletion: %v\n%s", err, out.String())
			}
			for _, want := range []string{"- --allow-crd-deletion", "name: kro-agent-crd-deletion"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("with components/crd-deletion, the output lacks %q", want)
				}
			}
			return ctx
		}).
		Assess("the agent's aggregated role takes the roles written for kro's controller", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			root, err := localcluster.RepoRoot()
			if err != nil {
				t.Fatal(err)
			}
			rbac, err := os.ReadFile(filepath.Join(root, "manifests", "agent", "rbac.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			c := newClients(t, cfg)
			var aggregated string
			for _, doc := range strings.Split(string(rbac), "\n---\n") {
				if strings.Contains(doc, "name: kro-agent-managed-resources") && strings.Contains(doc, "aggregationRule:") {
					aggregated = doc
				}
			}
			if aggregated == "" {
				t.Fatal("manifests/agent/rbac.yaml has no ClusterRole kro-agent-managed-resources")
			}
			c.apply(t, aggregated)
			// As kro's documentation has a platform team grant its
			// controller a kind in aggregation mode.
			c.apply(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: "kro:controller:foos", labels: {rbac.kro.run/aggregate-to-controller: "true"}}, rules: [{apiGroups: [kro.run], resources: [foos], verbs: ["*"]}]}`)
			eventually(t, 30*time.Second, "the role for kro's controller to be aggregated into kro-agent-managed-resources", func() (bool, string) {
				rules := fmt.Sprint(c.mustGet(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "kro-agent-managed-resources").Object["rules"])
				return strings.Contains(rules, "foos"), rules
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
