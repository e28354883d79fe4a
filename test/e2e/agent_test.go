//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/plugin"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

func example(t testing.TB, name, file string) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func namespace(t testing.TB, c *clients, name string) {
	t.Helper()
	c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: %s}}", name))
}

func webapp(ns, name string, extra string) string {
	return fmt.Sprintf(`
apiVersion: kro.run/v1alpha1
kind: WebApp
metadata: {name: %s, namespace: %s, labels: {team: payments}}
spec: {name: %s%s}
`, name, ns, name, extra)
}

func TestWebAppLifecycle(t *testing.T) {
	const ns = "lifecycle"
	f := features.New("a WebApp instance: create, labels, drift, update, includeWhen, deletion").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			return ctx
		}).
		Assess("the instance becomes ACTIVE with every resource and projected status", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, webapp(ns, "shop", ", replicas: 2"))
			inst := c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "shop", v1alpha1.InstanceActive)
			for _, cond := range []string{"Ready", "InstanceManaged", "GraphResolved", "ResourcesReady"} {
				if got := condition(inst, cond); got == nil || got.Status != metav1.ConditionTrue {
					t.Errorf("condition %s = %+v, want True", cond, got)
				}
			}
			if got, _, _ := unstructured.NestedInt64(inst.Object, "status", "observedGeneration"); got != inst.GetGeneration() {
				t.Errorf("status.observedGeneration = %d, want the generation, %d", got, inst.GetGeneration())
			}
			if got, _, _ := unstructured.NestedInt64(inst.Object, "status", "availableReplicas"); got != 2 {
				t.Errorf("status.availableReplicas = %d, want 2", got)
			}
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "url"); got != "http://shop.lifecycle.svc:80" {
				t.Errorf("status.url = %q", got)
			}
			c.mustGet(t, "v1", "ConfigMap", ns, "shop-config")
			c.mustGet(t, "v1", "Service", ns, "shop")
			if _, err := c.get(t, "networking.k8s.io/v1", "Ingress", ns, "shop"); err == nil {
				t.Error("ingress exists although includeWhen is false")
			}
			// Counted by state for alerts and dashboards, from the
			// informer, which may be a moment behind the status read.
			eventually(t, 10*time.Second, "kro_agent_instances to count the instance as ACTIVE", func() (bool, string) {
				n, ok := gauge(t, "kro_agent_instances", map[string]string{"rgd": "webapp", "kind": "WebApp", "state": "ACTIVE"})
				return ok && n >= 1, fmt.Sprintf("%v (found: %v)", n, ok)
			})
			return ctx
		}).
		Assess("labels and annotations are exactly seed 001's, and no owner references", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
			rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "webapp")
			id := ownership.Instance{GVK: inst.GroupVersionKind(), Name: "shop", Namespace: ns, UID: string(inst.GetUID())}
			for k, v := range ownership.InstanceLabels(ownership.RGD{Name: "webapp", UID: string(rgd.GetUID())}, id) {
				if inst.GetLabels()[k] != v {
					t.Errorf("instance label %s = %q, want %q", k, inst.GetLabels()[k], v)
				}
			}
			if got := inst.GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]; got != "ConfigMap,Deployment.apps,Ingress.networking.k8s.io,Service" {
				t.Errorf("contains-group-kinds = %q", got)
			}
			if !contains(inst.GetFinalizers(), v1alpha1.Finalizer) {
				t.Errorf("finalizers = %v", inst.GetFinalizers())
			}
			d := c.mustGet(t, "apps/v1", "Deployment", ns, "shop")
			want := ownership.ManagedLabels(ownership.RGD{Name: "webapp", UID: string(rgd.GetUID())}, ownership.Instance{GVK: id.GVK, Name: "shop", Namespace: ns, UID: id.UID, Labels: map[string]string{"team": "payments"}}, ownership.Item{NodeID: "deployment"})
			for k, v := range want {
				if d.GetLabels()[k] != v {
					t.Errorf("deployment label %s = %q, want %q", k, d.GetLabels()[k], v)
				}
			}
			if d.GetLabels()["team"] != "payments" {
				t.Error("the instance's own label did not propagate")
			}
			// An instance label the template also sets (app, which the
			// Deployment's selector matches on its Pods) keeps the template's
			// value; the ConfigMap, whose template sets none, takes the
			// instance's.
			c.patch(t, "kro.run/v1alpha1", "WebApp", ns, "shop", `{"metadata":{"labels":{"app":"billing"}}}`)
			eventually(t, 20*time.Second, "the instance's app label to reach the ConfigMap", func() (bool, string) {
				cm := c.mustGet(t, "v1", "ConfigMap", ns, "shop-config")
				return cm.GetLabels()["app"] == "billing", fmt.Sprint(cm.GetLabels())
			})
			if got := c.mustGet(t, "apps/v1", "Deployment", ns, "shop").GetLabels()["app"]; got != "shop" {
				t.Errorf("the Deployment's app label = %q, want the template's shop", got)
			}
			// A label taken off the instance is taken off what it manages.
			c.patch(t, "kro.run/v1alpha1", "WebApp", ns, "shop", `{"metadata":{"labels":{"app":null}}}`)
			eventually(t, 20*time.Second, "the instance's app label to leave the ConfigMap", func() (bool, string) {
				cm := c.mustGet(t, "v1", "ConfigMap", ns, "shop-config")
				_, has := cm.GetLabels()["app"]
				return !has, fmt.Sprint(cm.GetLabels())
			})
			if len(d.GetOwnerReferences()) != 0 {
				t.Errorf("owner references set: %v", d.GetOwnerReferences())
			}
			return ctx
		}).
		Assess("a deleted child comes back and a hand edit is reverted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			old := c.mustGet(t, "v1", "ConfigMap", ns, "shop-config")
			c.delete(t, "v1", "ConfigMap", ns, "shop-config")
			eventually(t, 10*time.Second, "the ConfigMap to come back", func() (bool, string) {
				cm, err := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return err == nil && cm.GetUID() != old.GetUID(), fmt.Sprint(err)
			})
			patch := []byte(`{"spec":{"replicas":7}}`)
			if _, err := c.resource(t, "apps/v1", "Deployment").Namespace(ns).Patch(ctx, "shop", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "someone"}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "replicas to be reverted to 2", func() (bool, string) {
				d := c.mustGet(t, "apps/v1", "Deployment", ns, "shop")
				r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
				return r == 2, fmt.Sprintf("replicas %d", r)
			})
			// kubectl describe of the instance tells both.
			for reason, want := range map[string]string{
				"Recreated": "re-created ConfigMap " + ns + "/shop-config (resource config) in the local cluster, which someone else deleted",
				"Restored":  "restored Deployment " + ns + "/shop (resource deployment) in the local cluster, whose spec.replicas someone else changed",
			} {
				eventually(t, 10*time.Second, "the "+reason+" event", func() (bool, string) {
					events := eventsAbout(t, c, ns, "shop", reason)
					if len(events) != 1 {
						return false, fmt.Sprint(events)
					}
					note := fmt.Sprint(events[0].Object["note"])
					return note == want, note
				})
			}
			return ctx
		}).
		Assess("labels naming the owner, edited, are put back", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Only the agent's identity may edit them (the guard policy);
			// the test's client has it. Each edit sends the object's
			// events to an instance that does not exist.
			for label, value := range map[string]string{
				v1alpha1.LabelInstanceName:      "elsewhere",
				v1alpha1.LabelInstanceNamespace: "default",
				v1alpha1.LabelRGDName:           "another",
			} {
				patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, label, value)
				if _, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Patch(ctx, "shop-config", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{v1alpha1.LabelInstanceName: "shop", v1alpha1.LabelInstanceNamespace: ns, v1alpha1.LabelRGDName: "webapp"}[label]
				eventually(t, 10*time.Second, label+" to be put back", func() (bool, string) {
					got := c.mustGet(t, "v1", "ConfigMap", ns, "shop-config").GetLabels()[label]
					return got == want, got
				})
			}
			return ctx
		}).
		Assess("a spec update reaches the resources", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, webapp(ns, "shop", ", replicas: 3, image: \"nginx:1.28\""))
			eventually(t, 20*time.Second, "the Deployment to follow the spec", func() (bool, string) {
				d := c.mustGet(t, "apps/v1", "Deployment", ns, "shop")
				r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
				cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
				image := cs[0].(map[string]any)["image"]
				return r == 3 && image == "nginx:1.28", fmt.Sprintf("replicas %d image %v", r, image)
			})
			// Tools that judge health by kstatus (Flux, cli-utils) tell a
			// Ready of this spec from one of the last by observedGeneration.
			eventually(t, 20*time.Second, "kstatus to find the instance Current at its new generation", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
				observed, _, _ := unstructured.NestedInt64(inst.Object, "status", "observedGeneration")
				res, err := kstatus.Compute(inst)
				if err != nil {
					t.Fatalf("kstatus of the instance: %v", err)
				}
				return observed == inst.GetGeneration() && inst.GetGeneration() > 1 && res.Status == kstatus.CurrentStatus,
					fmt.Sprintf("generation %d, status.observedGeneration %d, kstatus %s (%s)", inst.GetGeneration(), observed, res.Status, res.Message)
			})
			return ctx
		}).
		Assess("includeWhen turning true creates the Ingress, turning false prunes it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, webapp(ns, "shop", ", replicas: 3, image: \"nginx:1.28\", ingress: {enabled: true, host: shop.example}"))
			eventually(t, 20*time.Second, "the Ingress to exist", func() (bool, string) {
				_, err := c.get(t, "networking.k8s.io/v1", "Ingress", ns, "shop")
				return err == nil, fmt.Sprint(err)
			})
			c.apply(t, webapp(ns, "shop", ", replicas: 3, image: \"nginx:1.28\", ingress: {enabled: false}"))
			eventually(t, 20*time.Second, "the Ingress to be pruned", func() (bool, string) {
				_, err := c.get(t, "networking.k8s.io/v1", "Ingress", ns, "shop")
				return err != nil, "still there"
			})
			eventually(t, 10*time.Second, "the Pruned event to name the Ingress", func() (bool, string) {
				events := eventsAbout(t, c, ns, "shop", "Pruned")
				if len(events) == 0 {
					return false, "none"
				}
				note := fmt.Sprint(events[len(events)-1].Object["note"])
				return note == "deleted Ingress "+ns+"/shop (resource ingress) in the local cluster, which the graph no longer produces", note
			})
			c.mustGet(t, "apps/v1", "Deployment", ns, "shop")
			// Made again, it is created, not taken for one someone else
			// deleted: the agent pruned it itself.
			c.apply(t, webapp(ns, "shop", ", replicas: 3, image: \"nginx:1.28\", ingress: {enabled: true, host: shop.example}"))
			eventually(t, 20*time.Second, "the Ingress to exist again", func() (bool, string) {
				_, err := c.get(t, "networking.k8s.io/v1", "Ingress", ns, "shop")
				return err == nil, fmt.Sprint(err)
			})
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "shop", v1alpha1.InstanceActive)
			for _, e := range eventsAbout(t, c, ns, "shop", "Recreated") {
				if note := fmt.Sprint(e.Object["note"]); strings.Contains(note, "Ingress") {
					t.Errorf("the Ingress, pruned and made again, was told re-created: %s", note)
				}
			}
			c.apply(t, webapp(ns, "shop", ", replicas: 3, image: \"nginx:1.28\", ingress: {enabled: false}"))
			eventually(t, 20*time.Second, "the Ingress to be pruned again", func() (bool, string) {
				_, err := c.get(t, "networking.k8s.io/v1", "Ingress", ns, "shop")
				return err != nil, "still there"
			})
			return ctx
		}).
		Assess("a managed object someone else deletes is waited for, then made again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// A finalizer keeps the ConfigMap terminating; the Deployment
			// depends on it.
			cm := c.hold(t, "v1", "ConfigMap", ns, "shop-config")
			c.delete(t, "v1", "ConfigMap", ns, "shop-config")
			// A change the Deployment would take, if it were applied.
			c.apply(t, webapp(ns, "shop", ", replicas: 4, image: \"nginx:1.28\", ingress: {enabled: false}"))
			var inst *unstructured.Unstructured
			eventually(t, 20*time.Second, "ResourcesReady to say the ConfigMap is being deleted", func() (bool, string) {
				inst = c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
				cond := condition(inst, "ResourcesReady")
				return cond != nil && cond.Reason == v1alpha1.ReasonResourceDeleting && cond.ObservedGeneration == inst.GetGeneration(), conditionSummary(inst)
			})
			if msg := condition(inst, "ResourcesReady").Message; !strings.Contains(msg, "ConfigMap "+ns+"/shop-config") || !strings.Contains(msg, "e2e.kro.run/hold") {
				t.Errorf("ResourcesReady does not name the ConfigMap and its finalizer: %s", msg)
			}
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "state"); got != string(v1alpha1.InstanceInProgress) {
				t.Errorf("state = %q, want %s", got, v1alpha1.InstanceInProgress)
			}
			// The reconcile that said so, of the new generation, left what
			// depends on the ConfigMap as it was.
			if got, _, _ := unstructured.NestedInt64(c.mustGet(t, "apps/v1", "Deployment", ns, "shop").Object, "spec", "replicas"); got != 3 {
				t.Errorf("the Deployment was applied from a terminating ConfigMap: replicas = %d, want 3 until it is made again", got)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "webapp", "shop", "-n", ns)
			if !strings.Contains(out, "resource config (ConfigMap shop-config) is being deleted") || !strings.Contains(out, "e2e.kro.run/hold") {
				t.Errorf("why-not-ready does not point at the terminating ConfigMap (err %v):\n%s", err, out)
			}
			c.release(t, "v1", "ConfigMap", ns, "shop-config")
			eventually(t, 20*time.Second, "the ConfigMap to be made again", func() (bool, string) {
				now, err := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return err == nil && now.GetUID() != cm.GetUID(), fmt.Sprint(err)
			})
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "shop", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedInt64(c.mustGet(t, "apps/v1", "Deployment", ns, "shop").Object, "spec", "replicas"); got != 4 {
				t.Errorf("Deployment replicas = %d, want 4 once the ConfigMap is back", got)
			}
			return ctx
		}).
		Assess("suspend stops all writes and says so; resuming repairs", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			annotateOn := func(name, v string) {
				patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, v1alpha1.AnnotationReconcile, v)
				c.patch(t, "kro.run/v1alpha1", "WebApp", ns, name, patch)
			}
			annotate := func(v string) { annotateOn("shop", v) }
			suspended := func(name string) {
				annotateOn(name, `"suspended"`)
				eventually(t, 10*time.Second, "ResourcesReady to say Suspended", func() (bool, string) {
					inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, name)
					cond := condition(inst, "ResourcesReady")
					return cond != nil && cond.Reason == "Suspended", conditionSummary(inst)
				})
			}
			suspended("shop")
			c.delete(t, "v1", "ConfigMap", ns, "shop-config")
			never(t, 3*time.Second, "a suspended instance's ConfigMap was recreated", func() bool {
				_, err := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return err == nil
			})
			// dry-run says what would be done, and that it waits.
			file := filepath.Join(t.TempDir(), "shop.yaml")
			writeFile(t, file, webapp(ns, "shop", ""))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err != nil ||
				!strings.Contains(out, "config: ConfigMap "+ns+"/shop-config CREATE\n  not while the instance is suspended (kro.run/reconcile=suspended): kro-agent does this once the annotation is removed\n") {
				t.Errorf("dry-run of a suspended instance: %v\n%s", err, out)
			}
			annotate(`null`)
			eventually(t, 10*time.Second, "the ConfigMap to come back after resuming", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return err == nil, fmt.Sprint(err)
			})
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "shop", v1alpha1.InstanceActive)

			// Deleting is asked for in so many words: a suspended instance
			// is deleted with its resources, not held until a resume.
			c.apply(t, webapp(ns, "paused", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "paused", v1alpha1.InstanceActive)
			suspended("paused")
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "paused")
			eventually(t, 20*time.Second, "the suspended instance and its resources to be gone", func() (bool, string) {
				_, instErr := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "paused")
				_, cmErr := c.get(t, "v1", "ConfigMap", ns, "paused-config")
				return apierrors.IsNotFound(instErr) && apierrors.IsNotFound(cmErr), fmt.Sprintf("instance: %v; ConfigMap: %v", instErr, cmErr)
			})
			return ctx
		}).
		Assess("deletion goes in reverse topological order, waiting for each layer", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// The Service depends on the Deployment, which depends on the
			// ConfigMap. A finalizer holds the Service back.
			c.hold(t, "v1", "Service", ns, "shop")
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
			eventually(t, 10*time.Second, "the Service to be terminating", func() (bool, string) {
				s := c.mustGet(t, "v1", "Service", ns, "shop")
				return s.GetDeletionTimestamp() != nil, "not terminating"
			})
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "shop", v1alpha1.InstanceDeleting)
			never(t, 3*time.Second, "the Deployment or ConfigMap was deleted while the Service is stuck", func() bool {
				d, err1 := c.get(t, "apps/v1", "Deployment", ns, "shop")
				cm, err2 := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return err1 != nil || err2 != nil || d.GetDeletionTimestamp() != nil || cm.GetDeletionTimestamp() != nil
			})
			// What holds the deletion is named, for kubectl describe.
			eventually(t, 10*time.Second, "ResourcesReady to name the finalizer holding the Service", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
				msg := condition(inst, "ResourcesReady").Message
				return strings.Contains(msg, "reverse topological order") &&
					strings.Contains(msg, "Service "+ns+"/shop is terminating, held by the finalizers e2e.kro.run/hold"), msg
			})
			// The ConfigMap, deleted last, is held too: once the Service
			// goes, the Deployment follows, and the tree shows both gone
			// rather than missing or waiting to be created.
			c.hold(t, "v1", "ConfigMap", ns, "shop-config")
			// The agent's cache of the instance does not follow its own
			// status writes from here on: its removal of the finalizer,
			// conditional on the instance's version, is to go over them
			// all the same, not conflict with them until the cache catches up.
			release := holdWatches("/webapps")
			defer release()
			finalizerErrors := writeErrors(t, "finalizer")
			c.release(t, "v1", "Service", ns, "shop")
			eventually(t, 20*time.Second, "the tree to show the Service and Deployment deleted and the ConfigMap held", func() (bool, string) {
				out, err := kro(t, cfg, nil, "tree", "webapp", "shop", "-n", ns, "-o", "json")
				if err != nil {
					return false, fmt.Sprintf("tree: %v", err)
				}
				var tree plugin.Tree
				if err := json.Unmarshal([]byte(out), &tree); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range tree.Rows {
					got = append(got, r.NodeID+"="+r.Ready)
				}
				return strings.Join(got, ",") == "config=Deleting,deployment=Deleted,service=Deleted,ingress=Skipped", strings.Join(got, ",")
			})
			c.release(t, "v1", "ConfigMap", ns, "shop-config")
			eventually(t, 30*time.Second, "everything to be gone", func() (bool, string) {
				_, e1 := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "shop")
				_, e2 := c.get(t, "apps/v1", "Deployment", ns, "shop")
				_, e3 := c.get(t, "v1", "ConfigMap", ns, "shop-config")
				return e1 != nil && e2 != nil && e3 != nil, fmt.Sprintf("instance %v deployment %v configmap %v", e1, e2, e3)
			})
			if n := writeErrors(t, "finalizer") - finalizerErrors; n > 0 {
				t.Errorf("the finalizer's removal was refused %v times", n)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A managed object whose owner labels were changed (by the agent's own
// identity: the guard lets nobody else) still belongs to its instance by
// UID, and the instance's deletion deletes it and finishes: its deletion
// must not wait for an event that the new labels send elsewhere.
func TestDeletionFinishesWhenAMemberNamesAnotherOwner(t *testing.T) {
	const ns = "relabelled"
	f := features.New("deleting an instance one of whose objects was relabelled").
		Assess("finishes, the relabelled object deleted with the rest", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			c.apply(t, webapp(ns, "moved", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "moved", v1alpha1.InstanceActive)
			// Suspended, the agent leaves the labels as they are now.
			if _, err := kubectl(t, cfg, "", "-n", ns, "annotate", "webapp", "moved", "kro.run/reconcile=suspended"); err != nil {
				t.Fatal(err)
			}
			if out, err := kubectl(t, cfg, "", "-n", ns, "label", "deployment", "moved", "kro.run/instance-name=someone-else", "--overwrite"); err != nil {
				t.Fatalf("relabelling the Deployment: %v\n%s", err, out)
			}
			c.deleteAll(t, "kro.run/v1alpha1", "WebApp", ns, "moved")
			for _, o := range [][2]string{{"apps/v1", "Deployment"}, {"v1", "Service"}, {"v1", "ConfigMap"}} {
				name := "moved"
				if o[1] == "ConfigMap" {
					name = "moved-config"
				}
				if _, err := c.get(t, o[0], o[1], ns, name); !apierrors.IsNotFound(err) {
					t.Errorf("%s %s of the deleted instance: %v", o[1], name, err)
				}
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An instance deleted with propagationPolicy Orphan (kubectl delete
// --cascade=orphan) leaves its resources in place, the same objects, freed
// of kro-agent's labels and keeping the others; kro-agent says so in an
// Event, and manages them no more, until an instance of the name is made
// again: they were handed to it, and it adopts them.
func TestOrphanDeletionLeavesTheResources(t *testing.T) {
	const ns = "orphaned"
	f := features.New("deleting an instance with propagationPolicy Orphan").
		Assess("leaves its resources in place, without kro-agent's labels", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			c.apply(t, webapp(ns, "kept", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "kept", v1alpha1.InstanceActive)
			objects := [][3]string{{"v1", "ConfigMap", "kept-config"}, {"apps/v1", "Deployment", "kept"}, {"v1", "Service", "kept"}}
			uids := map[string]types.UID{}
			for _, o := range objects {
				uids[o[2]+o[1]] = c.mustGet(t, o[0], o[1], ns, o[2]).GetUID()
			}
			if out, err := kubectl(t, cfg, "", "-n", ns, "delete", "webapp", "kept", "--cascade=orphan"); err != nil {
				t.Fatalf("kubectl delete --cascade=orphan: %v\n%s", err, out)
			}
			eventually(t, 30*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "kept")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			for _, o := range objects {
				u, err := c.get(t, o[0], o[1], ns, o[2])
				if err != nil || u.GetUID() != uids[o[2]+o[1]] {
					t.Errorf("%s %s of the orphaning instance: %v, want the same object left in place", o[1], o[2], err)
					continue
				}
				for k := range u.GetLabels() {
					if ownership.IsOwnershipKey(k) {
						t.Errorf("%s %s keeps kro-agent's label %s: %v", o[1], o[2], k, u.GetLabels())
					}
				}
				if u.GetLabels()["team"] != "payments" {
					t.Errorf("%s %s lost the instance author's label: %v", o[1], o[2], u.GetLabels())
				}
			}
			if d := c.mustGet(t, "apps/v1", "Deployment", ns, "kept"); d.GetLabels()["app"] != "kept" {
				t.Errorf("the Deployment lost its template's label: %v", d.GetLabels())
			}
			events := eventsAbout(t, c, ns, "kept", "Orphaned")
			if len(events) != 1 || !strings.Contains(fmt.Sprint(events[0].Object["note"]),
				"left 3 resources in the local cluster in place, as the deletion asked (propagationPolicy Orphan), without kro-agent's labels and handed to the next instance of this name (kro.run/adopt-by="+ns+"/kept): ConfigMap "+ns+"/kept-config, Deployment "+ns+"/kept, Service "+ns+"/kept") {
				t.Errorf("the Orphaned event: %v", events)
			}
			// Freed, they are the user's: labelled as anyone likes, and
			// left alone by kro-agent.
			if out, err := kubectl(t, cfg, "", "-n", ns, "label", "configmap", "kept-config", "kro.run/owned=mine"); err != nil {
				t.Errorf("labelling the released ConfigMap: %v\n%s", err, out)
			}
			never(t, 3*time.Second, "a released object deleted", func() bool {
				_, err := c.get(t, "v1", "ConfigMap", ns, "kept-config")
				return err != nil
			})
			// An instance made anew with the name adopts them, the same
			// objects, as they were handed to it: what runs on them goes
			// on running.
			c.apply(t, webapp(ns, "kept", ", replicas: 1"))
			inst := c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "kept", v1alpha1.InstanceActive)
			for _, o := range objects {
				u := c.mustGet(t, o[0], o[1], ns, o[2])
				if u.GetUID() != uids[o[2]+o[1]] || u.GetLabels()[v1alpha1.LabelInstanceID] != string(inst.GetUID()) {
					t.Errorf("%s %s is %s labelled for %q, want the one left in place, %s, labelled for the new instance %s",
						o[1], o[2], u.GetUID(), u.GetLabels()[v1alpha1.LabelInstanceID], uids[o[2]+o[1]], inst.GetUID())
				}
			}
			eventually(t, 10*time.Second, "an Adopted event for each", func() (bool, string) {
				events := eventsAbout(t, c, ns, "kept", "Adopted")
				return len(events) == 3, fmt.Sprint(len(events), " events: ", events)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// timeGates gates on time.now(), as upstream kro's time-gates example
// does: a ConfigMap says whether the delay since the instance's creation
// has passed, another is included once it has, and the status says so.
const timeGates = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: time-gates
spec:
  schema:
    apiVersion: v1alpha1
    kind: TimeGate
    spec:
      delay: string | default="8s"
    status:
      open: ${time.now() >= schema.metadata.creationTimestamp + duration(schema.spec.delay)}
  resources:
    - id: gates
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: ${schema.metadata.name}-gates
        data:
          open: ${string(time.now() >= schema.metadata.creationTimestamp + duration(schema.spec.delay))}
    - id: late
      includeWhen:
        - ${time.now() >= schema.metadata.creationTimestamp + duration(schema.spec.delay)}
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: ${schema.metadata.name}-late
`

func TestTimeGatesTurnOnTime(t *testing.T) {
	const ns = "time-gates"
	f := features.New("an RGD gating on time.now()").
		Assess("turns when the time comes, with nothing else changing, and writes nothing in between", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, timeGates)
			c.waitRGDActive(t, "time-gates")
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: TimeGate, metadata: {name: gated, namespace: "+ns+"}}")
			inst := c.waitState(t, "kro.run/v1alpha1", "TimeGate", ns, "gated", v1alpha1.InstanceActive)
			created := inst.GetCreationTimestamp().Time
			if time.Since(created) < 6*time.Second {
				// Before the delay: closed.
				gates := c.mustGet(t, "v1", "ConfigMap", ns, "gated-gates")
				if open, _, _ := unstructured.NestedString(gates.Object, "data", "open"); open != "false" {
					t.Errorf("data.open = %q before the delay, want false", open)
				}
				if _, err := c.get(t, "v1", "ConfigMap", ns, "gated-late"); !apierrors.IsNotFound(err) {
					t.Errorf("the late ConfigMap before the delay: %v, want none", err)
				}
				if open, found, _ := unstructured.NestedBool(inst.Object, "status", "open"); !found || open {
					t.Errorf("status.open = %v (set: %v) before the delay, want false", open, found)
				}
				// The tree says until when the late one is skipped.
				until := "is false until " + created.Add(8*time.Second).UTC().Format(time.RFC3339)
				if out, err := kro(t, cfg, nil, "tree", "timegate", "gated", "-n", ns, "-o", "json"); err != nil || !strings.Contains(out, until) {
					t.Errorf("kubectl kro tree before the delay: %v\n%s\nwant the late ConfigMap's includeWhen %s", err, out, until)
				}
			}
			eventually(t, 40*time.Second, "the gates to open", func() (bool, string) {
				gates := c.mustGet(t, "v1", "ConfigMap", ns, "gated-gates")
				open, _, _ := unstructured.NestedString(gates.Object, "data", "open")
				_, lateErr := c.get(t, "v1", "ConfigMap", ns, "gated-late")
				inst := c.mustGet(t, "kro.run/v1alpha1", "TimeGate", ns, "gated")
				status, _, _ := unstructured.NestedBool(inst.Object, "status", "open")
				return open == "true" && lateErr == nil && status, fmt.Sprintf("data.open %q, late ConfigMap: %v, status.open %v", open, lateErr, status)
			})
			if late := c.mustGet(t, "v1", "ConfigMap", ns, "gated-late"); late.GetCreationTimestamp().Time.Before(created.Add(8 * time.Second)) {
				t.Errorf("the late ConfigMap was created at %v, before the delay of 8s from %v had passed", late.GetCreationTimestamp(), created)
			}
			// Every answer has turned: nothing brings the instance back,
			// and nothing is written.
			before := writeRequestsIn(ns)
			never(t, 4*time.Second, "a write with nothing changing", func() bool { return len(writeRequestsIn(ns)) != len(before) })
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// secretReader reads a Secret's stringData, which the API server never
// returns; zeroReady waits for a Deployment's availableReplicas, which a
// Deployment scaled to zero never has.
const secretReader = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: secret-readers}
spec:
  schema: {apiVersion: v1alpha1, kind: SecretReader, spec: {password: string | default="hunter2"}}
  resources:
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}"}
      stringData: {password: "${schema.spec.password}"}
  - id: copy
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-copy"}
      data: {password: "${secret.stringData.password}"}
`

const zeroReady = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: zero-scaled-apps}
spec:
  schema: {apiVersion: v1alpha1, kind: ZeroScaledApp, spec: {replicas: integer | default=0}}
  resources:
  - id: deploy
    readyWhen: ["${deploy.status.availableReplicas == deploy.spec.replicas}"]
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.metadata.name}"}
      spec:
        replicas: ${schema.spec.replicas}
        selector: {matchLabels: {app: scaled}}
        template: {metadata: {labels: {app: scaled}}, spec: {containers: [{name: app, image: nginx}]}}
`

// zeroFleet waits, as zeroReady does, for a count of 0, of each item of a
// collection.
const zeroFleet = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: zero-scaled-fleets}
spec:
  schema: {apiVersion: v1alpha1, kind: ZeroScaledFleet, spec: {regions: "[]string | default=[\"eu\"]"}}
  resources:
  - id: workers
    forEach: [{region: "${schema.spec.regions}"}]
    readyWhen: ["${each.status.availableReplicas == each.spec.replicas}"]
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.metadata.name + '-' + region}"}
      spec:
        replicas: 0
        selector: {matchLabels: {app: fleet}}
        template: {metadata: {labels: {app: fleet}}, spec: {containers: [{name: app, image: nginx}]}}
`

// Two values type-check but never come: a Secret's stringData and a count
// of 0 in a Deployment's status (of one, or of each item of a collection). The RGD reading stringData is admitted
// with a warning saying what to read instead, and what waits for either
// says so in the instance's conditions and why-not-ready; read as said,
// both instances become ACTIVE.
func TestValuesThatNeverComeAreToldSo(t *testing.T) {
	const ns = "never-comes"
	f := features.New("values that never come").
		Assess("are warned of, told on the instance, and mended as told", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			out, err := kubectl(t, cfg, secretReader, "apply", "-f", "-")
			const warned = "Warning: spec.resources[copy].template.data.password: ${secret.stringData.password} reads secret.stringData, but no Secret read back has stringData: the API server writes it into data, base64-encoded; read string(secret.data.password)"
			if err != nil || !strings.Contains(out, warned) {
				t.Errorf("applying an RGD reading stringData: %v\n%s\nwant the warning %s", err, out, warned)
			}
			c.apply(t, zeroReady)
			c.apply(t, zeroFleet)
			c.waitRGDActive(t, "secret-readers")
			c.waitRGDActive(t, "zero-scaled-apps")
			c.waitRGDActive(t, "zero-scaled-fleets")
			// The warning stays on the RGD, for whoever applied it
			// without reading what kubectl printed.
			rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "secret-readers")
			if ga := condition(rgd, v1alpha1.ConditionGraphAccepted); ga == nil || !strings.Contains(ga.Message, "\n"+warned) {
				t.Errorf("GraphAccepted of secret-readers = %+v, want it to carry the line %s", ga, warned)
			}
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: SecretReader, metadata: {name: reader, namespace: "+ns+"}}")
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: ZeroScaledApp, metadata: {name: scaled, namespace: "+ns+"}}")
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: ZeroScaledFleet, metadata: {name: fleet, namespace: "+ns+"}}")
			for _, tc := range []struct{ kind, name, says string }{
				{"SecretReader", "reader", "no such key: stringData; no Secret read back has stringData: the API server writes it into data, base64-encoded; read string(secret.data.password)"},
				{"ZeroScaledApp", "scaled", "deploy's controller has written its status without status.availableReplicas: Kubernetes leaves a count of 0 out, so where 0 is an answer read deploy.status.?availableReplicas.orValue(0)"},
				{"ZeroScaledFleet", "fleet", "the controller of workers's items has written its status without status.availableReplicas: Kubernetes leaves a count of 0 out, so where 0 is an answer read each.status.?availableReplicas.orValue(0)"},
			} {
				eventually(t, 40*time.Second, tc.kind+" to say what it waits for never comes", func() (bool, string) {
					inst := c.mustGet(t, "kro.run/v1alpha1", tc.kind, ns, tc.name)
					rr := condition(inst, v1alpha1.ConditionResourcesReady)
					return rr != nil && strings.Contains(rr.Message, tc.says), conditionSummary(inst)
				})
				if out, err := kro(t, cfg, nil, "why-not-ready", strings.ToLower(tc.kind), tc.name, "-n", ns); err == nil || !strings.Contains(out, tc.says) {
					t.Errorf("why-not-ready %s: %v\n%s\nwant %s", tc.kind, err, out, tc.says)
				}
			}
			c.apply(t, strings.Replace(secretReader, "${secret.stringData.password}", "${string(secret.data.password)}", 1))
			c.apply(t, strings.Replace(zeroReady, "deploy.status.availableReplicas ==", "deploy.status.?availableReplicas.orValue(0) ==", 1))
			c.apply(t, strings.Replace(zeroFleet, "each.status.availableReplicas ==", "each.status.?availableReplicas.orValue(0) ==", 1))
			c.waitState(t, "kro.run/v1alpha1", "SecretReader", ns, "reader", v1alpha1.InstanceActive)
			c.waitState(t, "kro.run/v1alpha1", "ZeroScaledApp", ns, "scaled", v1alpha1.InstanceActive)
			c.waitState(t, "kro.run/v1alpha1", "ZeroScaledFleet", ns, "fleet", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedString(c.mustGet(t, "v1", "ConfigMap", ns, "reader-copy").Object, "data", "password"); got != "hunter2" {
				t.Errorf("the copy holds %q, want the Secret's password", got)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// mismatchedSelector is an RGD whose Deployment selects its pods by a label
// their template gives another value.
const mismatchedSelector = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: mismatched-selectors}
spec:
  schema: {apiVersion: v1alpha1, kind: MismatchedSelector, spec: {name: string | default=shop}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.metadata.name}"}
      spec:
        selector: {matchLabels: {app: "${schema.spec.name}"}}
        template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}
`

// A workload whose selector its pod template's labels do not match is
// admitted with a warning, which GraphAccepted carries too, and its
// instances are refused as the warning says; matched, they become ACTIVE.
func TestSelectorItsPodsDoNotMatchIsWarned(t *testing.T) {
	const ns = "mismatched-selectors"
	f := features.New("a selector its pods do not match").
		Assess("is warned of, refused as warned, and mended", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			out, err := kubectl(t, cfg, mismatchedSelector, "apply", "-f", "-")
			const warned = "Warning: spec.resources[deploy].template.spec.selector.matchLabels.app: ${schema.spec.name}: the pod template gives app the value web, so the API server refuses every Deployment so written unless the two always render alike: its selector must match its pods' labels"
			if err != nil || !strings.Contains(out, warned) {
				t.Errorf("applying the RGD: %v\n%s\nwant the warning %s", err, out, warned)
			}
			c.waitRGDActive(t, "mismatched-selectors")
			rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "mismatched-selectors")
			if ga := condition(rgd, v1alpha1.ConditionGraphAccepted); ga == nil || !strings.Contains(ga.Message, "\n"+warned) {
				t.Errorf("GraphAccepted = %+v, want it to carry the line %s", ga, warned)
			}
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: MismatchedSelector, metadata: {name: shop, namespace: "+ns+"}}")
			eventually(t, 40*time.Second, "the instance to report the refusal the warning foretold", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "MismatchedSelector", ns, "shop")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && strings.Contains(rr.Message, "`selector` does not match template `labels`"), conditionSummary(inst)
			})
			if out, err := kro(t, cfg, nil, "why-not-ready", "mismatchedselector", "shop", "-n", ns); err == nil ||
				!strings.Contains(out, "What to do: the RGD's template selects pods by labels its pod template does not give them") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			c.apply(t, strings.Replace(mismatchedSelector, "labels: {app: web}", `labels: {app: "${schema.spec.name}"}`, 1))
			c.waitState(t, "kro.run/v1alpha1", "MismatchedSelector", ns, "shop", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
