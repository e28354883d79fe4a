//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/plugin"
)

// toldRGD: a ConfigMap whose data key the instance chooses (the API server
// refuses one with a space), a collection to prune, and a condition of
// negative polarity.
const toldRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: told}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Told
    spec:
      names: '[]string | default=["a", "b"]'
      key: string | default=good
      pressure: boolean | default=true
    status:
      conditions:
      - type: Pressure
        status: ${schema.spec.pressure}
        reason: PressureChecked
        polarity: Negative
        countsTowardReady: false
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
      data: '${ {schema.spec.key: "value"} }'
  - id: copies
    forEach: [{name: "${schema.spec.names}"}]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${name}"}
`

// toldGatedRGD: a ConfigMap whose data key the instance chooses, with a
// value read from the ConfigMap "gate", which the graph waits for.
const toldGatedRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: told-gated}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ToldGated
    spec:
      key: string | default=good
  resources:
  - id: gate
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: gate}
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
      data: '${ {schema.spec.key: gate.data.value} }'
`

// eventsAbout lists the Events of a reason about the object name, whose
// Events are in ns ("default" for a cluster-scoped one).
func eventsAbout(t *testing.T, c *clients, ns, name, reason string) []unstructured.Unstructured {
	t.Helper()
	list, err := c.resource(t, "events.k8s.io/v1", "Event").Namespace(ns).List(context.Background(),
		metav1.ListOptions{FieldSelector: "regarding.name=" + name + ",reason=" + reason})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// The events API folds the Events of one reason about one version of an
// object into a series, whatever their notes: what `kubectl describe`
// shows is right only if each piece of news is one Event of its own.
func TestEvents(t *testing.T) {
	const ns = "told"
	events := func(t *testing.T, c *clients, reason string) []unstructured.Unstructured {
		t.Helper()
		return eventsAbout(t, c, ns, "t1", reason)
	}
	notes := func(items []unstructured.Unstructured) string {
		var out []string
		for _, e := range items {
			count, _, _ := unstructured.NestedInt64(e.Object, "series", "count")
			out = append(out, fmt.Sprintf("%q (series count %d)", e.Object["note"], count))
		}
		return strings.Join(out, ", ")
	}
	patch := func(t *testing.T, c *clients, spec string) {
		t.Helper()
		c.patch(t, "kro.run/v1alpha1", "Told", ns, "t1", `{"spec":`+spec+`}`)
	}
	f := features.New("each piece of news is told by one Event").
		Assess("a negative-polarity condition warns when it turns True, not when it clears", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, toldRGD)
			c.waitRGDActive(t, "told")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Told, metadata: {name: t1, namespace: %s}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Told", ns, "t1", v1alpha1.InstanceActive)
			eventually(t, 10*time.Second, "a Warning that Pressure is True", func() (bool, string) {
				got := events(t, c, "PressureChecked")
				return len(got) == 1 && got[0].Object["type"] == "Warning" && got[0].Object["note"] == "Pressure is True", notes(got)
			})
			patch(t, c, `{"pressure": false}`)
			eventually(t, 10*time.Second, "Pressure to clear", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "Told", ns, "t1")
				p := condition(u, "Pressure")
				return p != nil && p.Status == metav1.ConditionFalse, conditionSummary(u)
			})
			never(t, 3*time.Second, "an Event for Pressure clearing", func() bool {
				return len(events(t, c, "PressureChecked")) != 1
			})
			return ctx
		}).
		Assess("pruning two objects in one pass tells of each", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch(t, c, `{"names": []}`)
			eventually(t, 20*time.Second, "a Pruned Event for each ConfigMap of the collection", func() (bool, string) {
				got := events(t, c, "Pruned")
				var related []string
				for _, e := range got {
					name, _, _ := unstructured.NestedString(e.Object, "related", "name")
					related = append(related, name)
				}
				slices.Sort(related)
				return slices.Equal(related, []string{"t1-a", "t1-b"}) &&
					strings.Contains(notes(got), "deleted ConfigMap told/t1-a (resource copies)") &&
					strings.Contains(notes(got), "deleted ConfigMap told/t1-b (resource copies)"), notes(got)
			})
			return ctx
		}).
		Assess("pruning many objects of one resource tells of them at once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch(t, c, `{"names": ["c", "d", "e", "f", "g", "h", "i"]}`)
			eventually(t, 20*time.Second, "the seven ConfigMaps", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "t1-i")
				return err == nil, fmt.Sprint(err)
			})
			patch(t, c, `{"names": []}`)
			eventually(t, 20*time.Second, "one Pruned Event for the seven", func() (bool, string) {
				got := events(t, c, "Pruned")
				return len(got) == 3 && strings.Contains(notes(got),
					"deleted 7 ConfigMap objects (resource copies) in the local cluster, which the graph no longer produces: told/t1-c, told/t1-d, told/t1-e, told/t1-f, told/t1-g and 2 more"), notes(got)
			})
			never(t, 2*time.Second, "an Event for each of them", func() bool {
				return len(events(t, c, "Pruned")) != 3
			})
			return ctx
		}).
		Assess("a pass that finds what was pruned still in its cache neither deletes it again nor tells more", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch(t, c, `{"names": ["x"]}`)
			inst := c.waitState(t, "kro.run/v1alpha1", "Told", ns, "t1", v1alpha1.InstanceActive)
			// The agent's informers do not see t1-x go: the next pass
			// finds it there still, and is to know it deleted it.
			release := holdWatches("/configmaps")
			defer release()
			patch(t, c, `{"names": []}`)
			pruned := func() []unstructured.Unstructured {
				return slices.DeleteFunc(events(t, c, "Pruned"), func(e unstructured.Unstructured) bool {
					return !strings.Contains(fmt.Sprint(e.Object["note"]), "deleted ConfigMap told/t1-x ")
				})
			}
			eventually(t, 20*time.Second, "a Pruned Event for t1-x", func() (bool, string) {
				return len(pruned()) == 1, notes(pruned())
			})
			// A delete that finds t1-x gone is counted as an error.
			refusedBefore := writeErrors(t, "delete")
			pressure, found, _ := unstructured.NestedBool(inst.Object, "spec", "pressure")
			patch(t, c, fmt.Sprintf(`{"pressure": %t}`, found && !pressure))
			eventually(t, 20*time.Second, "the instance's status to follow its spec", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "Told", ns, "t1")
				p := condition(u, "Pressure")
				return p != nil && p.ObservedGeneration == u.GetGeneration(), conditionSummary(u)
			})
			if n := writeErrors(t, "delete") - refusedBefore; n > 0 {
				t.Errorf("t1-x, pruned once, was deleted again %v times, finding it gone", n)
			}
			if got := pruned(); len(got) != 1 {
				t.Errorf("t1-x, pruned once, is told of %d times: %s", len(got), notes(got))
			} else if count, _, _ := unstructured.NestedInt64(got[0].Object, "series", "count"); count > 1 {
				t.Errorf("t1-x, pruned once, is told of in a series of %d", count)
			}
			return ctx
		}).
		Assess("a refused apply is told once, however often it is retried", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch(t, c, `{"key": "bad key"}`)
			c.waitState(t, "kro.run/v1alpha1", "Told", ns, "t1", v1alpha1.InstanceError)
			// The refusal is retried with backoff meanwhile, a dozen times
			// and more; neither the retries nor the conditions it turned
			// False (ResourcesReady, Ready) tell it again.
			eventually(t, 10*time.Second, "the refusal's Event", func() (bool, string) {
				got := events(t, c, "ApplyFailed")
				return len(got) > 0, notes(got)
			})
			never(t, 3*time.Second, "the refusal told twice", func() bool {
				got := events(t, c, "ApplyFailed")
				_, series := got[0].Object["series"]
				return len(got) != 1 || series
			})
			got := events(t, c, "ApplyFailed")
			if note := fmt.Sprint(got[0].Object["note"]); got[0].Object["type"] != "Warning" || !strings.HasPrefix(note, `applying ConfigMap told/t1 (resource config) in the local cluster: ConfigMap "t1" is invalid: data[bad key]`) {
				t.Errorf("the refusal's Event: %s", notes(got))
			}
			patch(t, c, `{"key": "good"}`)
			c.waitState(t, "kro.run/v1alpha1", "Told", ns, "t1", v1alpha1.InstanceActive)
			eventually(t, 10*time.Second, "a Normal Event that Ready is True again", func() (bool, string) {
				got := events(t, c, "Ready")
				return len(got) == 1 && got[0].Object["type"] == "Normal" && got[0].Object["note"] == "Ready is True", notes(got)
			})
			return ctx
		}).
		Assess("trouble that ends by way of work in progress is told as over, once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			gate := fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: gate, namespace: %s}, data: {value: open}}", ns)
			c.apply(t, gate)
			c.apply(t, toldGatedRGD)
			c.waitRGDActive(t, "told-gated")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ToldGated, metadata: {name: g1, namespace: %s}, spec: {key: bad key}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", v1alpha1.InstanceError)
			// The fix goes in while the gate is closed: Ready goes from
			// False to Unknown, waiting, and only then to True.
			c.delete(t, "v1", "ConfigMap", ns, "gate")
			c.patch(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", `{"spec":{"key":"good"}}`)
			c.waitState(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", v1alpha1.InstanceInProgress)
			if got := eventsAbout(t, c, ns, "g1", "Ready"); len(got) != 0 {
				t.Fatalf("Ready told before it is True: %s", notes(got))
			}
			c.apply(t, gate)
			c.waitState(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", v1alpha1.InstanceActive)
			eventually(t, 10*time.Second, "a Normal Event that Ready is True again", func() (bool, string) {
				got := eventsAbout(t, c, ns, "g1", "Ready")
				return len(got) == 1 && got[0].Object["type"] == "Normal" && got[0].Object["note"] == "Ready is True", notes(got)
			})
			// Waiting again with nothing wrong, and done: a rollout, not
			// news.
			c.delete(t, "v1", "ConfigMap", ns, "gate")
			c.waitState(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", v1alpha1.InstanceInProgress)
			c.apply(t, gate)
			c.waitState(t, "kro.run/v1alpha1", "ToldGated", ns, "g1", v1alpha1.InstanceActive)
			never(t, 3*time.Second, "Ready told again after a rollout", func() bool {
				got := eventsAbout(t, c, ns, "g1", "Ready")
				_, series := got[0].Object["series"]
				return len(got) != 1 || series
			})
			return ctx
		}).
		Assess("an RGD that stops being Active says so, and when it is back", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: told-sprockets}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ToldSprocket
  resources:
  - id: sprocket
    template:
      apiVersion: told.example.dev/v1
      kind: Sprocket
      metadata: {name: "${schema.metadata.name}"}
`
			crd := exampleCRD("Sprocket", "told.example.dev")
			c.apply(t, crd)
			eventually(t, 30*time.Second, "the RGD using Sprocket to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, rgd)
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "told-sprockets")
			// Gone before it is applied again: applied while its deletion
			// is under way, it would be deleted all the same.
			c.deleteCRD(t, "sprockets.told.example.dev")
			// What the message says depends on how far the deletion got
			// (being deleted, its schema taken down, gone); that the kind
			// of resource sprocket is the trouble, it says in any case.
			eventually(t, 30*time.Second, "a Warning that the graph is no longer accepted", func() (bool, string) {
				got := eventsAbout(t, c, "default", "told-sprockets", v1alpha1.ReasonInvalidResourceGraph)
				return len(got) == 1 && got[0].Object["type"] == "Warning" &&
					strings.HasPrefix(fmt.Sprint(got[0].Object["note"]), "GraphAccepted is False: spec.resources[sprocket].template.kind: "), notes(got)
			})
			// why-not-ready rgd shows them, as it does an instance's.
			out, err := kro(t, cfg, nil, "why-not-ready", "rgd", "told-sprockets")
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "Recent events:\n  Warning InvalidResourceGraph: GraphAccepted is False: spec.resources[sprocket].template.kind: ") {
				t.Errorf("why-not-ready rgd told-sprockets: %v\n%s", err, out)
			}
			c.apply(t, crd)
			c.waitRGDActive(t, "told-sprockets")
			eventually(t, 10*time.Second, "a Normal Event that the RGD is Ready again", func() (bool, string) {
				got := eventsAbout(t, c, "default", "told-sprockets", "Ready")
				return len(got) == 1 && got[0].Object["type"] == "Normal" && got[0].Object["note"] == "Ready is True", notes(got)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
