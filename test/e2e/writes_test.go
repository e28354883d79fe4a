//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// chainRGD is SPEC §10's agent-bound workload: three chained objects.
const chainRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: chain}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Chain
    spec: {value: string | default=v}
  resources:
  - id: first
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-1"}, data: {v: "${schema.spec.value}"}}
  - id: second
    template: {apiVersion: v1, kind: Secret, metadata: {name: "${schema.metadata.name}-2"}, stringData: {v: "${first.data.v}"}}
  - id: third
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-3"}, data: {from: "${second.metadata.name}"}}
`

func TestWriteBudget(t *testing.T) {
	const ns = "writes"
	const n = 10
	f := features.New("the agent's writes: one apply per resource and one status per instance to ACTIVE, none while nothing changes").
		Assess("the budget holds", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, chainRGD)
			c.waitRGDActive(t, "chain")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Chain", ns)
			// Writes are counted per namespace (see countWrites), so other
			// tests' instances sharing this agent do not count.
			for i := 0; i < n; i++ {
				c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Chain, metadata: {name: c%d, namespace: %s}}", i, ns))
			}
			for i := 0; i < n; i++ {
				c.waitState(t, "kro.run/v1alpha1", "Chain", ns, fmt.Sprintf("c%d", i), v1alpha1.InstanceActive)
			}
			// Let in-flight reconciles (triggered by our own writes) settle.
			time.Sleep(2 * time.Second)
			perInstance := float64(writesIn(ns)) / n
			t.Logf("writes per instance on the way to ACTIVE: %.1f", perInstance)
			// Labels, ApplySet annotations and finalizer come with the
			// create, from the admission webhook.
			if perInstance > 4 {
				t.Errorf("%.1f writes per instance; the budget is 4 (one apply per resource, one status); the writes:\n%s",
					perInstance, strings.Join(writeRequestsIn(ns), "\n"))
			}
			quiet := writesIn(ns)
			time.Sleep(5 * time.Second)
			if got := writeRequestsIn(ns)[quiet:]; len(got) != 0 {
				t.Errorf("%d writes while nothing changed; want none:\n%s", len(got), strings.Join(got, "\n"))
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
