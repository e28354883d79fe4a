//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// shardsRGD chains a ConfigMap, a collection of ConfigMaps, one per shard,
// and a Secret that reads the collection: creating, pruning and deleting
// an instance each take several steps in order, any of which a restart
// can cut short.
const shardsRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: shards}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Sharded
    spec:
      shards: "[]string"
    status:
      shards: ${shard.size()}
  resources:
    - id: config
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-config"}
        data: {count: "${string(size(schema.spec.shards))}"}
    - id: shard
      forEach:
        - s: ${schema.spec.shards}
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-shard-${s}"}
        data: {of: "${config.metadata.name}"}
    - id: summary
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}-summary"}
        stringData: {shards: "${shard.map(c, c.metadata.name).join(',')}"}
`

// TestKillingTheAgentRepeatedlyConverges stops the agent at many moments
// while instances are created, have their collections shrunk and grown,
// and are deleted (SPEC §11): once it runs again, every instance has
// exactly the objects its graph produces, once each, and nothing is left
// of the deleted ones.
func TestKillingTheAgentRepeatedlyConverges(t *testing.T) {
	const ns = "killed"
	f := features.New("an agent stopped at many moments and started again").
		Assess("converges with no duplicate and no orphan", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, shardsRGD)
			c.waitRGDActive(t, "shards")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Sharded", ns)

			want := map[string][]string{} // the live instances' shards
			set := func(name string, shards ...string) {
				want[name] = shards
				c.apply(t, fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: Sharded, metadata: {name: %s, namespace: %s}, spec: {shards: ["%s"]}}`, name, ns, strings.Join(shards, `", "`)))
			}
			remove := func(name string) {
				delete(want, name)
				c.delete(t, "kro.run/v1alpha1", "Sharded", ns, name)
			}
			// Each round changes the instances, lets the agent work for
			// a while, and stops it; the waits vary so that the stops
			// fall in different steps of the work.
			rounds := []struct {
				change func()
				run    time.Duration
			}{
				{func() {
					for i := range 6 {
						set(fmt.Sprintf("s%d", i), "a", "b", "c", "d")
					}
				}, 150 * time.Millisecond},
				{func() { set("s0", "a", "b"); set("s1", "a") }, 60 * time.Millisecond},
				{func() { remove("s2"); set("s3", "a", "b", "c", "d", "e", "f") }, 300 * time.Millisecond},
				{func() { set("s6", "x", "y") }, 20 * time.Millisecond},
				{func() { remove("s4"); set("s5", "d") }, 100 * time.Millisecond},
				{func() { set("s0", "a", "b", "c"); remove("s6") }, 250 * time.Millisecond},
				{func() { set("s1", "z"); set("s7", "a", "b") }, 40 * time.Millisecond},
				{func() { remove("s3"); set("s5", "a", "b", "c", "d") }, 500 * time.Millisecond},
			}
			for i, r := range rounds {
				before := writesIn(ns)
				r.change()
				time.Sleep(r.run)
				stopAgentNow(t)
				t.Logf("round %d: the agent stopped after %s and %d writes", i, r.run, writesIn(ns)-before)
				// Changes made while it is down wait for the next round.
				startAgent(t, cfg)
			}

			for name, shards := range want {
				// The last round's change may not have been seen yet.
				u := c.waitState(t, "kro.run/v1alpha1", "Sharded", ns, name, v1alpha1.InstanceActive)
				if got, _, _ := unstructured.NestedInt64(u.Object, "status", "shards"); got != int64(len(shards)) {
					t.Errorf("%s: status.shards %d, want %d", name, got, len(shards))
				}
			}
			eventually(t, 60*time.Second, "the deleted instances to be gone", func() (bool, string) {
				list, err := c.resource(t, "kro.run/v1alpha1", "Sharded").Namespace(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err.Error()
				}
				var names []string
				for _, u := range list.Items {
					names = append(names, u.GetName())
				}
				slices.Sort(names)
				return len(names) == len(want), fmt.Sprintf("instances %v", names)
			})

			// Every managed object, once: what the live instances' graphs
			// produce, labelled for the node and item that produce it.
			expected := sets.New[string]()
			for name, shards := range want {
				expected.Insert("ConfigMap/"+name+"-config", "Secret/"+name+"-summary")
				for _, s := range shards {
					expected.Insert("ConfigMap/" + name + "-shard-" + s)
				}
			}
			eventually(t, 30*time.Second, "the objects of the live instances alone", func() (bool, string) {
				found := sets.New[string]()
				var wrong []string
				for _, kind := range []string{"ConfigMap", "Secret"} {
					list, err := c.resource(t, "v1", kind).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelOwned + "=true"})
					if err != nil {
						return false, err.Error()
					}
					for _, o := range list.Items {
						key := kind + "/" + o.GetName()
						found.Insert(key)
						owner := o.GetLabels()[v1alpha1.LabelInstanceName]
						if _, live := want[owner]; !live || !strings.HasPrefix(o.GetName(), owner+"-") {
							wrong = append(wrong, key+" of "+owner)
						}
					}
				}
				missing, extra := sets.List(expected.Difference(found)), sets.List(found.Difference(expected))
				return len(missing) == 0 && len(extra) == 0 && len(wrong) == 0,
					fmt.Sprintf("missing %v, left over %v, labelled for another instance %v", missing, extra, wrong)
			})
			for name, shards := range want {
				secret := c.mustGet(t, "v1", "Secret", ns, name+"-summary")
				names := make([]string, len(shards))
				for i, s := range shards {
					names[i] = name + "-shard-" + s
				}
				encoded, _, _ := unstructured.NestedString(secret.Object, "data", "shards")
				decoded, _ := base64.StdEncoding.DecodeString(encoded)
				if got, want := string(decoded), strings.Join(names, ","); got != want {
					t.Errorf("%s's summary lists %q, want %q", name, got, want)
				}
			}
			for name := range want {
				c.delete(t, "kro.run/v1alpha1", "Sharded", ns, name)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
