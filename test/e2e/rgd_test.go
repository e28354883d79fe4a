//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	"github.com/kro-agent/kro-agent/pkg/plugin"
)

func noteRGD(name, kind, extraSpec, cmData string) string {
	return fmt.Sprintf(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: %s}
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
    spec: {text: string%s}
  resources:
  - id: note
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-note"}
      data: {text: %s}
`, name, kind, extraSpec, cmData)
}

func rgdCondition(t *testing.T, c *clients, name, cond string) *metav1.Condition {
	t.Helper()
	return condition(c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", name), cond)
}

func TestRGDLifecycle(t *testing.T) {
	const ns = "rgds"
	f := features.New("RGD status, invalid updates, CRD restore, breaking changes").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			// The create's answer comes before the agent has acted on the
			// RGD: its status reads as generation 1 not yet observed, which
			// tools that judge health by kstatus (Flux) must not take for
			// Current before its kind is served.
			created := c.apply(t, noteRGD("notes", "Note", "", `"${schema.spec.text}"`))
			observed, found, _ := unstructured.NestedInt64(created.Object, "status", "observedGeneration")
			if res, err := kstatus.Compute(created); err != nil || res.Status != kstatus.InProgressStatus || !found || observed != 0 {
				t.Errorf("a new RGD: kstatus %+v (%v), status %v; want InProgress, observedGeneration 0", res, err, created.Object["status"])
			}
			c.waitRGDActive(t, "notes")
			if res, err := kstatus.Compute(c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")); err != nil || res.Status != kstatus.CurrentStatus {
				t.Errorf("the RGD Active: kstatus %+v (%v), want Current", res, err)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Note, metadata: {name: n1, namespace: %s}, spec: {text: hello}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Note", ns, "n1", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("an Active RGD reports its order, dependencies and conditions", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")
			order, _, _ := unstructured.NestedStringSlice(rgd.Object, "status", "topologicalOrder")
			if fmt.Sprint(order) != "[note]" {
				t.Errorf("topologicalOrder = %v", order)
			}
			for _, cond := range []string{"Ready", "GraphAccepted", "KindReady", "ControllerReady"} {
				if got := condition(rgd, cond); got == nil || got.Status != metav1.ConditionTrue {
					t.Errorf("%s = %+v", cond, got)
				}
			}
			crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			if crd.GetLabels()[v1alpha1.LabelRGDID] != string(rgd.GetUID()) || crd.GetLabels()[v1alpha1.LabelOwned] != "true" {
				t.Errorf("CRD labels = %v", crd.GetLabels())
			}
			// kubectl get shows what kro's own columns show: Ready among them.
			out, err := kubectl(t, cfg, "", "get", "rgd", "notes", "-o", "wide")
			if fields := strings.Fields(out); err != nil || len(fields) != 14 || strings.Join(fields[:7], " ") != "NAME APIVERSION KIND STATE READY TOPOLOGICALORDER AGE" ||
				strings.Join(fields[7:13], " ") != `notes v1alpha1 Note Active True ["note"]` {
				t.Errorf("kubectl get rgd notes -o wide: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("an invalid update is reported and the instance's resources are untouched", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			before := c.mustGet(t, "v1", "ConfigMap", ns, "n1-note")
			c.applyUnvalidated(t, noteRGD("notes", "Note", "", `"${schema.spec.missing}"`))
			c.waitAgentWebhooks(t)
			eventually(t, 10*time.Second, "GraphAccepted to be False", func() (bool, string) {
				cond := rgdCondition(t, c, "notes", "GraphAccepted")
				return cond != nil && cond.Status == metav1.ConditionFalse, fmt.Sprint(cond)
			})
			cond := rgdCondition(t, c, "notes", "GraphAccepted")
			if cond.Reason != "InvalidResourceGraph" || !strings.Contains(cond.Message, `spec.resources[note].template.data.text`) || !strings.Contains(cond.Message, "undefined field 'missing'") {
				t.Errorf("GraphAccepted = %+v", cond)
			}
			rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")
			if st, _, _ := unstructured.NestedString(rgd.Object, "status", "state"); st != "Inactive" {
				t.Errorf("state = %s, want Inactive", st)
			}
			c.delete(t, "v1", "ConfigMap", ns, "n1-note") // would be restored if still served
			never(t, 2*time.Second, "resources of an invalid RGD's instance were written", func() bool {
				_, err := c.get(t, "v1", "ConfigMap", ns, "n1-note")
				return err == nil
			})
			c.apply(t, noteRGD("notes", "Note", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "notes")
			eventually(t, 10*time.Second, "the ConfigMap back once the RGD is fixed", func() (bool, string) {
				cm, err := c.get(t, "v1", "ConfigMap", ns, "n1-note")
				return err == nil && cm.GetUID() != before.GetUID(), fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("a deleted CRD is put back", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			old := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			c.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			eventually(t, 30*time.Second, "the CRD to be recreated", func() (bool, string) {
				crd, err := c.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
				return err == nil && crd.GetUID() != old.GetUID() && crd.GetDeletionTimestamp() == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "notes")
			// The instances went with the CRD: the RGD tells where.
			eventually(t, 10*time.Second, "an Event saying the CRD was deleted and made again", func() (bool, string) {
				events := eventsAbout(t, c, "default", "notes", "KindRecreated")
				for _, e := range events {
					if note, _, _ := unstructured.NestedString(e.Object, "note"); strings.HasPrefix(note, "CustomResourceDefinition notes.kro.run was deleted, and the API server deleted every Note with it") {
						return true, ""
					}
				}
				return false, fmt.Sprint(events)
			})
			return ctx
		}).
		Assess("a second RGD of the same kind is refused and leaves the first serving", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			before := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			// Past the webhook, which denies it (see
			// TestInstancesOfADeletedRGDCanBeDeleted): the agent refuses it too.
			c.applyUnvalidated(t, noteRGD("notes-rival", "Note", ", other: integer", `"${schema.spec.text}"`))
			c.waitAgentWebhooks(t)
			eventually(t, 10*time.Second, "the rival's KindReady to be False", func() (bool, string) {
				cond := rgdCondition(t, c, "notes-rival", "KindReady")
				return cond != nil && cond.Status == metav1.ConditionFalse, fmt.Sprint(cond)
			})
			rival := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes-rival")
			if msg := condition(rival, "KindReady").Message; !strings.Contains(msg, "CustomResourceDefinition notes.kro.run is generated by ResourceGraphDefinition notes") {
				t.Errorf("KindReady does not name the CRD and its owner: %q", msg)
			}
			if cond := condition(rival, "ControllerReady"); cond == nil || cond.Message == "" {
				t.Errorf("ControllerReady does not say why nothing is served: %+v", cond)
			}
			if st, _, _ := unstructured.NestedString(rival.Object, "status", "state"); st != "Inactive" {
				t.Errorf("the rival's state = %s, want Inactive", st)
			}
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes-rival")
			eventually(t, 10*time.Second, "the rival to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes-rival")
				return err != nil, "still there"
			})
			if crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run"); crd.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("the rival changed the first RGD's CRD: labels now %v", crd.GetLabels())
			}
			c.waitRGDActive(t, "notes")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Note, metadata: {name: n3, namespace: %s}, spec: {text: still served}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Note", ns, "n3", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("a field added with a default reaches every instance at once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, noteRGD("greetings", "Greeting", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "greetings")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Greeting, metadata: {name: g1, namespace: %s}, spec: {text: hello}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Greeting", ns, "g1", v1alpha1.InstanceActive)
			// The API server returns g1 with the new field's default from
			// now on; the agent's cache holds it as it was written, and the
			// agent fills the default in itself rather than wait for a
			// write to g1 that may never come.
			c.apply(t, noteRGD("greetings", "Greeting", `, tone: "string | default=warm"`, `"${schema.spec.text + ' ' + schema.spec.tone}"`))
			eventually(t, 20*time.Second, "g1's ConfigMap to read the default", func() (bool, string) {
				cm, err := c.get(t, "v1", "ConfigMap", ns, "g1-note")
				if err != nil {
					return false, err.Error()
				}
				text, _, _ := unstructured.NestedString(cm.Object, "data", "text")
				return text == "hello warm", text
			})
			c.waitState(t, "kro.run/v1alpha1", "Greeting", ns, "g1", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("a breaking schema change is refused unless annotated", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			breaking := noteRGD("notes", "Note", ", owner: \"string | required=true\"", `"${schema.spec.text}"`)
			// kubectl apply says so at once, in a warning from the webhook.
			out, err := kubectl(t, cfg, breaking, "apply", "--server-side", "--force-conflicts", "--field-manager", testManager, "--dry-run=server", "-f", "-")
			if err != nil || !strings.Contains(out, `Warning: the new schema would break the stored instances of Note (spec.owner is newly required): kro-agent does not apply it`) ||
				!strings.Contains(out, `kro.run/allow-breaking-changes: "true"`) {
				t.Errorf("kubectl apply of a breaking change: %v\n%s", err, out)
			}
			// And kubectl kro validate, against the cluster.
			// (Not under t.TempDir(): -f splits on commas, as kubectl's
			// does, and this test's name has some.)
			dir, err := os.MkdirTemp("", "notes")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			file := dir + "/notes.yaml"
			writeFile(t, file, breaking)
			out, err = kro(t, cfg, nil, "validate", "-f", file)
			if err != nil || !strings.Contains(out, "  warning: the new schema would break the stored instances of Note (spec.owner is newly required)") {
				t.Errorf("validate of a breaking change: %v\n%s", err, out)
			}
			// A new kind for the RGD is denied by the webhook; validate
			// says so too, and that the RGD is invalid.
			writeFile(t, file, noteRGD("notes", "Notice", "", `"${schema.spec.text}"`))
			out, err = kro(t, cfg, nil, "validate", "-f", file)
			if !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(out, `spec.schema.kind: Forbidden: kind is immutable (was "Note"); create a new RGD instead`) {
				t.Errorf("validate of a new kind for an RGD: %v\n%s", err, out)
			}
			c.apply(t, breaking)
			eventually(t, 10*time.Second, "KindReady to refuse the change", func() (bool, string) {
				cond := rgdCondition(t, c, "notes", "KindReady")
				return cond != nil && cond.Reason == "BreakingChange", fmt.Sprint(cond)
			})
			if msg := rgdCondition(t, c, "notes", "KindReady").Message; !strings.Contains(msg, "spec.owner is newly required") || !strings.Contains(msg, v1alpha1.AnnotationAllowBreakingChanges) {
				t.Errorf("message = %q", msg)
			}
			crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			specSchema := versions[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
			if _, ok := specSchema["required"]; ok {
				t.Errorf("the refused schema reached the CRD: %v", specSchema["required"])
			}
			// Meanwhile the instances are served with the graph of the
			// generation before, and the RGD says so.
			eventually(t, 10*time.Second, "ControllerReady to name the generation served", func() (bool, string) {
				cond := rgdCondition(t, c, "notes", "ControllerReady")
				rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")
				return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == v1alpha1.ReasonServingEarlierGeneration && cond.ObservedGeneration == rgd.GetGeneration() &&
					strings.Contains(cond.Message, fmt.Sprintf("with the graph of generation %d: generation %d is not applied", rgd.GetGeneration()-1, rgd.GetGeneration())), fmt.Sprint(cond)
			})
			before := c.mustGet(t, "v1", "ConfigMap", ns, "n3-note")
			c.delete(t, "v1", "ConfigMap", ns, "n3-note")
			eventually(t, 10*time.Second, "the ConfigMap repaired with the earlier graph", func() (bool, string) {
				cm, err := c.get(t, "v1", "ConfigMap", ns, "n3-note")
				return err == nil && cm.GetUID() != before.GetUID(), fmt.Sprint(err)
			})
			if out, err := kro(t, cfg, nil, "why-not-ready", "note", "n3", "-n", ns); err != nil || !strings.Contains(out, "is Ready, though ResourceGraphDefinition notes is not Active") {
				t.Errorf("why-not-ready of an instance served with the earlier graph: %v\n%s", err, out)
			}
			if out, err := kro(t, cfg, nil, "tree", "note", "n3", "-n", ns); err != nil || !strings.Contains(out, "is not applied, so kro-agent reconciles Note/n3 with the graph of an earlier one; this tree is drawn from generation") {
				t.Errorf("tree of an instance served with the earlier graph does not say so: %v\n%s", err, out)
			}
			// A restarted agent does not know that graph: the instances are
			// held, and say so, rather than claim ACTIVE unattended.
			stopAgentNow(t)
			startAgent(t, cfg)
			held := c.waitState(t, "kro.run/v1alpha1", "Note", ns, "n3", v1alpha1.InstanceFailed)
			if cond := condition(held, v1alpha1.ConditionGraphResolved); cond == nil || cond.Reason != v1alpha1.ReasonGraphNotAccepted || !strings.Contains(cond.Message, "its KindReady condition says why") {
				t.Errorf("GraphResolved of a held instance = %+v", cond)
			}
			eventually(t, 10*time.Second, "ControllerReady to say the instances are held", func() (bool, string) {
				cond := rgdCondition(t, c, "notes", "ControllerReady")
				return cond != nil && cond.Status == metav1.ConditionUnknown && strings.Contains(cond.Message, "instances are held"), fmt.Sprint(cond)
			})
			// Held instances cannot be deleted, so that is not offered.
			if msg := rgdCondition(t, c, "notes", "KindReady").Message; !strings.Contains(msg, "to apply it anyway") || strings.Contains(msg, "once none is left") {
				t.Errorf("KindReady of an RGD whose instances are held: %q", msg)
			}
			out, err = kro(t, cfg, nil, "why-not-ready", "rgd", "notes")
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "spec.owner is newly required") || !strings.Contains(out, "kubectl annotate rgd notes kro.run/allow-breaking-changes=true") {
				t.Errorf("why-not-ready rgd notes: %v\n%s", err, out)
			}
			c.apply(t, strings.Replace(noteRGD("notes", "Note", ", owner: \"string | required=true\"", `"${schema.spec.text}"`),
				"metadata: {name: notes}", "metadata: {name: notes, annotations: {kro.run/allow-breaking-changes: \"true\"}}", 1))
			eventually(t, 10*time.Second, "the annotated change to be applied", func() (bool, string) {
				cond := rgdCondition(t, c, "notes", "KindReady")
				return cond != nil && cond.Status == metav1.ConditionTrue, fmt.Sprint(cond)
			})
			c.waitState(t, "kro.run/v1alpha1", "Note", ns, "n3", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("an instance stored before a field changed type names the field to set again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, noteRGD("tallies", "Tally", ", count: integer", `"${string(schema.spec.count)}"`))
			c.waitRGDActive(t, "tallies")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Tally, metadata: {name: t1, namespace: %s}, spec: {count: 3}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Tally", ns, "t1", v1alpha1.InstanceActive)
			// The API server keeps t1 as it was stored: count is 3, an
			// integer, under a schema that now declares a string.
			c.apply(t, strings.Replace(noteRGD("tallies", "Tally", ", count: string", `"${schema.spec.count}"`),
				"metadata: {name: tallies}", "metadata: {name: tallies, annotations: {kro.run/allow-breaking-changes: \"true\"}}", 1))
			failed := c.waitState(t, "kro.run/v1alpha1", "Tally", ns, "t1", v1alpha1.InstanceFailed)
			if cond := condition(failed, v1alpha1.ConditionGraphResolved); cond == nil || cond.Status != metav1.ConditionFalse ||
				!strings.Contains(cond.Message, "reads spec.count, which holds 3 (an int), where string is expected by the instance's schema") ||
				!strings.Contains(cond.Message, "set spec.count again") {
				t.Errorf("GraphResolved of an instance stored under the earlier schema = %+v", cond)
			}
			c.patch(t, "kro.run/v1alpha1", "Tally", ns, "t1", `{"spec": {"count": "4"}}`)
			c.waitState(t, "kro.run/v1alpha1", "Tally", ns, "t1", v1alpha1.InstanceActive)
			if text, _, _ := unstructured.NestedString(c.mustGet(t, "v1", "ConfigMap", ns, "t1-note").Object, "data", "text"); text != "4" {
				t.Errorf("t1's ConfigMap holds %q, want 4", text)
			}
			c.delete(t, "kro.run/v1alpha1", "Tally", ns, "t1")
			eventually(t, 20*time.Second, "t1 to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "Tally", ns, "t1")
				return err != nil, "still there"
			})
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "tallies")
			return ctx
		}).
		Assess("deleting the RGD stops serving and leaves CRD and instances", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// n1 went with the CRD deleted above (CRD deletion cascades to
			// its objects); a new instance stands in.
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Note, metadata: {name: n2, namespace: %s}, spec: {text: hi, owner: me}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Note", ns, "n2", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")
			eventually(t, 10*time.Second, "the RGD to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "notes")
				return err != nil, "still there"
			})
			c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "notes.kro.run")
			// The RGD is gone from the API server at once; the agent stops
			// serving when it has seen that, and says so by releasing.
			eventually(t, 10*time.Second, "n2 to be released", func() (bool, string) {
				n2 := c.mustGet(t, "kro.run/v1alpha1", "Note", ns, "n2")
				cond := condition(n2, v1alpha1.ConditionInstanceManaged)
				return len(n2.GetFinalizers()) == 0 && cond != nil && cond.Reason == v1alpha1.ReasonReleased, fmt.Sprint(n2.GetFinalizers(), cond)
			})
			c.delete(t, "v1", "ConfigMap", ns, "n2-note")
			never(t, 2*time.Second, "an instance of a deleted RGD was reconciled", func() bool {
				_, err := c.get(t, "v1", "ConfigMap", ns, "n2-note")
				return err == nil
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

func TestRestartConverges(t *testing.T) {
	const ns = "restart"
	const count = 12
	f := features.New("killing the agent mid-reconcile and restarting converges").
		Assess("no duplicate and no orphan", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			for i := 0; i < count; i++ {
				c.apply(t, webapp(ns, fmt.Sprintf("app%d", i), ", replicas: 1"))
			}
			time.Sleep(300 * time.Millisecond) // some instances part way
			stopAgentNow(t)
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "app0") // deleted while the agent is down
			startAgent(t, cfg)
			for i := 1; i < count; i++ {
				c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, fmt.Sprintf("app%d", i), v1alpha1.InstanceActive)
			}
			eventually(t, 30*time.Second, "app0 and its resources to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "app0")
				return err != nil, "app0 still there"
			})
			for _, kind := range []struct{ apiVersion, kind string }{{"v1", "ConfigMap"}, {"apps/v1", "Deployment"}, {"v1", "Service"}} {
				list, err := c.resource(t, kind.apiVersion, kind.kind).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelOwned + "=true"})
				if err != nil {
					t.Fatal(err)
				}
				if len(list.Items) != count-1 {
					t.Errorf("%d %ss, want %d (one per live instance)", len(list.Items), kind.kind, count-1)
				}
				for _, o := range list.Items {
					owner := o.GetLabels()[v1alpha1.LabelInstanceName]
					if _, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, owner); err != nil {
						t.Errorf("orphan %s %s of %s", kind.kind, o.GetName(), owner)
					}
				}
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// droppedKindRGD is an RGD of a ConfigMap named configName and, after it,
// extra (one resource, as YAML, or none), for the tests of a kind dropped
// from a graph.
func droppedKindRGD(name, kind, configName, extra string) string {
	return fmt.Sprintf(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: %s}
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
    spec: {}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "%s"}
      data: {key: value}
`, name, kind, configName) + extra
}

// accountRGD is a droppedKindRGD with, withAccount, a ServiceAccount named
// after the instance: no other test's graph uses ServiceAccounts, so
// nothing else makes the agent watch them.
func accountRGD(name, kind, configName string, withAccount bool) string {
	extra := ""
	if withAccount {
		extra = `
  - id: account
    template:
      apiVersion: v1
      kind: ServiceAccount
      metadata: {name: "${schema.metadata.name}"}
`
	}
	return droppedKindRGD(name, kind, configName, extra)
}

// TestKindsDroppedBeforeARestartAreStillPruned: a kind the RGD stopped using
// while its objects could not be pruned yet (an apply failed) is found again
// after a restart through the instance's ApplySet annotation, although no
// graph uses the kind any more: its objects are pruned once the graph
// applies, and deleted with their instance.
func TestKindsDroppedBeforeARestartAreStillPruned(t *testing.T) {
	const ns = "recorded-kinds"
	// No other test uses ServiceAccounts, so nothing else makes the agent
	// watch them after the restart.
	rgd := func(configName string, withAccount bool) string {
		return accountRGD("recorded-kinds", "RecordedKinds", configName, withAccount)
	}
	instance := func(name string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: RecordedKinds, metadata: {name: %s, namespace: %s}, spec: {}}", name, ns)
	}
	accountGone := func(c *clients, t *testing.T, name string) func() (bool, string) {
		return func() (bool, string) {
			_, err := c.get(t, "v1", "ServiceAccount", ns, name)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		}
	}
	f := features.New("a kind dropped from an RGD before a restart").
		Assess("is pruned, and deleted with its instance, after the restart", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd("${schema.metadata.name}", true))
			c.waitRGDActive(t, "recorded-kinds")
			for _, name := range []string{"kept", "deleted"} {
				c.apply(t, instance(name))
				c.waitState(t, "kro.run/v1alpha1", "RecordedKinds", ns, name, v1alpha1.InstanceActive)
				c.mustGet(t, "v1", "ServiceAccount", ns, name)
			}

			// The ServiceAccount leaves the graph while the ConfigMap cannot
			// be applied (its name is invalid), so nothing is pruned yet.
			c.apply(t, rgd("${schema.metadata.name}_Invalid", false))
			c.waitState(t, "kro.run/v1alpha1", "RecordedKinds", ns, "kept", v1alpha1.InstanceError)
			c.mustGet(t, "v1", "ServiceAccount", ns, "kept")
			stopAgentNow(t)
			startAgent(t, cfg)
			c.waitState(t, "kro.run/v1alpha1", "RecordedKinds", ns, "deleted", v1alpha1.InstanceError)

			c.deleteAll(t, "kro.run/v1alpha1", "RecordedKinds", ns, "deleted")
			if ok, err := accountGone(c, t, "deleted")(); !ok {
				t.Errorf("the deleted instance left its ServiceAccount behind: %s", err)
			}

			c.apply(t, rgd("${schema.metadata.name}", false))
			c.waitState(t, "kro.run/v1alpha1", "RecordedKinds", ns, "kept", v1alpha1.InstanceActive)
			eventually(t, 20*time.Second, "the dropped ServiceAccount to be pruned", accountGone(c, t, "kept"))
			eventually(t, 20*time.Second, "contains-group-kinds to shrink to ConfigMap", func() (bool, string) {
				got := c.mustGet(t, "kro.run/v1alpha1", "RecordedKinds", ns, "kept").GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]
				return got == "ConfigMap", got
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// TestKindsNoGraphManagesAreNotWatched: the agent watches a kind while a
// graph manages it, or while objects of it it manages are still there (to
// prune them, or to find them for an RGD that takes the kind back); once
// neither holds, its watch is closed, and a graph using the kind again
// opens it anew.
func TestKindsNoGraphManagesAreNotWatched(t *testing.T) {
	const ns = "unwatched"
	const cogs, cogsV2 = "/apis/example.dev/v1/cogs", "/apis/example.dev/v2/cogs"
	rgdAt := func(version string, withCog bool) string {
		doc := noteRGD("cogboxes", "CogBox", "", `"${schema.spec.text}"`)
		if withCog {
			doc += fmt.Sprintf(`
  - id: cog
    template:
      apiVersion: example.dev/%s
      kind: Cog
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: 1}
`, version)
		}
		return doc
	}
	rgd := func(withCog bool) string { return rgdAt("v1", withCog) }
	watchedAt := func(path string, want bool) func() (bool, string) {
		return func() (bool, string) {
			n := watching(path)
			return (n > 0) == want, fmt.Sprintf("%d watches of %s open", n, path)
		}
	}
	watched := func(want bool) func() (bool, string) { return watchedAt(cogs, want) }
	cogGone := func(c *clients, t *testing.T) func() (bool, string) {
		return func() (bool, string) {
			_, err := c.get(t, "example.dev/v1", "Cog", ns, "box")
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		}
	}
	f := features.New("the watch of a kind no graph manages").
		Assess("closes once its objects are gone, and opens when a graph uses the kind again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, exampleCRD("Cog", "example.dev"))
			eventually(t, 30*time.Second, "the RGD using Cog to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, rgd(true))
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "cogboxes")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: CogBox, metadata: {name: box, namespace: %s}, spec: {text: hi}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "CogBox", ns, "box", v1alpha1.InstanceActive)
			eventually(t, 10*time.Second, "the agent to watch cogs", watched(true))

			// Dropped from the graph: the cog is pruned, then nothing
			// needs the watch.
			c.apply(t, rgd(false))
			eventually(t, 30*time.Second, "the dropped cog to be pruned", cogGone(c, t))
			eventually(t, 30*time.Second, "the watch of cogs to close", watched(false))

			// Back in the graph: watched again, and the cog made again.
			c.apply(t, rgd(true))
			eventually(t, 30*time.Second, "the agent to watch cogs again", watched(true))
			eventually(t, 30*time.Second, "the cog to be made again", func() (bool, string) {
				ok, msg := cogGone(c, t)()
				return !ok, msg
			})

			// Moved to another version of the kind, served beside the
			// first: the cog is the same object through either, so the
			// watch of the version no graph uses closes although the cog
			// is there; and back again.
			crd := exampleCRD("Cog", "example.dev")
			crd += strings.NewReplacer("name: v1", "name: v2", "storage: true", "storage: false").
				Replace(crd[strings.Index(crd, "  - name: v1\n"):])
			c.apply(t, crd)
			cog := c.mustGet(t, "example.dev/v1", "Cog", ns, "box")
			for _, step := range []struct{ version, open, closed string }{{"v2", cogsV2, cogs}, {"v1", cogs, cogsV2}} {
				eventually(t, 30*time.Second, "the RGD using Cog "+step.version+" to be admitted", func() (bool, string) {
					_, err := c.tryApply(t, rgdAt(step.version, true))
					return err == nil, fmt.Sprint(err)
				})
				eventually(t, 30*time.Second, "the agent to watch "+step.open, watchedAt(step.open, true))
				eventually(t, 30*time.Second, "the watch of "+step.closed+" to close", watchedAt(step.closed, false))
				// Not only dropped by the API server, which ends the
				// watches of a CRD that changes, to be opened again.
				never(t, 3*time.Second, "the watch of "+step.closed+" opened again", func() bool { return watching(step.closed) > 0 })
				c.waitState(t, "kro.run/v1alpha1", "CogBox", ns, "box", v1alpha1.InstanceActive)
				if now := c.mustGet(t, "example.dev/v1", "Cog", ns, "box"); now.GetUID() != cog.GetUID() {
					t.Fatalf("the cog was replaced when the graph moved to %s", step.version)
				}
			}

			// The RGD deleted: its instance and objects stay, and the
			// watch that would find them for an RGD taking the kind back
			// stays open until the last cog is gone.
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "cogboxes")
			eventually(t, 30*time.Second, "the instance to be released", func() (bool, string) {
				fin := c.mustGet(t, "kro.run/v1alpha1", "CogBox", ns, "box").GetFinalizers()
				return len(fin) == 0, fmt.Sprint(fin)
			})
			if ok, msg := watched(true)(); !ok {
				t.Errorf("the watch of cogs closed while a cog the agent made is left: %s", msg)
			}
			c.delete(t, "example.dev/v1", "Cog", ns, "box")
			eventually(t, 30*time.Second, "the watch of cogs to close after the last cog", watched(false))
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An RGD's status is written while its CRD is being established, so the
// reconcile the CRD's events start often reads an RGD older than the one
// on the server. That is the informer catching up, not an error: nothing
// may be logged or counted as one.
func TestNewRGDsReportNoReconcileErrors(t *testing.T) {
	const count = 10
	f := features.New("RGDs applied at once come up without reconcile errors").
		Assess("none counted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgent(t, cfg)
			c := newClients(t, cfg)
			before := reconcileErrors(t, "resourcegraphdefinition")
			for i := range count {
				c.apply(t, noteRGD(fmt.Sprintf("burst%d", i), fmt.Sprintf("Burst%d", i), "", `"${schema.spec.text}"`))
			}
			for i := range count {
				c.waitRGDActive(t, fmt.Sprintf("burst%d", i))
			}
			if n := reconcileErrors(t, "resourcegraphdefinition") - before; n != 0 {
				t.Errorf("%v reconcile errors while %d RGDs came up, want none", n, count)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// Deleting an RGD leaves its CRD and instances, but nothing reconciles the
// instances any more: the agent takes its finalizer off them, or deleting
// one (or the CRD) would wait forever. Their resources stay, as the RGD's
// deletion leaves everything.
func TestInstancesOfADeletedRGDCanBeDeleted(t *testing.T) {
	const ns = "released"
	note := func(name string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Memo, metadata: {name: %s, namespace: %s}, spec: {text: hi}}", name, ns)
	}
	hasFinalizer := func(c *clients, name string) (bool, error) {
		inst, err := c.get(t, "kro.run/v1alpha1", "Memo", ns, name)
		if err != nil {
			return false, err
		}
		return contains(inst.GetFinalizers(), v1alpha1.Finalizer), nil
	}
	gone := func(c *clients, name string) func() (bool, string) {
		return func() (bool, string) {
			_, err := c.get(t, "kro.run/v1alpha1", "Memo", ns, name)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		}
	}
	// finalizer waits for the agent's finalizer to be on (or off) a Memo.
	finalizer := func(c *clients, name string, want bool) {
		t.Helper()
		what := map[bool]string{true: " to have the agent's finalizer back", false: ": the agent's finalizer to come off"}[want]
		eventually(t, 20*time.Second, name+what, func() (bool, string) {
			has, err := hasFinalizer(c, name)
			return err == nil && has == want, fmt.Sprint(has, err)
		})
	}
	// deletedWithItsNote deletes a managed Memo and waits for it and its
	// ConfigMap to be gone.
	deletedWithItsNote := func(c *clients, name string) {
		t.Helper()
		c.delete(t, "kro.run/v1alpha1", "Memo", ns, name)
		eventually(t, 20*time.Second, name+" and its ConfigMap to be deleted", func() (bool, string) {
			_, err := c.get(t, "v1", "ConfigMap", ns, name+"-note")
			ok, msg := gone(c, name)()
			return ok && apierrors.IsNotFound(err), msg + " " + fmt.Sprint(err)
		})
	}
	f := features.New("instances of a deleted RGD").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			agentIn(t, cfg, ns)
			return ctx
		}).
		Assess("are released when the RGD is deleted, and then delete at once, leaving their resources", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, noteRGD("memos", "Memo", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "memos")
			c.apply(t, note("m1"))
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m1", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "memos")
			finalizer(c, "m1", false)
			// Events are sent in the background: the one recorded as the
			// finalizer came off may reach the API server a moment later.
			eventually(t, 10*time.Second, "the Released event", func() (bool, string) {
				events := eventsAbout(t, c, ns, "m1", "Released")
				if len(events) != 1 {
					return false, fmt.Sprint(events)
				}
				note := fmt.Sprint(events[0].Object["note"])
				return strings.Contains(note, "ResourceGraphDefinition memos was deleted"), note
			})
			// kubectl kro explains the instance without its RGD.
			m1 := c.mustGet(t, "kro.run/v1alpha1", "Memo", ns, "m1")
			out, err := kro(t, cfg, nil, "why-not-ready", "memo", "m1", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "Root cause: Memo m1 belongs to ResourceGraphDefinition memos, which was deleted") ||
				!strings.Contains(out, "apply ResourceGraphDefinition memos (or another for Memo) again and kro-agent takes it back") ||
				!strings.Contains(out, "kro.run/instance-id="+string(m1.GetUID())+" (kubectl kro tree memo m1 -n "+ns+" lists them)") {
				t.Errorf("why-not-ready of a released instance: %v\n%s", err, out)
			}
			out, err = kro(t, cfg, nil, "explain-conditions", "memo", "m1", "-n", ns)
			if err != nil || !strings.Contains(out, "Ready=False  reason Released") || strings.Contains(out, "ResourceGraphDefinition/") ||
				!strings.Contains(out, "ResourcesReady=Unknown  reason Released") || !strings.Contains(out, "GraphResolved=Unknown  reason Released") {
				t.Errorf("explain-conditions of a released instance: %v\n%s", err, out)
			}
			// An edit after the release leaves its conditions behind, for
			// want of an agent, not for an agent running late.
			if _, err := c.resource(t, "kro.run/v1alpha1", "Memo").Namespace(ns).Patch(ctx, "m1", types.MergePatchType, []byte(`{"spec":{"text":"edited"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			out, err = kro(t, cfg, nil, "explain-conditions", "memo", "m1", "-n", ns)
			if err != nil || !strings.Contains(out, "(STALE: observed generation 1, object is at 2; its ResourceGraphDefinition was deleted: kro-agent manages it no more)") {
				t.Errorf("explain-conditions of a released instance edited since: %v\n%s", err, out)
			}
			// status lists it, asked for its kind and among every instance:
			// the kind's CRD stays, labelled by the RGD that generated it.
			for _, args := range [][]string{{"status", "memo"}, {"status"}} {
				out, err = kro(t, cfg, nil, append(args, "-n", ns)...)
				listed := slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
					f := strings.Fields(line)
					return len(f) == 6 && strings.Join(f[:5], " ") == "Memo m1 FAILED False Released"
				})
				if err != nil || !listed {
					t.Errorf("%q with a released instance: %v\n%s", args, err, out)
				}
			}
			c.delete(t, "kro.run/v1alpha1", "Memo", ns, "m1")
			eventually(t, 10*time.Second, "m1 to be deleted", gone(c, "m1"))
			c.mustGet(t, "v1", "ConfigMap", ns, "m1-note")
			return ctx
		}).
		Assess("are released, deleting or not, when the RGD went while the agent was down", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, noteRGD("memos", "Memo", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "memos")
			for _, name := range []string{"m2", "m3"} {
				c.apply(t, note(name))
				c.waitState(t, "kro.run/v1alpha1", "Memo", ns, name, v1alpha1.InstanceActive)
			}
			stopAgentNow(t)
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "memos")
			c.delete(t, "kro.run/v1alpha1", "Memo", ns, "m3")
			never(t, time.Second, "m3 to go with the agent stopped", func() bool { ok, _ := gone(c, "m3")(); return ok })
			startAgent(t, cfg)
			eventually(t, 20*time.Second, "m3 to be deleted", gone(c, "m3"))
			finalizer(c, "m2", false)
			// It no longer claims to be ACTIVE and Ready.
			m2 := c.mustGet(t, "kro.run/v1alpha1", "Memo", ns, "m2")
			if st, _, _ := unstructured.NestedString(m2.Object, "status", "state"); st != string(v1alpha1.InstanceFailed) {
				t.Errorf("state of the released m2 = %q, want FAILED", st)
			}
			if cond := condition(m2, v1alpha1.ConditionInstanceManaged); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonReleased ||
				!strings.Contains(cond.Message, "ResourceGraphDefinition memos was deleted") {
				t.Errorf("InstanceManaged of the released m2 = %+v", cond)
			}
			if cond := condition(m2, v1alpha1.ConditionReady); cond == nil || cond.Status != metav1.ConditionFalse {
				t.Errorf("Ready of the released m2 = %+v", cond)
			}
			// tree lists what it left in place, found by its label among
			// the kinds recorded on it, with no graph to nest or judge them.
			out, err := kro(t, cfg, nil, "tree", "memo", "m2", "-n", ns)
			if err != nil || !regexp.MustCompile(`(?m)^└─ note +ConfigMap/m2-note +`+ns+` +Unknown +Current `).MatchString(out) ||
				!strings.Contains(out, "Memo m2 was released when ResourceGraphDefinition memos was deleted: kro-agent no longer manages it. Above is what it left in place (labelled kro.run/instance-id="+string(m2.GetUID())+")") {
				t.Errorf("kubectl kro tree of a released instance: %v\n%s", err, out)
			}
			out, err = kro(t, cfg, nil, "tree", "memo", "m2", "-n", ns, "-o", "json")
			var tree plugin.Tree
			if err != nil || json.Unmarshal([]byte(out), &tree) != nil || tree.Instance.Reason != "FAILED Released" || tree.ReleasedFrom != "memos" ||
				len(tree.Rows) != 1 || tree.Rows[0].NodeID != "note" || tree.Rows[0].Name != "m2-note" || tree.Rows[0].Ready != plugin.VerdictUnknown {
				t.Errorf("kubectl kro tree -o json of a released instance: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("are adopted again, finalizer and all, by the RGD created again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, noteRGD("memos", "Memo", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "memos")
			finalizer(c, "m2", true)
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m2", v1alpha1.InstanceActive)
			deletedWithItsNote(c, "m2")

			// m1, deleted while released, left its ConfigMap behind: an
			// instance of the name made again adopts it, where deleting it
			// first would take down what runs on it, and dry-run and tree
			// say so before.
			left := c.mustGet(t, "v1", "ConfigMap", ns, "m1-note")
			leftBy := "left by an earlier instance of this name (kro.run/instance-id " + left.GetLabels()[v1alpha1.LabelInstanceID] + "), deleted since"
			file := filepath.Join(t.TempDir(), "m1.yaml")
			writeFile(t, file, note("m1"))
			if preview, err := kro(t, cfg, nil, "dry-run", "-f", file); err != nil ||
				!strings.Contains(preview, "note: ConfigMap "+ns+"/m1-note UPDATE\n  kro-agent adopts it: it was "+leftBy+"\n") {
				t.Errorf("dry-run of an instance made again: %v\n%s", err, preview)
			}
			stopAgentNow(t)
			c.apply(t, note("m1"))
			out, err := kro(t, cfg, nil, "tree", "memo", "m1", "-n", ns, "-o", "json")
			var tree plugin.Tree
			if err != nil || json.Unmarshal([]byte(out), &tree) != nil || len(tree.Rows) != 1 || tree.Rows[0].Ready != plugin.VerdictMissing ||
				tree.Rows[0].Reason != "exists, "+leftBy+": kro-agent adopts it when it applies this resource" {
				t.Errorf("kubectl kro tree -o json of an instance made again, not reconciled yet: %v\n%s", err, out)
			}
			// Suspended until kro-agent's caches have synced; then the
			// ConfigMaps' watch held, as a busy informer lags: the passes
			// after the one that adopts read m1-note as the earlier
			// instance's still, and must not adopt it again.
			suspend := func(value string) {
				c.patch(t, "kro.run/v1alpha1", "Memo", ns, "m1", fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, v1alpha1.AnnotationReconcile, value))
			}
			suspend(`"suspended"`)
			startAgent(t, cfg)
			eventually(t, 10*time.Second, "ResourcesReady to say Suspended", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Memo", ns, "m1")
				cond := condition(inst, "ResourcesReady")
				return cond != nil && cond.Reason == "Suspended", conditionSummary(inst)
			})
			// A suspended pass waits for no cache: another instance's
			// first pass waits for the ConfigMaps' informer to have
			// listed them, which the hold below must not catch halfway.
			c.apply(t, note("m5"))
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m5", v1alpha1.InstanceActive)
			release := holdWatches("/configmaps")
			defer release()
			suspend("null")
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m1", v1alpha1.InstanceActive)
			// A change to the instance brings another pass while the
			// informer still lags.
			c.patch(t, "kro.run/v1alpha1", "Memo", ns, "m1", `{"metadata":{"annotations":{"e2e/poke":"1"}}}`)
			time.Sleep(2 * time.Second)
			if adoptions := eventsAbout(t, c, ns, "m1", "Adopted"); len(adoptions) != 1 {
				t.Errorf("m1-note adopted %d times while the informer lagged, want once: %v", len(adoptions), adoptions)
			}
			release()
			m1 := c.mustGet(t, "kro.run/v1alpha1", "Memo", ns, "m1")
			if adopted := c.mustGet(t, "v1", "ConfigMap", ns, "m1-note"); adopted.GetUID() != left.GetUID() ||
				adopted.GetLabels()[v1alpha1.LabelInstanceID] != string(m1.GetUID()) {
				t.Errorf("m1-note is %s labelled for %s, want %s (the one left) labelled for m1, %s",
					adopted.GetUID(), adopted.GetLabels()[v1alpha1.LabelInstanceID], left.GetUID(), m1.GetUID())
			}
			eventually(t, 10*time.Second, "the Adopted event", func() (bool, string) {
				events := eventsAbout(t, c, ns, "m1", "Adopted")
				if len(events) != 1 {
					return false, fmt.Sprint(events)
				}
				note := fmt.Sprint(events[0].Object["note"])
				return note == "adopted ConfigMap "+ns+"/m1-note (resource note) in the local cluster, "+leftBy, note
			})
			deletedWithItsNote(c, "m5")
			deletedWithItsNote(c, "m1")
			return ctx
		}).
		Assess("are one RGD's at a time, and adopted by an RGD of another name once theirs is deleted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, note("m4"))
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m4", v1alpha1.InstanceActive)
			successor := noteRGD("memo-notes", "Memo", "", `"${schema.spec.text}"`)
			if _, err := c.tryApply(t, successor); err == nil || !strings.Contains(err.Error(),
				"spec.schema.kind: Forbidden: the kind Memo of kro.run is defined by ResourceGraphDefinition memos already") {
				t.Errorf("a second RGD of Memo: %v, want it denied", err)
			}
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "memos")
			finalizer(c, "m4", false)
			c.apply(t, successor)
			c.waitRGDActive(t, "memo-notes")
			finalizer(c, "m4", true)
			c.waitState(t, "kro.run/v1alpha1", "Memo", ns, "m4", v1alpha1.InstanceActive)
			crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "memoes.kro.run")
			if owner := crd.GetLabels()[v1alpha1.LabelRGDName]; owner != "memo-notes" {
				t.Errorf("the CRD of Memo is labelled for RGD %q, want memo-notes", owner)
			}
			deletedWithItsNote(c, "m4")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A CRD that no RGD generated is someone else's API, holding their objects:
// an RGD of its kind is denied at admission, and one that gets past the
// webhook (the CRD created under a stopped agent) is refused by the agent,
// which leaves the CRD as it is.
func TestRGDsDoNotTakeACRDThatIsNotTheirs(t *testing.T) {
	gadgetCRD := exampleCRD("Gadget", "kro.run")
	const notTheirs = "CustomResourceDefinition gadgets.kro.run exists and was not generated from a ResourceGraphDefinition"
	untouched := func(t *testing.T, c *clients) {
		t.Helper()
		crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gadgets.kro.run")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if len(versions) != 1 || !strings.Contains(fmt.Sprint(versions[0]), "color") || crd.GetLabels()[v1alpha1.LabelOwned] != "" {
			t.Errorf("the user's CRD was changed: labels %v, versions %v", crd.GetLabels(), versions)
		}
	}
	f := features.New("a CRD no RGD generated").
		Assess("is not taken by an RGD of its kind", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, "gadgets")
			c.apply(t, noteRGD("gadgets", "Gadget", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "gadgets")
			// Replaced by a CRD of the user's own under a stopped agent,
			// whose webhook cannot be asked.
			stopAgentNow(t)
			c.deleteCRD(t, "gadgets.kro.run")
			c.apply(t, gadgetCRD)
			startAgent(t, cfg)
			eventually(t, 30*time.Second, "the RGD to report the CRD is not its own", func() (bool, string) {
				cond := rgdCondition(t, c, "gadgets", "KindReady")
				return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, notTheirs), fmt.Sprint(cond)
			})
			untouched(t, c)
			// A new RGD of the kind is denied at once.
			c.deleteAll(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "gadgets")
			if _, err := c.tryApply(t, noteRGD("gadgetry", "Gadget", "", `"${schema.spec.text}"`)); err == nil ||
				!strings.Contains(err.Error(), "spec.schema.kind: Forbidden: "+notTheirs) {
				t.Errorf("an RGD of the kind of the user's CRD: %v, want it denied saying %q", err, notTheirs)
			}
			untouched(t, c)
			c.deleteCRD(t, "gadgets.kro.run")

			// Created by the user just after the agent found none, before
			// its first write: of the version the RGD generates, so the
			// write would go through but for the user's fields.
			race := &lookupRace{crd: "gadgets.kro.run", done: make(chan error, 1), create: func() error {
				_, err := c.tryApply(t, strings.Replace(gadgetCRD, "- name: v1\n", "- name: v1alpha1\n", 1))
				return err
			}}
			crdRace.Store(race)
			defer crdRace.Store(nil)
			c.apply(t, noteRGD("gadgetry", "Gadget", "", `"${schema.spec.text}"`))
			select {
			case err := <-race.done:
				if err != nil {
					t.Fatalf("creating the user's CRD after the agent's lookup: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the agent never looked for gadgets.kro.run")
			}
			eventually(t, 30*time.Second, "the RGD to report the CRD is not its own", func() (bool, string) {
				cond := rgdCondition(t, c, "gadgetry", "KindReady")
				return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, notTheirs), fmt.Sprint(cond)
			})
			crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gadgets.kro.run")
			if versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions"); len(versions) != 1 ||
				!strings.Contains(fmt.Sprint(versions[0]), "color") || crd.GetLabels()[v1alpha1.LabelOwned] != "" {
				t.Errorf("the CRD the user created before the agent's first write was changed: labels %v, versions %v", crd.GetLabels(), versions)
			}
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "gadgetry")
			c.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gadgets.kro.run")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An RGD admitted once loses its graph when the CRD of a kind it uses is
// uninstalled, whether or not it has instances to notice (the agent
// watches every CRD's metadata), and on the agent's next start. Its
// instances must not go on claiming to be ACTIVE: they say why nothing is
// done for them, one deleted meanwhile shows DELETING and waits, and both
// resume once the kind is back.
func TestInstancesOfAnInvalidRGDSaySo(t *testing.T) {
	const ns = "held"
	gizmoCRD := exampleCRD("Gizmo", "example.net")
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gizmoapps}
spec:
  schema:
    apiVersion: v1alpha1
    kind: GizmoApp
    spec:
      size: integer | default=1
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-config"}
      data: {size: "${string(schema.spec.size)}"}
  - id: gizmo
    template:
      apiVersion: example.net/v1
      kind: Gizmo
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`
	// No instance of it ever applies a Gizmo.
	const idle = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gizmoboxes}
spec:
  schema:
    apiVersion: v1alpha1
    kind: GizmoBox
  resources:
  - id: gizmo
    template:
      apiVersion: example.net/v1
      kind: Gizmo
      metadata: {name: "${schema.metadata.name}"}
`
	app := func(name string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: GizmoApp, metadata: {name: %s, namespace: %s}, spec: {size: 2}}", name, ns)
	}

	f := features.New("instances of an RGD whose graph became invalid").
		Assess("say so, show a deletion as waiting, and resume when the RGD is valid again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			// graphAccepted waits for an RGD's GraphAccepted to be true,
			// or false naming Gizmo.
			graphAccepted := func(name string, want metav1.ConditionStatus) {
				t.Helper()
				eventually(t, 30*time.Second, "GraphAccepted of RGD "+name+" to be "+string(want), func() (bool, string) {
					cond := rgdCondition(t, c, name, "GraphAccepted")
					return cond != nil && cond.Status == want && (want == metav1.ConditionTrue || strings.Contains(cond.Message, "Gizmo")), fmt.Sprint(cond)
				})
			}
			c.apply(t, gizmoCRD)
			eventually(t, 30*time.Second, "the RGDs using Gizmo to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, rgd)
				if err == nil {
					_, err = c.tryApply(t, idle)
				}
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "gizmoapps")
			c.waitRGDActive(t, "gizmoboxes")
			for _, name := range []string{"g1", "g2"} {
				c.apply(t, app(name))
				c.waitState(t, "kro.run/v1alpha1", "GizmoApp", ns, name, v1alpha1.InstanceActive)
			}
			// kubectl's discovery cache now lists Gizmo.
			if out, err := kro(t, cfg, nil, "tree", "gizmoapp", "g2", "-n", ns); err != nil || !strings.Contains(out, "Gizmo/g2") {
				t.Errorf("kubectl kro tree gizmoapp g2: %v\n%s", err, out)
			}

			// Uninstalled under a running agent: both RGDs say so, also
			// the one without an instance to find Gizmo not served, as
			// soon as the CRD is terminating (held here by a finalizer on
			// g2's Gizmo), while discovery still lists the kind.
			gizmos := c.resource(t, "example.net/v1", "Gizmo").Namespace(ns)
			if _, err := gizmos.Patch(ctx, "g2", types.MergePatchType, []byte(`{"metadata":{"finalizers":["example.net/hold"]}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			c.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gizmos.example.net")
			graphAccepted("gizmoapps", metav1.ConditionFalse)
			graphAccepted("gizmoboxes", metav1.ConditionFalse)
			const terminating = "example.net/v1 Gizmo (its CustomResourceDefinition gizmos.example.net is deleted or being deleted)"
			if cond := rgdCondition(t, c, "gizmoboxes", "GraphAccepted"); !strings.Contains(cond.Message, terminating) {
				t.Errorf("GraphAccepted of gizmoboxes with Gizmo's CRD terminating = %q, want it to say %q", cond.Message, terminating)
			}
			// A new RGD using Gizmo is denied at admission meanwhile, in
			// the same words.
			if _, err := c.tryApply(t, strings.NewReplacer("gizmoboxes", "gizmocrates", "GizmoBox", "GizmoCrate").Replace(idle)); err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), terminating) {
				t.Errorf("an RGD using Gizmo applied while its CRD terminates: %v, want it denied saying %q", err, terminating)
			}
			if _, err := gizmos.Patch(ctx, "g2", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "Gizmo's CRD to be gone", func() (bool, string) {
				_, err := c.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gizmos.example.net")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			g2 := c.waitState(t, "kro.run/v1alpha1", "GizmoApp", ns, "g2", v1alpha1.InstanceFailed)
			if cond := condition(g2, v1alpha1.ConditionGraphResolved); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonGraphNotAccepted ||
				!strings.Contains(cond.Message, "ResourceGraphDefinition gizmoapps is not accepted") {
				t.Errorf("GraphResolved of g2 with its RGD invalid = %+v", cond)
			}
			if cond := condition(g2, v1alpha1.ConditionReady); cond == nil || cond.Status != metav1.ConditionFalse {
				t.Errorf("Ready of g2 with its RGD invalid = %+v", cond)
			}
			// A fresh agent holds the instances from the start.
			stopAgentNow(t)
			startAgent(t, cfg)
			// Whether the API server still publishes Gizmo's schema for a
			// while or not, the tree shows why nothing is done.
			if out, err := kro(t, cfg, nil, "tree", "gizmoapp", "g2", "-n", ns); err != nil || !strings.Contains(out, "FAILED GraphNotAccepted") || strings.Contains(out, "has not published") {
				t.Errorf("kubectl kro tree gizmoapp g2 with Gizmo gone: %v\n%s", err, out)
			}
			// The advice is to bring the kind back.
			if out, err := kro(t, cfg, nil, "why-not-ready", "gizmoapp", "g2", "-n", ns); !strings.Contains(out, "install the CRD of the kind named above") {
				t.Errorf("kubectl kro why-not-ready gizmoapp g2 with Gizmo gone: %v\n%s", err, out)
			}
			// The instances that need looking at are listed, although
			// their RGD is not Active.
			if out, err := kro(t, cfg, nil, "status", "-n", ns); err != nil || !regexp.MustCompile(`GizmoApp\s+g2\s+FAILED\s+False\s+GraphNotAccepted`).MatchString(out) {
				t.Errorf("kubectl kro status with Gizmo gone: %v\n%s", err, out)
			}

			c.delete(t, "kro.run/v1alpha1", "GizmoApp", ns, "g1")
			g1 := c.waitState(t, "kro.run/v1alpha1", "GizmoApp", ns, "g1", v1alpha1.InstanceDeleting)
			if cond := condition(g1, v1alpha1.ConditionGraphResolved); cond == nil || !strings.Contains(cond.Message, "the deletion waits until then") {
				t.Errorf("GraphResolved of g1, deleted with its RGD invalid = %+v", cond)
			}
			// Nothing is deleted out of order.
			c.mustGet(t, "v1", "ConfigMap", ns, "g1-config")

			c.apply(t, gizmoCRD)
			// The RGD is checked again for the missing kind on its own.
			eventually(t, 60*time.Second, "g1 and its ConfigMap to be deleted", func() (bool, string) {
				_, errInst := c.get(t, "kro.run/v1alpha1", "GizmoApp", ns, "g1")
				_, errCM := c.get(t, "v1", "ConfigMap", ns, "g1-config")
				return apierrors.IsNotFound(errInst) && apierrors.IsNotFound(errCM), fmt.Sprint(errInst, errCM)
			})
			c.waitState(t, "kro.run/v1alpha1", "GizmoApp", ns, "g2", v1alpha1.InstanceActive)
			c.mustGet(t, "example.net/v1", "Gizmo", ns, "g2")
			c.waitRGDActive(t, "gizmoboxes")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An RGD of many resources whose kind is uninstalled has more errors than a
// condition's message may hold (32768 bytes): its status is written all
// the same, with the errors that fit and a count of the others, rather than
// refused whole, which would leave GraphAccepted saying it is valid.
func TestManyErrorsFitTheRGDsConditions(t *testing.T) {
	crd := exampleCRD("Sprocket", "example.org")
	var rgd strings.Builder
	rgd.WriteString(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: sprocketeers}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Sprocketeer
  resources:
`)
	const n = 450
	for i := range n {
		fmt.Fprintf(&rgd, "  - id: sprocketNumber%d\n    template: {apiVersion: example.org/v1, kind: Sprocket, metadata: {name: \"${schema.metadata.name}-%d\"}}\n", i, i)
	}
	f := features.New("an RGD with more errors than a condition holds").
		Assess("says so in its conditions, with the errors that fit", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, "sprockets")
			defer c.deleteAll(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "sprocketeers")
			c.apply(t, crd)
			eventually(t, 30*time.Second, "the RGD using Sprocket to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, rgd.String())
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "sprocketeers")
			c.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "sprockets.example.org")
			eventually(t, 30*time.Second, "GraphAccepted to be False with the errors that fit", func() (bool, string) {
				cond := rgdCondition(t, c, "sprocketeers", "GraphAccepted")
				if cond == nil || cond.Status != metav1.ConditionFalse {
					return false, fmt.Sprint(cond)
				}
				body, note, _ := strings.Cut(cond.Message, "\n… and ")
				kept := strings.Count(body, "\n") + 1
				want := fmt.Sprintf("%d more lines, left out to keep within 32768 bytes", n-kept)
				return len(cond.Message) <= 32768 && strings.HasPrefix(body, "spec.resources[sprocketNumber0].template.kind: ") && note == want,
					fmt.Sprintf("%d bytes, %d lines, then %q; want %q", len(cond.Message), kept, note, want)
			})
			// Its Warning Event too, cut to what the events API takes.
			eventually(t, 30*time.Second, "a Warning Event saying GraphAccepted is False", func() (bool, string) {
				for _, e := range eventsAbout(t, c, "default", "sprocketeers", "InvalidResourceGraph") {
					if note, _ := e.Object["note"].(string); strings.HasPrefix(note, "GraphAccepted is False: spec.resources[sprocketNumber0].template.kind: ") {
						return true, ""
					}
				}
				return false, "none"
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// TestFieldsUpstreamKroAppliedAreTakenOver: when kro-agent serves an
// instance upstream kro served before, it keeps the objects and takes over
// the fields kro's field manager applied to them. Server-side apply removes
// a field its applier stops sending only when nobody else holds it, so
// without the hand-over what kro set and the graph does not (its own
// annotations and labels, a key a template dropped) would stay for good.
func TestFieldsUpstreamKroAppliedAreTakenOver(t *testing.T) {
	const ns = "from-kro"
	instance := func(text string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: KroNote, metadata: {name: old, namespace: %s}, spec: {text: %s}}", ns, text)
	}
	f := features.New("objects upstream kro applied").
		Assess("lose the fields kro set that the graph does not", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, noteRGD("kronotes", "KroNote", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "kronotes")
			c.apply(t, instance("a"))
			c.waitState(t, "kro.run/v1alpha1", "KroNote", ns, "old", v1alpha1.InstanceActive)
			uid := c.mustGet(t, "v1", "ConfigMap", ns, "old-note").GetUID()

			// As kro leaves an object: applied by its field manager, with
			// an annotation of its own and a key of an earlier template.
			stopAgentNow(t)
			byKro := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "old-note", "namespace": ns, "annotations": map[string]any{"internal.kro.run/apply-order": "0"}},
				"data":     map[string]any{"text": "a", "dropped": "by the template since"},
			}}
			if _, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Apply(ctx, "old-note", byKro,
				metav1.ApplyOptions{FieldManager: "kro.run/applyset", Force: true}); err != nil {
				t.Fatal(err)
			}
			c.apply(t, instance("b"))
			startAgent(t, cfg)

			eventually(t, 30*time.Second, "the fields kro applied to be gone", func() (bool, string) {
				cm := c.mustGet(t, "v1", "ConfigMap", ns, "old-note")
				data := fmt.Sprint(cm.Object["data"])
				_, annotated := cm.GetAnnotations()["internal.kro.run/apply-order"]
				return data == "map[text:b]" && !annotated, fmt.Sprintf("data %s, annotations %v", data, cm.GetAnnotations())
			})
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "old-note")
			if cm.GetUID() != uid {
				t.Errorf("the ConfigMap was replaced (uid %s, was %s)", cm.GetUID(), uid)
			}
			for _, e := range cm.GetManagedFields() {
				if e.Manager == "kro.run/applyset" {
					t.Errorf("kro's field manager still holds %s", e.FieldsV1.GetRawString())
				}
			}
			c.waitState(t, "kro.run/v1alpha1", "KroNote", ns, "old", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A custom type written with required=true makes the fields of that type
// required, as kro reads such types; a struct type with a required field is
// not defaulted to {}, one whose fields all have defaults is.
func TestRequiredCustomTypesMakeTheirFieldsRequired(t *testing.T) {
	const ns = "required-types"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: connections}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Connection
    types:
      Name: string | required=true minLength=1
      Server:
        host: Name
        port: integer | default=5432
      Retry:
        attempts: integer | default=3
    spec:
      app: Name
      server: Server
      retry: Retry
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-db"}
      data:
        url: "${schema.spec.app}@${schema.spec.server.host}:${string(schema.spec.server.port)}"
        attempts: "${string(schema.spec.retry.attempts)}"
`
	f := features.New("required custom types").
		Assess("a field of a required type is required, and defaults still apply", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd)
			c.waitRGDActive(t, "connections")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Connection", ns)

			_, err := c.tryApply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Connection, metadata: {name: nameless, namespace: %s}, spec: {server: {host: db1}}}", ns))
			if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.app: Required value") {
				t.Errorf("an instance without spec.app: %v", err)
			}
			_, err = c.tryApply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Connection, metadata: {name: hostless, namespace: %s}, spec: {app: shop, server: {port: 1}}}", ns))
			if err == nil || !strings.Contains(err.Error(), "spec.server.host: Required value") {
				t.Errorf("an instance without spec.server.host: %v", err)
			}

			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Connection, metadata: {name: shop, namespace: %s}, spec: {app: shop, server: {host: db1}}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Connection", ns, "shop", v1alpha1.InstanceActive)
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "shop-db")
			if data, _, _ := unstructured.NestedStringMap(cm.Object, "data"); data["url"] != "shop@db1:5432" || data["attempts"] != "3" {
				t.Errorf("ConfigMap data = %v, want the defaults of server.port and retry.attempts filled in", data)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A schema change that would break stored instances is refused only while
// some are stored: an author still shaping a kind no one uses yet is not
// asked to annotate each try, and a refused change goes through once the
// last instance is deleted.
func TestBreakingChangeWithNoInstanceStoredGoesThrough(t *testing.T) {
	const ns = "drafts"
	f := features.New("a breaking change of an unused kind").
		Assess("applies while no instance is stored, and is refused once one is", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			specOf := func() map[string]any {
				crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "drafts.kro.run")
				versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
				spec, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec")
				return spec
			}
			c.apply(t, noteRGD("drafts", "Draft", ", owner: string", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "drafts")
			// owner removed, reviewer newly required: two breaking changes.
			c.apply(t, noteRGD("drafts", "Draft", ", reviewer: \"string | required=true\"", `"${schema.spec.text}"`))
			eventually(t, 20*time.Second, "the new schema in the CRD", func() (bool, string) {
				spec := specOf()
				_, hasOwner, _ := unstructured.NestedMap(spec, "properties", "owner")
				required, _, _ := unstructured.NestedStringSlice(spec, "required")
				return !hasOwner && slices.Contains(required, "reviewer"), fmt.Sprint(spec)
			})
			c.waitRGDActive(t, "drafts")

			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Draft, metadata: {name: d1, namespace: %s}, spec: {text: hello, reviewer: ann}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Draft", ns, "d1", v1alpha1.InstanceActive)
			c.apply(t, noteRGD("drafts", "Draft", "", `"${schema.spec.text}"`))
			eventually(t, 20*time.Second, "KindReady to refuse the change", func() (bool, string) {
				cond := rgdCondition(t, c, "drafts", "KindReady")
				return cond != nil && cond.Reason == "BreakingChange" && strings.Contains(cond.Message, "spec.reviewer was removed") && strings.Contains(cond.Message, "it is applied once none is left"), fmt.Sprint(cond)
			})
			if _, still, _ := unstructured.NestedMap(specOf(), "properties", "reviewer"); !still {
				t.Error("the refused schema reached the CRD: spec.reviewer is gone")
			}

			// Deleting the last instance lets the refused change through,
			// with no edit of the RGD.
			c.delete(t, "kro.run/v1alpha1", "Draft", ns, "d1")
			eventually(t, 30*time.Second, "the refused change applied once no instance is left", func() (bool, string) {
				_, still, _ := unstructured.NestedFieldNoCopy(specOf(), "properties", "reviewer")
				cond := rgdCondition(t, c, "drafts", "KindReady")
				return !still && cond != nil && cond.Status == metav1.ConditionTrue, fmt.Sprint(cond)
			})
			c.waitRGDActive(t, "drafts")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
