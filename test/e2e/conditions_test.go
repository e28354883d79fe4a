//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// queuesRGD declares its conditions as upstream kro v0.9 does: one per
// collection item, and one composed with a built-in condition.
const queuesRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: queues}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Queues
    spec: {names: "[]string"}
    status:
      conditions:
      - |
        ${queues.map(q, runtime.newCondition({
          type: 'Queue-' + q.data.queue + '-Ready',
          status: q.data.?ready.orValue('') == 'yes' ? 'True' : 'False',
          reason: 'QueueState',
          message: 'ready=' + q.data.?ready.orValue('')
        }))}
      - |
        ${runtime.newCondition({
          type: 'Serving',
          status: runtime.condition(schema, 'ResourcesReady').status == 'True' ? 'True' : 'False',
          reason: 'Resources' + runtime.condition(schema, 'ResourcesReady').status,
          message: ''
        })}
  resources:
  - id: queues
    forEach: [{name: "${schema.spec.names}"}]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${name}"}
      data: {queue: "${name}"}
`

func TestComputedConditions(t *testing.T) {
	const ns = "computed-conditions"
	queues := func(names ...string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Queues, metadata: {name: q, namespace: %s}, spec: {names: [%s]}}", ns, strings.Join(names, ", "))
	}
	conditionTypes := func(u *unstructured.Unstructured) string {
		var out []string
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			out = append(out, fmt.Sprintf("%s=%s", m["type"], m["status"]))
		}
		return strings.Join(out, " ")
	}
	f := features.New("conditions written as runtime.newCondition expressions").
		Assess("each queue and the composed condition are written beside the built-in ones", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, queuesRGD)
			c.waitRGDActive(t, "queues")
			c.apply(t, queues("a", "b"))
			c.waitState(t, "kro.run/v1alpha1", "Queues", ns, "q", v1alpha1.InstanceActive)
			// The status write that turns ACTIVE and the one that sees
			// ResourcesReady in Serving are the same.
			inst := c.mustGet(t, "kro.run/v1alpha1", "Queues", ns, "q")
			want := "InstanceManaged=True GraphResolved=True ResourcesReady=True Ready=True Queue-a-Ready=False Queue-b-Ready=False Serving=True"
			if got := conditionTypes(inst); got != want {
				t.Errorf("conditions: %s\nwant %s", got, want)
			}
			if s := condition(inst, "Serving"); s == nil || s.Reason != "ResourcesTrue" || s.ObservedGeneration != inst.GetGeneration() {
				t.Errorf("Serving = %+v", s)
			}
			if q := condition(inst, "Queue-a-Ready"); q == nil || q.Reason != "QueueState" || q.Message != "ready=" {
				t.Errorf("Queue-a-Ready = %+v", q)
			}
			if m := explainedMeanings(t, cfg, "queues", "q", ns)["Serving"]; !strings.Contains(m, "computed by an expression of the RGD") || !strings.Contains(m, "does not count toward Ready") {
				t.Errorf("explain-conditions: Serving means %q", m)
			}
			return ctx
		}).
		Assess("a change in a queue's ConfigMap turns its condition", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch := []byte(`{"data":{"ready":"yes"}}`)
			if _, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Patch(ctx, "q-a", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "operator"}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "Queue-a-Ready True", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Queues", ns, "q")
				q := condition(inst, "Queue-a-Ready")
				return q != nil && q.Status == metav1.ConditionTrue && q.Message == "ready=yes", conditionTypes(inst)
			})
			return ctx
		}).
		Assess("a queue dropped from the spec takes its condition with it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, queues("a"))
			eventually(t, 20*time.Second, "only queue a's condition", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Queues", ns, "q")
				got := conditionTypes(inst)
				return got == "InstanceManaged=True GraphResolved=True ResourcesReady=True Ready=True Queue-a-Ready=True Serving=True", got
			})
			return ctx
		}).
		Assess("a computed condition taking a built-in type is denied at admission", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			bad := strings.Replace(queuesRGD, "name: queues}", "name: queues-ready}", 1)
			bad = strings.Replace(bad, "kind: Queues", "kind: QueuesReady", 1)
			bad = strings.Replace(bad, "type: 'Serving'", "type: 'Ready'", 1)
			_, err := c.tryApply(t, bad)
			if err == nil || !strings.Contains(err.Error(), "spec.schema.status.conditions[1]") ||
				!strings.Contains(err.Error(), "Ready is a built-in condition type, which kro-agent derives itself") {
				t.Errorf("want a denial naming spec.schema.status.conditions[1], got %v", err)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
