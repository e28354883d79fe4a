//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/plugin"
	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// gatedRGD: a ConfigMap that is ready only once someone writes ready=yes
// into it, and a Secret that depends on it.
const gatedRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gated}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Gated
    spec: {name: string}
    status:
      gate: ${gate.metadata.name}
      secretName: ${secret.metadata.name}
      conditions:
      - type: GateOpen
        status: ${gate.data.?ready.orValue('no') == 'yes'}
        reason: GateChecked
        message: gate says ${gate.data.?ready.orValue('nothing')}
      - type: AuditPending
        status: ${!has(gate.data.audited)}
        polarity: Negative
        countsTowardReady: false
      - type: Sealed
        status: ${has(secret.data)}
        reason: SecretChecked
        countsTowardReady: false
      - type: Numbered
        status: ${int(gate.data.purpose) > 0}
        reason: PurposeCounted
        countsTowardReady: false
  resources:
  - id: gate
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-gate"}
      data: {purpose: gate}
    readyWhen: ["${gate.data.?ready.orValue('no') == 'yes'}"]
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.spec.name}-secret"}
      stringData: {from: "${gate.metadata.name}"}
`

func TestReadinessGating(t *testing.T) {
	const ns = "gating"
	f := features.New("a dependent waits for its dependency's readyWhen").
		Assess("the Secret is not created while the gate is not ready", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, gatedRGD)
			c.waitRGDActive(t, "gated")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Gated, metadata: {name: g, namespace: %s}, spec: {name: g}}", ns))
			eventually(t, 10*time.Second, "the gate ConfigMap", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "g-gate")
				return err == nil, fmt.Sprint(err)
			})
			never(t, 2*time.Second, "the Secret was created before its dependency was ready", func() bool {
				_, err := c.get(t, "v1", "Secret", ns, "g-secret")
				return err == nil
			})
			inst := c.mustGet(t, "kro.run/v1alpha1", "Gated", ns, "g")
			msg := condition(inst, "ResourcesReady").Message
			for _, want := range []string{"gate (ConfigMap g-gate)", "readyWhen ${gate.data.?ready.orValue('no') == 'yes'} is false", `gate.data.?ready.orValue("no") = "no"`} {
				if !strings.Contains(msg, want) {
					t.Errorf("ResourcesReady message %q does not contain %q", msg, want)
				}
			}
			if c := condition(inst, "GateOpen"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "GateChecked" || c.Message != "gate says nothing" {
				t.Errorf("custom condition GateOpen = %+v", c)
			}
			// Conditions whose expressions give no status say why in a
			// reason of kro-agent's, not in the one the RGD gives.
			if c := condition(inst, "Sealed"); c == nil || c.Status != metav1.ConditionUnknown || c.Reason != v1alpha1.ReasonWaitingForInput || c.Message != "secret is not observed: input not available yet" {
				t.Errorf("custom condition Sealed, before the Secret exists = %+v", c)
			}
			if c := condition(inst, "Numbered"); c == nil || c.Status != metav1.ConditionUnknown || c.Reason != v1alpha1.ReasonEvaluationFailed ||
				!strings.HasPrefix(c.Message, "status ${int(gate.data.purpose) > 0}: type conversion error") {
				t.Errorf("custom condition Numbered, failing on the gate's purpose = %+v", c)
			}
			if st, _, _ := unstructured.NestedString(inst.Object, "status", "state"); st != string(v1alpha1.InstanceInProgress) {
				t.Errorf("state = %s, want IN_PROGRESS", st)
			}
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "gate"); got != "g-gate" {
				t.Errorf("status.gate = %q: a field whose inputs exist must be projected", got)
			}
			if _, found, _ := unstructured.NestedString(inst.Object, "status", "secretName"); found {
				t.Error("status.secretName must be omitted while the Secret does not exist")
			}
			return ctx
		}).
		Assess("once the gate is ready the Secret follows", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch := []byte(`{"data":{"ready":"yes"}}`)
			if _, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Patch(ctx, "g-gate", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "operator"}); err != nil {
				t.Fatal(err)
			}
			inst := c.waitState(t, "kro.run/v1alpha1", "Gated", ns, "g", v1alpha1.InstanceActive)
			c.mustGet(t, "v1", "Secret", ns, "g-secret")
			if c := condition(inst, "GateOpen"); c == nil || c.Status != metav1.ConditionTrue || c.Message != "gate says yes" {
				t.Errorf("custom condition GateOpen = %+v", c)
			}
			// A negative-polarity condition that does not count toward
			// Ready is written as authored (True is bad) and Ready stays True.
			if c := condition(inst, "AuditPending"); c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("custom condition AuditPending = %+v", c)
			}
			if c := condition(inst, "Sealed"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "SecretChecked" {
				t.Errorf("custom condition Sealed, once the Secret exists = %+v", c)
			}
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "secretName"); got != "g-secret" {
				t.Errorf("status.secretName = %q", got)
			}
			meanings := explainedMeanings(t, cfg, "gated", "g", ns)
			for typ, want := range map[string]string{
				"GateOpen":     "declared by the RGD; counts toward Ready",
				"AuditPending": "declared by the RGD with negative polarity: True is bad; does not count toward Ready",
			} {
				if !strings.Contains(meanings[typ], want) {
					t.Errorf("explain-conditions: %s means %q, want %q", typ, meanings[typ], want)
				}
			}
			return ctx
		}).
		Assess("a gate that stops being ready holds its dependents as they are", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch := []byte(`{"data":{"ready":"no"}}`)
			if _, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Patch(ctx, "g-gate", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "operator"}); err != nil {
				t.Fatal(err)
			}
			c.waitState(t, "kro.run/v1alpha1", "Gated", ns, "g", v1alpha1.InstanceInProgress)
			// The Secret is not applied while the gate is closed, so the
			// graph does not say whether it still wants it: it is kept.
			never(t, 2*time.Second, "the Secret behind the closed gate was pruned", func() bool {
				_, err := c.get(t, "v1", "Secret", ns, "g-secret")
				return err != nil
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A resource that never becomes ready does not keep what the RGD no longer
// declares in the cluster, when nothing waits for it (kro's
// prune-while-unready scenario).
func TestPruneWhileNotReady(t *testing.T) {
	const ns = "prune-unready"
	rgd := func(withRetired bool) string {
		doc := `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: prune-unready}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PruneWhileUnready
    spec: {name: string}
  resources:
  - id: gate
    readyWhen: ["${gate.data.ready == 'true'}"]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-gate"}
      data: {ready: "false"}
`
		if withRetired {
			doc += `
  - id: retired
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-retired"}
      data: {keep: for-now}
`
		}
		return doc
	}
	f := features.New("pruning while a resource is not ready").
		Assess("a resource dropped from the RGD is deleted, the one not ready is kept", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd(true))
			c.waitRGDActive(t, "prune-unready")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PruneWhileUnready, metadata: {name: p, namespace: %s}, spec: {name: p}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "PruneWhileUnready", ns, "p", v1alpha1.InstanceInProgress)
			eventually(t, 10*time.Second, "both ConfigMaps", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "p-retired")
				return err == nil, fmt.Sprint(err)
			})
			c.apply(t, rgd(false))
			eventually(t, 20*time.Second, "the retired ConfigMap to be pruned", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "p-retired")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			c.mustGet(t, "v1", "ConfigMap", ns, "p-gate")
			c.waitState(t, "kro.run/v1alpha1", "PruneWhileUnready", ns, "p", v1alpha1.InstanceInProgress)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// TestApplySetAnnotations: the ApplySet parent annotations list a kind the
// RGD no longer uses, and a namespace, for as long as an object of the
// instance is left there, as the ApplySet specification asks, so that a tool
// pruning by them finds every member; then they shrink.
func TestApplySetAnnotations(t *testing.T) {
	const ns = "applyset-kinds"
	rgd := func(withSecret bool) string {
		extra := ""
		if withSecret {
			extra = `
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}", finalizers: [e2e.kro.run/hold]}
      stringData: {password: retired-soon}
`
		}
		return droppedKindRGD("applyset-kinds", "ApplySetKinds", "${schema.metadata.name}", extra)
	}
	kinds := func(c *clients, t *testing.T) string {
		return c.mustGet(t, "kro.run/v1alpha1", "ApplySetKinds", ns, "k").GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]
	}
	f := features.New("the ApplySet annotations of an instance").
		Assess("keep a dropped kind until its object is gone", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd(true))
			c.waitRGDActive(t, "applyset-kinds")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ApplySetKinds, metadata: {name: k, namespace: %s}, spec: {}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "ApplySetKinds", ns, "k", v1alpha1.InstanceActive)
			if got := kinds(c, t); got != "ConfigMap,Secret" {
				t.Errorf("contains-group-kinds = %q, want ConfigMap,Secret (core kinds without a trailing dot, as kubectl writes them)", got)
			}

			// The Secret's finalizer keeps it terminating once it is pruned.
			c.apply(t, rgd(false))
			eventually(t, 20*time.Second, "the Secret to be pruned", func() (bool, string) {
				s, err := c.get(t, "v1", "Secret", ns, "k")
				return err == nil && s.GetDeletionTimestamp() != nil, fmt.Sprint(err)
			})
			// The RGD no longer names the kind, but tree still shows what
			// the instance has of it, from the kinds the annotation records.
			tree, err := kro(t, cfg, nil, "tree", "applysetkinds", "k", "-n", ns)
			if err != nil || !regexp.MustCompile(`(?m)^└─ secret +Secret/k +\S+ +Deleting +\S+ +being deleted, held by the finalizers e2e.kro.run/hold`).MatchString(tree) {
				t.Errorf("tree of an instance whose removed resource is still being deleted: %v\n%s", err, tree)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ApplySetKinds, metadata: {name: k, namespace: %s, labels: {touched: \"yes\"}}, spec: {}}", ns))
			never(t, 3*time.Second, "Secret left contains-group-kinds while a Secret of the instance exists", func() bool {
				return kinds(c, t) != "ConfigMap,Secret"
			})

			c.release(t, "v1", "Secret", ns, "k")
			eventually(t, 20*time.Second, "contains-group-kinds to shrink to ConfigMap", func() (bool, string) {
				got := kinds(c, t)
				return got == "ConfigMap", got
			})
			return ctx
		}).
		Assess("list another namespace while it holds an object of the instance", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			namespace(t, c, ns+"-other")
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: applyset-namespaces}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ApplySetNamespaces
    spec: {target: string}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}", namespace: "${schema.spec.target}"}
`)
			c.waitRGDActive(t, "applyset-namespaces")
			instance := func(target string) string {
				return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ApplySetNamespaces, metadata: {name: spread, namespace: %s}, spec: {target: %s}}", ns, target)
			}
			namespaces := func() string {
				return c.mustGet(t, "kro.run/v1alpha1", "ApplySetNamespaces", ns, "spread").GetAnnotations()[v1alpha1.AnnotationApplySetNamespaces]
			}
			c.apply(t, instance(ns+"-other"))
			c.waitState(t, "kro.run/v1alpha1", "ApplySetNamespaces", ns, "spread", v1alpha1.InstanceActive)
			if got := namespaces(); got != ns+"-other" {
				t.Errorf("additional-namespaces = %q, want %s", got, ns+"-other")
			}
			c.apply(t, instance(ns))
			eventually(t, 20*time.Second, "the ConfigMap in the other namespace to be pruned", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns+"-other", "spread")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			eventually(t, 20*time.Second, "additional-namespaces to shrink", func() (bool, string) {
				got := namespaces()
				return got == "", got
			})
			c.mustGet(t, "v1", "ConfigMap", ns, "spread")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

func TestCollections(t *testing.T) {
	const ns = "collections"
	names := func(c *clients, t *testing.T) []string {
		list, err := c.resource(t, "apps/v1", "Deployment").Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kro.run/node-id=workers"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range list.Items {
			out = append(out, d.GetName()+"#"+d.GetLabels()[v1alpha1.LabelCollectionIndex]+"/"+d.GetLabels()[v1alpha1.LabelCollectionSize])
		}
		return out
	}
	f := features.New("a forEach collection grows and shrinks").
		Assess("two queues give two Deployments with index and size labels", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "workers", "rgd.yaml"))
			c.waitRGDActive(t, "workers")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [emails, reports]}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceActive)
			if got := fmt.Sprint(names(c, t)); got != "[jobs-emails-eu#0/2 jobs-reports-eu#1/2]" {
				t.Errorf("deployments = %s", got)
			}
			if n, _, _ := unstructured.NestedInt64(inst.Object, "status", "workers"); n != 2 {
				t.Errorf("status.workers = %d, want 2", n)
			}
			return ctx
		}).
		Assess("a third queue adds one; dropping two prunes them", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [emails, reports, billing]}}", ns))
			eventually(t, 20*time.Second, "three workers", func() (bool, string) {
				got := fmt.Sprint(names(c, t))
				return got == "[jobs-billing-eu#2/3 jobs-emails-eu#0/3 jobs-reports-eu#1/3]", got
			})
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [billing]}}", ns))
			eventually(t, 20*time.Second, "one worker", func() (bool, string) {
				got := fmt.Sprint(names(c, t))
				return got == "[jobs-billing-eu#0/1]", got
			})
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("an item that cannot be applied does not hold back the others", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Someone else's Deployment has the name the audit queue's
			// worker would get: that item fails, the others are applied.
			c.waitTakeoverGuard(t, ns)
			c.apply(t, fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: jobs-audit-eu, namespace: %s},
  spec: {replicas: 0, selector: {matchLabels: {worker: jobs-audit-eu}}, template: {metadata: {labels: {worker: jobs-audit-eu}}, spec: {containers: [{name: c, image: busybox}]}}}}`, ns))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [billing, audit, zeta]}}", ns))
			eventually(t, 20*time.Second, "the workers around the failing one", func() (bool, string) {
				got := fmt.Sprint(names(c, t))
				return got == "[jobs-billing-eu#0/3 jobs-zeta-eu#2/3]", got
			})
			inst := c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceError)
			if msg := condition(inst, "ResourcesReady").Message; !strings.Contains(msg, "Deployment "+ns+"/jobs-audit-eu already exists in the local cluster and was not created by kro-agent") {
				t.Errorf("ResourcesReady message %q does not name the Deployment in the way", msg)
			}
			if _, found, _ := unstructured.NestedInt64(inst.Object, "status", "workers"); found {
				t.Error("status.workers must be omitted while the collection is not observed whole")
			}
			if foreign := c.mustGet(t, "apps/v1", "Deployment", ns, "jobs-audit-eu"); foreign.GetLabels()[v1alpha1.LabelInstanceID] != "" {
				t.Errorf("the other owner's Deployment was taken over: labels %v", foreign.GetLabels())
			}
			c.delete(t, "apps/v1", "Deployment", ns, "jobs-audit-eu")
			eventually(t, 30*time.Second, "three workers", func() (bool, string) {
				got := fmt.Sprint(names(c, t))
				return got == "[jobs-audit-eu#1/3 jobs-billing-eu#0/3 jobs-zeta-eu#2/3]", got
			})
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("an object that only carries an instance's labels is neither pruned nor deleted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			pool := "{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: copied, namespace: %s}, spec: {queues: %s}}"
			c.apply(t, fmt.Sprintf(pool, ns, "[a, b]"))
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "copied", v1alpha1.InstanceActive)
			// A controller that copies its parent's labels onto what it
			// creates gives its object every label of the instance's item.
			item := c.mustGet(t, "apps/v1", "Deployment", ns, "copied-a-eu")
			extra := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "copied-extra", "namespace": ns},
				"spec": map[string]any{"replicas": int64(0), "selector": map[string]any{"matchLabels": map[string]any{"worker": "copied-extra"}},
					"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"worker": "copied-extra"}},
						"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}}
			extra.SetLabels(item.GetLabels())
			if _, err := c.resource(t, "apps/v1", "Deployment").Namespace(ns).Create(ctx, extra, metav1.CreateOptions{FieldManager: "operator"}); err != nil {
				t.Fatal(err)
			}
			// The prune that follows the shrunk collection leaves it be.
			c.apply(t, fmt.Sprintf(pool, ns, "[a]"))
			eventually(t, 20*time.Second, "item b to be pruned", func() (bool, string) {
				_, err := c.get(t, "apps/v1", "Deployment", ns, "copied-b-eu")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			c.mustGet(t, "apps/v1", "Deployment", ns, "copied-extra")
			if tree, err := kro(t, cfg, nil, "tree", "workerpool", "copied", "-n", ns); err != nil || strings.Contains(tree, "copied-extra") {
				t.Errorf("the tree lists what kro-agent does not manage: %v\n%s", err, tree)
			}
			// Nor does the instance's deletion delete it, or wait for it.
			c.deleteAll(t, "kro.run/v1alpha1", "WorkerPool", ns, "copied")
			c.mustGet(t, "apps/v1", "Deployment", ns, "copied-extra")
			c.delete(t, "apps/v1", "Deployment", ns, "copied-extra")
			return ctx
		}).
		Assess("two items naming one object leave the collection as it is", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// A queue listed twice gives two items one Deployment: applying
			// both would have them take turns writing it.
			dup := fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [billing, audit, audit]}}", ns)
			file := t.TempDir() + "/jobs.yaml"
			writeFile(t, file, dup)
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file, "-o", "json")
			var plan []plugin.PlannedResource
			// zeta, no longer listed, would go once the pool applies; the
			// status loses what the refused collection gave it, as the
			// agent writes it (below).
			if jsonErr := json.Unmarshal([]byte(preview), &plan); !errors.Is(err, plugin.ErrInvalid) || jsonErr != nil || len(plan) != 5 ||
				plan[0].Action != plugin.ActionInvalid || !strings.Contains(plan[2].Reason, "workers[1] and workers[2] both render Deployment "+ns+"/jobs-audit-eu") ||
				plan[3].Action != plugin.ActionDelete || plan[3].Name != "jobs-zeta-eu" || !strings.HasSuffix(plan[3].Reason, "once every other resource is applied") ||
				plan[4].Action != plugin.ActionUpdate || !strings.Contains(plan[4].Diff, "-  workers: 3\n") {
				t.Errorf("dry-run of a pool with a queue listed twice: %v, want every item invalid, zeta deleted later, and the status without workers\n%s", err, preview)
			}
			c.apply(t, dup)
			inst := c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceFailed)
			if msg := condition(inst, "GraphResolved").Message; !strings.Contains(msg, "workers[1] and workers[2] both render Deployment "+ns+"/jobs-audit-eu") {
				t.Errorf("GraphResolved message %q does not name the items", msg)
			}
			if workers, found, _ := unstructured.NestedFieldNoCopy(inst.Object, "status", "workers"); found {
				t.Errorf("status.workers = %v, want it left out as dry-run said", workers)
			}
			// Nothing applied, nothing pruned: the Deployments are still
			// those of the three queues before.
			if got := fmt.Sprint(names(c, t)); got != "[jobs-audit-eu#1/3 jobs-billing-eu#0/3 jobs-zeta-eu#2/3]" {
				t.Errorf("deployments = %s, want them untouched", got)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: jobs, namespace: %s}, spec: {queues: [billing, audit]}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "jobs", v1alpha1.InstanceActive)
			if got := fmt.Sprint(names(c, t)); got != "[jobs-audit-eu#1/2 jobs-billing-eu#0/2]" {
				t.Errorf("deployments = %s", got)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

func TestExternalRef(t *testing.T) {
	const ns = "external"
	f := features.New("an externalRef is waited for, read, and never written").
		Assess("the instance waits for the platform ConfigMap", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, example(t, "shared-config", "rgd.yaml"))
			c.waitRGDActive(t, "shared-config")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ConfiguredApp, metadata: {name: billing, namespace: %s}, spec: {name: billing}}", ns))
			eventually(t, 10*time.Second, "the instance to say what it waits for", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "ConfiguredApp", ns, "billing")
				cond := condition(inst, "ResourcesReady")
				return cond != nil && strings.Contains(cond.Message, "external ConfigMap external/platform-settings does not exist yet"), conditionSummary(inst)
			})
			never(t, time.Second, "the dependent was created before the external object exists", func() bool {
				_, err := c.get(t, "v1", "ConfigMap", ns, "billing-settings")
				return err == nil
			})
			// The watch of ConfigMaps tells when it comes: the instance
			// does not look again of its own accord every 10 s.
			path := "/api/v1/namespaces/" + ns + "/configmaps/platform-settings"
			reads := readsOf(path)
			never(t, 11*time.Second, "the agent to read the missing ConfigMap again", func() bool { return readsOf(path) > reads })
			out, err := kro(t, cfg, nil, "why-not-ready", "configuredapp", "billing", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "Root cause: external resource platform (ConfigMap external/platform-settings) does not exist") ||
				!strings.Contains(out, "kro-agent reads it and never creates it") {
				t.Errorf("why-not-ready of an instance waiting for its externalRef: %v\n%s", err, out)
			}
			// dry-run reads the external object as the agent does: missing,
			// it is waited for, and so is what reads it.
			billing := fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ConfiguredApp, metadata: {name: billing, namespace: %s}, spec: {name: billing}}", ns)
			plan := dryRunPlan(t, cfg, billing)
			if len(plan) != 2 || plan[0].Action != plugin.ActionPending || plan[0].Name != "platform-settings" || !strings.Contains(plan[0].Reason, "does not exist yet") ||
				plan[1].Action != plugin.ActionPending {
				t.Errorf("dry-run while the external object does not exist: %+v", plan)
			}
			return ctx
		}).
		Assess("once it exists, the dependent reads it; the external object is untouched", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			ext := c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: platform-settings, namespace: %s}, data: {logLevel: debug, region: eu-west}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "ConfiguredApp", ns, "billing", v1alpha1.InstanceActive)
			app := c.mustGet(t, "v1", "ConfigMap", ns, "billing-settings")
			if got, _, _ := unstructured.NestedString(app.Object, "data", "region"); got != "eu-west" {
				t.Errorf("data.region = %q", got)
			}
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "logLevel"); got != "debug" {
				t.Errorf("status.logLevel = %q", got)
			}
			now := c.mustGet(t, "v1", "ConfigMap", ns, "platform-settings")
			if now.GetResourceVersion() != ext.GetResourceVersion() || len(now.GetLabels()) != 0 {
				t.Errorf("the external object was written: rv %s -> %s, labels %v", ext.GetResourceVersion(), now.GetResourceVersion(), now.GetLabels())
			}
			// dry-run renders what reads it from what it holds: the
			// instance as it is changes nothing.
			plan := dryRunPlan(t, cfg, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ConfiguredApp, metadata: {name: billing, namespace: %s}, spec: {name: billing}}", ns))
			if len(plan) != 2 || plan[0].Action != plugin.ActionUnchanged || plan[0].Name != "platform-settings" || plan[1].Action != plugin.ActionUnchanged {
				t.Errorf("dry-run of the instance as it is: %+v", plan)
			}
			// Nothing but the watch of external objects brings the instance
			// back: the agent polls only while it waits for one.
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: platform-settings, namespace: %s}, data: {logLevel: warn, region: eu-west}}", ns))
			eventually(t, 5*time.Second, "a change of the external object to reach the dependent", func() (bool, string) {
				app := c.mustGet(t, "v1", "ConfigMap", ns, "billing-settings")
				got, _, _ := unstructured.NestedString(app.Object, "data", "logLevel")
				return got == "warn", "logLevel " + got
			})
			c.delete(t, "kro.run/v1alpha1", "ConfiguredApp", ns, "billing")
			eventually(t, 20*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "ConfiguredApp", ns, "billing")
				return err != nil, "still there"
			})
			c.mustGet(t, "v1", "ConfigMap", ns, "platform-settings")
			return ctx
		}).
		Assess("an external object that is not ready is what the instance waits for", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, externalGateRGD)
			c.waitRGDActive(t, "externalgate")
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: gate, namespace: %s}, data: {open: 'no'}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ExternalGate, metadata: {name: g, namespace: %s}, spec: {name: g}}", ns))
			var out string
			var err error
			eventually(t, 10*time.Second, "why-not-ready to point at the gate", func() (bool, string) {
				out, err = kro(t, cfg, nil, "why-not-ready", "externalgate", "g", "-n", ns)
				return strings.Contains(out, "Root cause: external resource gate (ConfigMap external/gate) is not ready"), out
			})
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "open") || !strings.Contains(out, "never changes it") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: gate, namespace: %s}, data: {open: 'yes'}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "ExternalGate", ns, "g", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "ExternalGate", ns, "g")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// externalGateRGD waits for someone else's ConfigMap gate to say open: yes.
const externalGateRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: externalgate}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ExternalGate
    spec: {name: string}
  resources:
  - id: gate
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: gate}
    readyWhen: ["${gate.data.?open.orValue('') == 'yes'}"]
  - id: app
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-app"}
      data: {gate: "${gate.data.open}"}
`

// teamRGD reads two external collections of ConfigMaps, as kro v0.9 RGDs
// write them: one selected by a requirement whose value comes from the
// instance, in every namespace, the other by a selector the instance gives
// whole.
const teamRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: teams}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Team
    spec: {team: string, selector: object}
    status:
      members: "${string(size(members))}"
      names: '${members.sortBy(c, c.metadata.name).map(c, c.metadata.namespace + "/" + c.metadata.name).join(",")}'
      picked: "${string(size(picked))}"
  resources:
  - id: members
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        selector:
          matchExpressions:
          - {key: e2e-team, operator: In, values: ["${schema.spec.team}"]}
  - id: picked
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        namespace: teams-a
        selector: "${schema.spec.selector}"
  - id: roster
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-roster"}
      data:
        members: '${members.map(c, c.metadata.name).join(",")}'
`

func TestExternalCollections(t *testing.T) {
	f := features.New("externalRefs by selector are lists, in every namespace, and watched").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, "teams-a")
			namespace(t, c, "teams-b")
			c.apply(t, teamRGD)
			c.waitRGDActive(t, "teams")
			for _, cm := range []string{"teams-a/alpha: {e2e-team: blue}", "teams-b/bravo: {e2e-team: blue}", "teams-b/charlie: {e2e-team: red}"} {
				ns, rest, _ := strings.Cut(cm, "/")
				name, labels, _ := strings.Cut(rest, ": ")
				c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s, labels: %s}}", name, ns, labels))
			}
			return ctx
		}).
		Assess("the selected objects are a list, from every namespace", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			before := c.mustGet(t, "v1", "ConfigMap", "teams-b", "bravo")
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: Team, metadata: {name: blue, namespace: teams-a}, spec: {team: blue, selector: {matchLabels: {e2e-pick: "yes"}}}}`)
			inst := c.waitState(t, "kro.run/v1alpha1", "Team", "teams-a", "blue", v1alpha1.InstanceActive)
			for field, want := range map[string]string{"members": "2", "names": "teams-a/alpha,teams-b/bravo", "picked": "0"} {
				if got, _, _ := unstructured.NestedString(inst.Object, "status", field); got != want {
					t.Errorf("status.%s = %q, want %q", field, got, want)
				}
			}
			roster := c.mustGet(t, "v1", "ConfigMap", "teams-a", "blue-roster")
			if got, _, _ := unstructured.NestedString(roster.Object, "data", "members"); got != "alpha,bravo" {
				t.Errorf("the roster lists %q, want alpha,bravo", got)
			}
			if now := c.mustGet(t, "v1", "ConfigMap", "teams-b", "bravo"); now.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("a selected object was written")
			}
			tree := treeJSON(t, cfg, "team", "blue", "teams-a")
			var members []string
			for _, r := range tree.Rows {
				if r.NodeID == "members" {
					members = append(members, r.Namespace+"/"+r.Name)
				}
			}
			if strings.Join(members, ",") != "teams-a/alpha,teams-b/bravo" {
				t.Errorf("tree shows the members %v", members)
			}
			return ctx
		}).
		Assess("objects that come to match, or stop matching, reach the instance", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: delta, namespace: teams-a, labels: {e2e-team: blue, e2e-pick: "yes"}}}`)
			eventually(t, 5*time.Second, "the new member and the picked one to be counted", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Team", "teams-a", "blue")
				members, _, _ := unstructured.NestedString(inst.Object, "status", "members")
				picked, _, _ := unstructured.NestedString(inst.Object, "status", "picked")
				return members == "3" && picked == "1", "members " + members + ", picked " + picked
			})
			c.delete(t, "v1", "ConfigMap", "teams-b", "bravo")
			eventually(t, 5*time.Second, "the roster to lose bravo", func() (bool, string) {
				roster := c.mustGet(t, "v1", "ConfigMap", "teams-a", "blue-roster")
				got, _, _ := unstructured.NestedString(roster.Object, "data", "members")
				return got == "alpha,delta", got
			})
			// Neither a delete nor a create: delta stops matching either
			// selector when its labels go.
			c.patch(t, "v1", "ConfigMap", "teams-a", "delta", `{"metadata":{"labels":{"e2e-team":null,"e2e-pick":null}}}`)
			eventually(t, 5*time.Second, "delta to leave the roster and the picked ones", func() (bool, string) {
				roster := c.mustGet(t, "v1", "ConfigMap", "teams-a", "blue-roster")
				got, _, _ := unstructured.NestedString(roster.Object, "data", "members")
				inst := c.mustGet(t, "kro.run/v1alpha1", "Team", "teams-a", "blue")
				picked, _, _ := unstructured.NestedString(inst.Object, "status", "picked")
				return got == "alpha" && picked == "0", "roster " + got + ", picked " + picked
			})
			return ctx
		}).
		Assess("the instance's own objects, which carry its labels, are not read", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: echo, namespace: teams-b, labels: {e2e-team: green}}}`)
			// Labelled as the ConfigMaps it selects: its roster gets the
			// label too, and would be read as a member of its own roster.
			const green = `{apiVersion: kro.run/v1alpha1, kind: Team, metadata: {name: green, namespace: teams-a, labels: {e2e-team: green}}, spec: {team: green, selector: {matchLabels: {e2e-team: green}}}}`
			c.apply(t, green)
			c.waitState(t, "kro.run/v1alpha1", "Team", "teams-a", "green", v1alpha1.InstanceActive)
			roster := c.mustGet(t, "v1", "ConfigMap", "teams-a", "green-roster")
			if got := roster.GetLabels()["e2e-team"]; got != "green" {
				t.Fatalf("the roster has e2e-team %q, want the instance's green (the case this checks)", got)
			}
			never(t, 3*time.Second, "the instance to read its own roster", func() bool {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Team", "teams-a", "green")
				names, _, _ := unstructured.NestedString(inst.Object, "status", "names")
				picked, _, _ := unstructured.NestedString(inst.Object, "status", "picked")
				roster := c.mustGet(t, "v1", "ConfigMap", "teams-a", "green-roster")
				members, _, _ := unstructured.NestedString(roster.Object, "data", "members")
				if names != "teams-b/echo" || picked != "0" || members != "echo" {
					t.Logf("status.names %q, status.picked %q, roster %q", names, picked, members)
					return true
				}
				return false
			})
			tree := treeJSON(t, cfg, "team", "green", "teams-a")
			for _, r := range tree.Rows {
				if (r.NodeID == "members" || r.NodeID == "picked") && r.Name == "green-roster" {
					t.Errorf("tree shows the instance's own roster as %s", r.NodeID)
				}
				// kubectl get -l e2e-team=green lists the roster there:
				// the tree says why picked has nothing.
				if want := `only the instance's own objects match the selector "e2e-team=green"`; r.NodeID == "picked" && !strings.Contains(r.Reason, want) {
					t.Errorf("tree's picked row says %q, want %q", r.Reason, want)
				}
			}
			file := t.TempDir() + "/green.yaml"
			writeFile(t, file, green)
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if want := `picked: ConfigMap UNCHANGED
  externalRef: only the instance's own configmaps match the selector "e2e-team=green", and it never reads those`; err != nil || !strings.Contains(preview, want) {
				t.Errorf("dry-run of the green team: %v, want %q in\n%s", err, want, preview)
			}
			return ctx
		}).
		Assess("a selector the instance gives that is not one is reported", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: Team, metadata: {name: typo, namespace: teams-a}, spec: {team: red, selector: {matchLabel: {e2e-pick: "yes"}}}}`)
			eventually(t, 10*time.Second, "GraphResolved to name the selector", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Team", "teams-a", "typo")
				cond := condition(inst, "GraphResolved")
				return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, `resource picked: metadata.selector`) && strings.Contains(cond.Message, `unknown field "matchLabel"`), conditionSummary(inst)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An RGD that moves a resource to another served version of its kind
// (autoscaling/v1 to v2 here) names the same object: the agent applies it
// through the new version and must not prune it as seen through the old.
func TestAResourceMovedToAnotherVersionIsKept(t *testing.T) {
	const ns = "versions"
	rgd := func(apiVersion, maxReplicas string) string {
		return fmt.Sprintf(`apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: scaledapp}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ScaledApp
    spec:
      max: integer | default=3
  resources:
    - id: hpa
      template:
        apiVersion: %s
        kind: HorizontalPodAutoscaler
        metadata: {name: "${schema.metadata.name}"}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: "${schema.metadata.name}"}
          maxReplicas: %s
`, apiVersion, maxReplicas)
	}
	maxReplicas := func(c *clients, t *testing.T) (int64, *unstructured.Unstructured) {
		hpa, err := c.get(t, "autoscaling/v2", "HorizontalPodAutoscaler", ns, "web")
		if err != nil {
			return -1, nil
		}
		n, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "maxReplicas")
		return n, hpa
	}
	f := features.New("a resource moved to another version of its kind").
		Assess("is applied through the new version and keeps its identity", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd("autoscaling/v1", "${schema.spec.max}"))
			c.waitRGDActive(t, "scaledapp")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ScaledApp, metadata: {name: web, namespace: %s}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "ScaledApp", ns, "web", v1alpha1.InstanceActive)
			_, before := maxReplicas(c, t)
			if before == nil {
				t.Fatal("the HorizontalPodAutoscaler was not created")
			}

			// The new version comes with a change, so that it is applied.
			c.apply(t, rgd("autoscaling/v2", "${schema.spec.max + 1}"))
			eventually(t, 20*time.Second, "maxReplicas 4, applied through autoscaling/v2", func() (bool, string) {
				n, _ := maxReplicas(c, t)
				return n == 4, fmt.Sprintf("maxReplicas %d", n)
			})
			never(t, 3*time.Second, "the HorizontalPodAutoscaler was deleted or replaced", func() bool {
				_, hpa := maxReplicas(c, t)
				return hpa == nil || hpa.GetUID() != before.GetUID()
			})
			c.waitState(t, "kro.run/v1alpha1", "ScaledApp", ns, "web", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// tenantRGD: cluster-scoped instances, each owning a Namespace and a
// ConfigMap inside it.
const tenantRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: tenant}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Tenant
    scope: Cluster
    spec: {namespace: string, teams: "integer | default=1"}
    status:
      namespace: ${ns.metadata.name}
  resources:
    - id: ns
      template: {apiVersion: v1, kind: Namespace, metadata: {name: "${schema.spec.namespace}"}}
    - id: settings
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, namespace: "${ns.metadata.name}"}
        data: {tenant: "${schema.metadata.name}", share: "${string(100 / schema.spec.teams)}"}
`

func TestClusterScopedInstances(t *testing.T) {
	f := features.New("an RGD with scope Cluster serves cluster-scoped instances").
		Assess("applied, shown once each by tree, deleted in reverse order", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgent(t, cfg)
			c := newClients(t, cfg)
			c.apply(t, tenantRGD)
			c.waitRGDActive(t, "tenant")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Tenant", "")
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: Tenant, metadata: {name: acme}, spec: {namespace: acme-space}}")
			inst := c.waitState(t, "kro.run/v1alpha1", "Tenant", "", "acme", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "namespace"); got != "acme-space" {
				t.Errorf("status.namespace = %q", got)
			}
			cm := c.mustGet(t, "v1", "ConfigMap", "acme-space", "settings")
			if got := cm.GetLabels()[v1alpha1.LabelInstanceName]; got != "acme" {
				t.Errorf("the ConfigMap's instance label = %q", got)
			}
			out, err := kro(t, cfg, nil, "tree", "tenant/acme")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if strings.Count(out, "ConfigMap/settings") != 1 || strings.Count(out, "Namespace/acme-space") != 1 {
				t.Errorf("tree should show each resource once:\n%s", out)
			}
			// status lists cluster-scoped kinds beside namespaced ones.
			for _, args := range [][]string{{"status", "tenant", "acme"}, {"status", "-n", "default"}, {"status", "-A"}} {
				out, err := kro(t, cfg, nil, args...)
				if err != nil || !strings.Contains(out, "acme") {
					t.Errorf("%v: %v\n%s", args, err, out)
				}
			}
			// A preview of another tenant: its Namespace is created, and the
			// ConfigMap inside it cannot be checked before that.
			file := t.TempDir() + "/tenant.yaml"
			writeFile(t, file, "{apiVersion: kro.run/v1alpha1, kind: Tenant, metadata: {name: beta}, spec: {namespace: beta-space}}")
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file, "-o", "json")
			if err != nil {
				t.Fatalf("%v\n%s", err, preview)
			}
			var plan []plugin.PlannedResource
			if err := json.Unmarshal([]byte(preview), &plan); err != nil {
				t.Fatalf("%v\n%s", err, preview)
			}
			if len(plan) != 2 || plan[0].Action != plugin.ActionCreate || plan[1].Action != plugin.ActionPending ||
				!strings.Contains(plan[1].Reason, "namespace beta-space is created by ns first") {
				t.Errorf("dry-run of a cluster-scoped instance:\n%s", preview)
			}
			// The instance's own values decide first: a ConfigMap that cannot
			// be rendered from them is invalid, wherever it would go.
			writeFile(t, file, "{apiVersion: kro.run/v1alpha1, kind: Tenant, metadata: {name: beta}, spec: {namespace: beta-space, teams: 0}}")
			preview, err = kro(t, cfg, nil, "dry-run", "-f", file, "-o", "json")
			plan = nil
			if jsonErr := json.Unmarshal([]byte(preview), &plan); !errors.Is(err, plugin.ErrInvalid) || jsonErr != nil || len(plan) != 2 ||
				plan[1].Action != plugin.ActionInvalid || !strings.Contains(plan[1].Reason, "division by zero") {
				t.Errorf("dry-run of a tenant with no teams: %v, want invalid\n%s", err, preview)
			}
			c.delete(t, "kro.run/v1alpha1", "Tenant", "", "acme")
			eventually(t, 60*time.Second, "the instance and its Namespace to be gone", func() (bool, string) {
				_, instErr := c.get(t, "kro.run/v1alpha1", "Tenant", "", "acme")
				_, nsErr := c.get(t, "v1", "Namespace", "", "acme-space")
				return instErr != nil && nsErr != nil, fmt.Sprintf("instance: %v; namespace: %v", instErr, nsErr)
			})
			return ctx
		}).
		Assess("a namespaced resource given an empty namespace names the field", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: targeted}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Targeted
    scope: Cluster
    spec: {targetNamespace: string}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-cm", namespace: "${schema.spec.targetNamespace}"}
      data: {managed: "yes"}
`)
			c.waitRGDActive(t, "targeted")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Targeted", "")
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: Targeted, metadata: {name: nowhere}, spec: {targetNamespace: ""}}`)
			inst := c.waitState(t, "kro.run/v1alpha1", "Targeted", "", "nowhere", v1alpha1.InstanceFailed)
			want := "metadata.namespace of ConfigMap nowhere-cm is empty: the kind is namespaced and a cluster-scoped instance has no namespace to give it"
			if cond := condition(inst, "GraphResolved"); cond == nil || !strings.Contains(cond.Message, want) {
				t.Errorf("GraphResolved = %+v, want a message containing %q", cond, want)
			}
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: Targeted, metadata: {name: nowhere}, spec: {targetNamespace: default}}`)
			c.waitState(t, "kro.run/v1alpha1", "Targeted", "", "nowhere", v1alpha1.InstanceActive)
			c.mustGet(t, "v1", "ConfigMap", "default", "nowhere-cm")
			c.delete(t, "kro.run/v1alpha1", "Targeted", "", "nowhere")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An RGD may build on the kind another RGD serves. Applied before that
// kind exists it is denied; once the kind is served it is admitted, though
// the agent's discovery was filled before the kind existed.
const (
	innerRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: inner}
spec:
  schema: {apiVersion: v1alpha1, kind: Inner, spec: {value: string}}
  resources:
    - id: cm
      template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-inner"}, data: {v: "${schema.spec.value}"}}
`
	outerRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: outer}
spec:
  schema: {apiVersion: v1alpha1, kind: Outer, spec: {value: string}}
  resources:
    - id: inner
      readyWhen: ["${inner.status.?state.orValue('') == 'ACTIVE'}"]
      template: {apiVersion: kro.run/v1alpha1, kind: Inner, metadata: {name: "${schema.metadata.name}"}, spec: {value: "${schema.spec.value}"}}
`
)

func TestRGDOverAnotherRGDsKind(t *testing.T) {
	const ns = "nested"
	f := features.New("an RGD over another RGD's kind").
		Assess("admitted once the kind is served; its instances nest", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			var out string
			eventually(t, 20*time.Second, "outer to be denied while Inner does not exist", func() (bool, string) {
				var err error
				out, err = kubectl(t, cfg, outerRGD, "apply", "-f", "-")
				return err != nil && strings.Contains(out, "Inner"), out
			})
			c.apply(t, innerRGD)
			c.waitRGDActive(t, "inner")
			eventually(t, 20*time.Second, "outer to be admitted", func() (bool, string) {
				var err error
				out, err = kubectl(t, cfg, outerRGD, "apply", "-f", "-")
				return err == nil, out
			})
			c.waitRGDActive(t, "outer")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Outer, metadata: {name: o1, namespace: %s}, spec: {value: x}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Outer", ns, "o1", v1alpha1.InstanceActive)
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "o1-inner"); cm.Object["data"].(map[string]any)["v"] != "x" {
				t.Errorf("the inner instance's ConfigMap: %v", cm.Object["data"])
			}
			return ctx
		}).
		Assess("a field the inner kind gains can be read by the outer RGD at once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// The agent's discovery resolved Inner before it had the
			// field; its schema is read again once the API server
			// publishes the new one.
			c.apply(t, strings.Replace(innerRGD, "spec: {value: string}", "spec: {value: string, size: integer | default=3}", 1))
			c.waitRGDActive(t, "inner")
			reading := strings.Replace(outerRGD, "spec: {value: string}}", `spec: {value: string}, status: {size: "${inner.spec.size}"}}`, 1)
			eventually(t, 20*time.Second, "outer reading the new field to be admitted", func() (bool, string) {
				out, err := kubectl(t, cfg, reading, "apply", "-f", "-")
				return err == nil, out
			})
			eventually(t, 20*time.Second, "o1 to project the inner instance's default", func() (bool, string) {
				o1 := c.mustGet(t, "kro.run/v1alpha1", "Outer", ns, "o1")
				size, _, _ := unstructured.NestedInt64(o1.Object, "status", "size")
				return size == 3, fmt.Sprintf("status.size = %d; o1: %s; %s", size, conditionSummary(o1), rgdSummary(t, c, "outer"))
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// gizmoCRD is a CRD of kind Gizmo whose spec.size has the given type and
// whose spec.finish has the given default ("" for none).
func gizmoCRD(t testing.TB, sizeType, finishDefault string) string {
	return withSizeType(t, withFinish(t, exampleCRD("Gizmo", "upgrades.example.dev"), finishDefault), sizeType)
}

const gizmoRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gizmo-users}
spec:
  schema:
    apiVersion: v1alpha1
    kind: GizmoUser
    spec: {size: integer | default=2}
    status: {finish: "${gizmo.spec.finish}"}
  resources:
  - id: gizmo
    template:
      apiVersion: upgrades.example.dev/v1
      kind: Gizmo
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`

// An RGD's graph is checked against the kinds it uses as they are now: a
// CRD upgraded under it (an operator's new release) is read again, without
// the RGD changing.
func TestRGDOverAnUpgradedCRD(t *testing.T) {
	const ns = "crd-upgrades"
	f := features.New("an RGD over a CRD that changes").
		Assess("a default the CRD gains reaches the instances' status", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, gizmoCRD(t, "integer", ""))
			eventually(t, 30*time.Second, "the RGD using Gizmo to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, gizmoRGD)
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "gizmo-users")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: GizmoUser, metadata: {name: u1, namespace: %s}, spec: {}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "GizmoUser", ns, "u1", v1alpha1.InstanceActive)
			if finish, found, _ := unstructured.NestedString(inst.Object, "status", "finish"); found {
				t.Fatalf("status.finish = %q before the CRD has a default for it", finish)
			}
			c.apply(t, gizmoCRD(t, "integer", "gloss"))
			eventually(t, 30*time.Second, "u1 to project the CRD's new default", func() (bool, string) {
				finish, _, _ := unstructured.NestedString(c.mustGet(t, "kro.run/v1alpha1", "GizmoUser", ns, "u1").Object, "status", "finish")
				return finish == "gloss", fmt.Sprintf("status.finish = %q", finish)
			})
			return ctx
		}).
		Assess("a field whose type the CRD changes makes the RGD invalid until it changes back", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, gizmoCRD(t, "string", "gloss"))
			eventually(t, 30*time.Second, "the RGD to name the field whose type changed", func() (bool, string) {
				rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "gizmo-users")
				g := condition(rgd, v1alpha1.ConditionGraphAccepted)
				return g != nil && g.Status == metav1.ConditionFalse &&
					strings.Contains(g.Message, "spec.resources[gizmo].template.spec.size") && strings.Contains(g.Message, "string"), conditionSummary(rgd)
			})
			c.apply(t, gizmoCRD(t, "integer", "gloss"))
			c.waitRGDActive(t, "gizmo-users")
			c.waitState(t, "kro.run/v1alpha1", "GizmoUser", ns, "u1", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// explainedMeanings runs kubectl kro explain-conditions -o json on an
// instance and returns what each of its conditions means.
func explainedMeanings(t *testing.T, cfg *envconf.Config, kind, name, ns string) map[string]string {
	t.Helper()
	out, err := kro(t, cfg, nil, "explain-conditions", kind, name, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatalf("explain-conditions: %v\n%s", err, out)
	}
	var explained []plugin.ExplainedCondition
	if err := json.Unmarshal([]byte(out), &explained); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	meanings := map[string]string{}
	for _, c := range explained {
		if !strings.HasPrefix(c.Object, "ResourceGraphDefinition/") {
			meanings[c.Type] = c.Meaning
		}
	}
	return meanings
}

// Fields the schema types as bytes or timestamps are those types in
// expressions (kro's schema-aware CEL scenario), status may hold lists, and
// a status expression that fails on an instance's values is reported, not
// only logged.
func TestTypedValuesAndFailingStatus(t *testing.T) {
	const ns = "typed-values"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: client-secret}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ClientSecret
    spec: {clientId: string, port: string | default="80"}
    status:
      decodedClientId: ${string(secret.data.clientId)}
      createdBefore2100: ${secret.metadata.creationTimestamp < timestamp("2100-01-01T00:00:00Z")}
      port: ${int(schema.spec.port)}
      names: ["${secret.metadata.name}", "${schema.metadata.name}"]
      ports: ['${"80"}', '${schema.spec.port != "80" ? schema.spec.port : omit()}']
  resources:
  - id: secret
    readyWhen: ["${size(secret.data.clientId) > 0}"]
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}"}
      stringData: {clientId: "${schema.spec.clientId}"}
`
	f := features.New("typed values").
		Assess("a Secret's data reads as bytes, its creation time as a timestamp", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd)
			c.waitRGDActive(t, "client-secret")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ClientSecret, metadata: {name: app, namespace: %s}, spec: {clientId: my-client-123}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "ClientSecret", ns, "app", v1alpha1.InstanceActive)
			status, _, _ := unstructured.NestedMap(inst.Object, "status")
			if status["decodedClientId"] != "my-client-123" || status["createdBefore2100"] != true || status["port"] != int64(80) ||
				fmt.Sprint(status["names"]) != "[app app]" || fmt.Sprint(status["ports"]) != "[80]" {
				t.Errorf("status = %v", status)
			}
			return ctx
		}).
		Assess("a status expression failing on the instance's values is FAILED with the error and the value", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ClientSecret, metadata: {name: app, namespace: %s}, spec: {clientId: my-client-123, port: eighty}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "ClientSecret", ns, "app", v1alpha1.InstanceFailed)
			if cond := condition(inst, "GraphResolved"); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonStatusFailed ||
				!strings.Contains(cond.Message, `projecting status: port: ${int(schema.spec.port)}: type conversion error from 'string' to 'int'; it read schema.spec.port = "eighty"`) {
				t.Errorf("GraphResolved = %+v", cond)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "clientsecret", "app", "-n", ns)
			if err == nil || !strings.Contains(out, "ClientSecret/app's status cannot be computed") {
				t.Errorf("why-not-ready of a failing status (err %v):\n%s", err, out)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: ClientSecret, metadata: {name: app, namespace: %s}, spec: {clientId: my-client-123, port: \"8080\"}}", ns))
			inst = c.waitState(t, "kro.run/v1alpha1", "ClientSecret", ns, "app", v1alpha1.InstanceActive)
			if port, _, _ := unstructured.NestedInt64(inst.Object, "status", "port"); port != 8080 {
				t.Errorf("status.port = %d", port)
			}
			if ports, _, _ := unstructured.NestedSlice(inst.Object, "status", "ports"); fmt.Sprint(ports) != "[80 8080]" {
				t.Errorf("status.ports = %v", ports)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A status the API server cannot store with the instance (it is larger
// than etcd takes) is not lost in the agent's log: the instance is FAILED
// and says which fields weigh what, the resources stay applied, and the
// fields are projected once they fit.
func TestStatusTooLargeToStoreIsTold(t *testing.T) {
	const ns = "status-too-large"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: copies}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Copies
    spec: {text: string}
    status:
      first: ${first.data.text}
      second: ${second.data.text}
  resources:
  - id: first
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-first"}
      data: {text: "${schema.spec.text}"}
  - id: second
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-second"}
      data: {text: "${schema.spec.text}"}
`
	instance := func(text string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Copies, metadata: {name: big, namespace: %s}, spec: {text: %s}}", ns, text)
	}
	f := features.New("status too large").
		Assess("two copies of 700 KB of text in the status are more than the instance can hold", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd)
			c.waitRGDActive(t, "copies")
			c.apply(t, instance(strings.Repeat("x", 700_000)))
			inst := c.waitState(t, "kro.run/v1alpha1", "Copies", ns, "big", v1alpha1.InstanceFailed)
			cond := condition(inst, "GraphResolved")
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonStatusTooLarge ||
				!strings.HasPrefix(cond.Message, "the status fields come to 1.3 MiB (first 683 KiB, second 683 KiB), more than the API server stores with the instance (") ||
				!strings.HasSuffix(cond.Message, "); they are left out until they fit") {
				t.Errorf("GraphResolved = %+v", cond)
			}
			if cond := condition(inst, "ResourcesReady"); cond == nil || cond.Status != metav1.ConditionTrue {
				t.Errorf("ResourcesReady = %+v", cond)
			}
			if status, _, _ := unstructured.NestedMap(inst.Object, "status"); status["first"] != nil || status["second"] != nil {
				t.Errorf("status holds projected fields: %v", slices.Sorted(maps.Keys(status)))
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "copies", "big", "-n", ns)
			if err == nil || !strings.Contains(out, "Copies/big's status is too large to store") {
				t.Errorf("why-not-ready of a status too large (err %v):\n%s", err, out)
			}
			for _, name := range []string{"big-first", "big-second"} {
				if cm := c.mustGet(t, "v1", "ConfigMap", ns, name); len(cm.Object["data"].(map[string]any)["text"].(string)) != 700_000 {
					t.Errorf("ConfigMap %s does not hold the text", name)
				}
			}
			// Passes that project the same fields for the same generation
			// do not send them again: they would be refused again.
			refused, failed := writeErrors(t, "status"), instanceReconcileErrors(t)
			for i := range 2 {
				c.patch(t, "kro.run/v1alpha1", "Copies", ns, "big", fmt.Sprintf(`{"metadata":{"annotations":{"pass":"%d"}}}`, i))
				eventually(t, 30*time.Second, "another pass of the instance", func() (bool, string) {
					n := instanceReconcileErrors(t)
					return n > failed, fmt.Sprintf("%v failed passes", n)
				})
				failed = instanceReconcileErrors(t)
			}
			if n := writeErrors(t, "status"); n != refused {
				t.Errorf("passes sent the fields refused again: %v status writes refused, %v before", n, refused)
			}
			// Each pass computes GraphResolved True before its write
			// fails; the condition, False all along, keeps its time. The
			// change comes a second later, the times' precision.
			since := cond.LastTransitionTime
			time.Sleep(1100 * time.Millisecond)
			c.apply(t, instance(strings.Repeat("y", 700_000)))
			inst = c.waitState(t, "kro.run/v1alpha1", "Copies", ns, "big", v1alpha1.InstanceFailed)
			if cond := condition(inst, "GraphResolved"); cond == nil || !cond.LastTransitionTime.Equal(&since) {
				t.Errorf("GraphResolved, False since %s, moved: %+v", since, cond)
			}
			return ctx
		}).
		Assess("once they fit, the fields are projected", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, instance("short"))
			inst := c.waitState(t, "kro.run/v1alpha1", "Copies", ns, "big", v1alpha1.InstanceActive)
			if status, _, _ := unstructured.NestedMap(inst.Object, "status"); status["first"] != "short" || status["second"] != "short" {
				t.Errorf("status = first %v, second %v", status["first"], status["second"])
			}
			return ctx
		}).
		Assess("an instance itself too large to take a status is told in an Event", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Its resources keep none of the instance's text but its
			// length, so that how large an instance may be is its own
			// matter.
			c.apply(t, noteRGD("heavy", "Heavy", "", `"${string(size(schema.spec.text))}"`))
			c.waitRGDActive(t, "heavy")
			heavy := func(name string, size int) string {
				return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Heavy, metadata: {name: %s, namespace: %s}, spec: {text: '%s'}}", name, ns, strings.Repeat("x", size))
			}
			// The largest text the API server stores in an instance
			// without a status, to 64 bytes: no status fits beside it.
			// Probes have names as long as the last one's, and are made
			// small again before they are deleted (marking an object as
			// deleted makes it larger).
			fits, refused := 1_000_000, 1_600_000
			for probe := 0; refused-fits > 64; probe++ {
				size := (fits + refused) / 2
				name := fmt.Sprintf("probe-%02d", probe)
				_, err := c.tryApply(t, heavy(name, size))
				switch {
				case err == nil:
					fits = size
					c.apply(t, heavy(name, 0))
					// A delete can start from the API server's cache, where
					// the probe may still be large for a moment.
					eventually(t, 10*time.Second, "the probe deleted", func() (bool, string) {
						err := c.resource(t, "kro.run/v1alpha1", "Heavy").Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
						return err == nil || apierrors.IsNotFound(err), fmt.Sprint(err)
					})
				case refusal.TooLarge(err):
					refused = size
				default:
					t.Fatalf("probing how large an instance is stored: %v", err)
				}
			}
			if refused == 1_600_000 {
				t.Fatalf("the API server stored an instance of 1.6 MB: no limit to probe")
			}
			c.apply(t, heavy("toolarge", fits))
			const told = "writing status: the instance is larger than the API server stores with its status (etcdserver: request is too large); it keeps the status it has until its spec is made smaller"
			eventually(t, 30*time.Second, "a StatusWriteFailed Event", func() (bool, string) {
				var notes []string
				for _, e := range eventsAbout(t, c, ns, "toolarge", v1alpha1.EventStatusWriteFailed) {
					notes = append(notes, fmt.Sprint(e.Object["type"], ": ", e.Object["note"]))
				}
				return slices.Equal(notes, []string{"Warning: " + told}), fmt.Sprintf("%q", notes)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "heavy", "toolarge", "-n", ns)
			if err == nil || !strings.Contains(out, "Heavy/toolarge is too large to be stored with a status") ||
				!strings.Contains(out, "What to do: make the instance's spec smaller") {
				t.Errorf("why-not-ready of an instance too large for a status (err %v):\n%s", err, out)
			}
			// Its resources are applied all the same.
			c.mustGet(t, "v1", "ConfigMap", ns, "toolarge-note")
			c.apply(t, heavy("toolarge", 1))
			c.waitState(t, "kro.run/v1alpha1", "Heavy", ns, "toolarge", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A value of a free-form field of the instance written into a typed field
// of a resource is checked when it is computed: the instance is FAILED with
// the field, the expression, the value and the type the field takes, and
// nothing is applied, until the instance is fixed.
func TestFreeFormValueOfTheWrongTypeIsNamed(t *testing.T) {
	const ns = "free-form-values"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: free-values}
spec:
  schema:
    apiVersion: v1alpha1
    kind: FreeValues
    spec: {cfg: object}
  resources:
  - id: settings
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
      data: {count: "${schema.spec.cfg.count}"}
  - id: named
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.cfg.name}"}
`
	instance := func(count, name string) string {
		return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: FreeValues, metadata: {name: app, namespace: %s}, spec: {cfg: {count: %s, name: %s}}}", ns, count, name)
	}
	f := features.New("free-form values").
		Assess("a number where a string goes is FAILED, naming both", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd)
			c.waitRGDActive(t, "free-values")
			c.apply(t, instance("5", "first"))
			inst := c.waitState(t, "kro.run/v1alpha1", "FreeValues", ns, "app", v1alpha1.InstanceFailed)
			want := "resource settings: data.count: ${schema.spec.cfg.count} is 5 (an int), but the field expects string"
			if cond := condition(inst, "GraphResolved"); cond == nil || cond.Status != metav1.ConditionFalse || cond.Message != want {
				t.Errorf("GraphResolved = %+v, want the message %q", cond, want)
			}
			if _, err := c.get(t, "v1", "ConfigMap", ns, "app"); !apierrors.IsNotFound(err) {
				t.Errorf("the ConfigMap was applied with a value of the wrong type: %v", err)
			}
			c.apply(t, instance(`"5"`, "first"))
			c.waitState(t, "kro.run/v1alpha1", "FreeValues", ns, "app", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedString(c.mustGet(t, "v1", "ConfigMap", ns, "app").Object, "data", "count"); got != "5" {
				t.Errorf("data.count = %q, want 5", got)
			}
			return ctx
		}).
		Assess("why-not-ready names the resource that fails, not the first one missing", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// settings exists as last rendered; named is renamed, so its
			// new object is missing.
			c.apply(t, instance("6", "second"))
			c.waitState(t, "kro.run/v1alpha1", "FreeValues", ns, "app", v1alpha1.InstanceFailed)
			out, err := kro(t, cfg, nil, "why-not-ready", "freevalues", "app", "-n", ns)
			if err == nil || !strings.Contains(out, "Root cause: resource settings (ConfigMap) cannot be rendered from FreeValues/app's values") ||
				!strings.Contains(out, "is 6 (an int), but the field expects string") || !strings.Contains(out, "fix the instance's spec or the RGD") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			// tree shows that the ConfigMap there is not what the values ask.
			tree, err := kro(t, cfg, nil, "tree", "freevalues", "app", "-n", ns)
			if err != nil || !regexp.MustCompile(`settings +ConfigMap/app .*not rendered from the instance's values \(GraphResolved\)`).MatchString(tree) {
				t.Errorf("tree: %v\n%s", err, tree)
			}
			return ctx
		}).
		Assess("a value the API server refuses in a resource is traced to the template that gave it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, instance(`"7"`, "Not_A_Name"))
			eventually(t, 20*time.Second, "the refused apply to be reported", func() (bool, string) {
				cond := condition(c.mustGet(t, "kro.run/v1alpha1", "FreeValues", ns, "app"), v1alpha1.ConditionResourcesReady)
				return cond != nil && cond.Reason == v1alpha1.ReasonApplyFailed &&
					strings.Contains(cond.Message, `ConfigMap "Not_A_Name" is invalid: metadata.name: Invalid value: "Not_A_Name"`) &&
					strings.HasSuffix(cond.Message, "; metadata.name is rendered from ${schema.spec.cfg.name}"), fmt.Sprintf("%+v", cond)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// textIntoSecretData writes a password given as text into a Secret's
// data, which holds bytes written in base64, and a literal that is not
// base64 beside it.
const textIntoSecretData = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: text-secrets}
spec:
  schema:
    apiVersion: v1alpha1
    kind: TextSecret
    spec: {password: string}
  resources:
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}"}
      data: {password: "${schema.spec.password}", user: admin}
`

// Text where bytes go is told of at admission when written in the RGD, and
// named, field and expression, when an instance gives it, rather than
// refused by the API server as "illegal base64 data at input byte 7"; the
// error does not show the text, most often a secret.
func TestTextWhereBytesGoIsNamed(t *testing.T) {
	const ns = "text-secrets"
	f := features.New("text where bytes go").
		Assess("is warned of, named without being shown, and written once base64", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			out, err := kubectl(t, cfg, textIntoSecretData, "apply", "-f", "-")
			const warned = `Warning: spec.resources[secret].template.data.user: "admin" is not base64, and the API server refuses every object so written: the field holds bytes, written in base64 (write YWRtaW4= for this text), or give it under stringData, which takes text as it is`
			if err != nil || !strings.Contains(out, warned) {
				t.Errorf("applying the RGD: %v\n%s\nwant the warning %s", err, out, warned)
			}
			c.waitRGDActive(t, "text-secrets")
			c.apply(t, strings.Replace(textIntoSecretData, "user: admin", "user: YWRtaW4=", 1))
			instance := func(password string) string {
				return fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TextSecret, metadata: {name: db, namespace: %s}, spec: {password: %q}}", ns, password)
			}
			c.apply(t, instance("hunter2!"))
			inst := c.waitState(t, "kro.run/v1alpha1", "TextSecret", ns, "db", v1alpha1.InstanceFailed)
			const want = "resource secret: data.password: ${schema.spec.password} is text that is not base64 (not shown: it may be a secret), but the field expects base64 text (bytes); write ${bytes(schema.spec.password)} to have the text written in base64, or give it under stringData, which takes text as it is"
			if cond := condition(inst, "GraphResolved"); cond == nil || cond.Status != metav1.ConditionFalse || cond.Message != want {
				t.Errorf("GraphResolved = %+v, want the message %q", cond, want)
			}
			if _, err := c.get(t, "v1", "Secret", ns, "db"); !apierrors.IsNotFound(err) {
				t.Errorf("the Secret was applied with text that is not base64: %v", err)
			}
			c.apply(t, instance("aHVudGVyMiE="))
			c.waitState(t, "kro.run/v1alpha1", "TextSecret", ns, "db", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedString(c.mustGet(t, "v1", "Secret", ns, "db").Object, "data", "password"); got != "aHVudGVyMiE=" {
				t.Errorf("data.password = %q, want the base64 text as given", got)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// shelfRGD projects fields of the first item of a collection into an
// object of the status: with no items, they have no inputs.
const shelfRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: shelf}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Shelf
    spec: {books: "[]string"}
    status:
      first: {name: "${books[0].metadata.name}", count: "${size(books)}"}
  resources:
  - id: books
    forEach: [{book: "${schema.spec.books}"}]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${book}"}
`

func TestStatusFieldsWhoseInputsAreGoneAreRemoved(t *testing.T) {
	const ns = "status-gone"
	f := features.New("a projected field within a status object goes when its inputs go").
		Assess("the first book's name goes with the last book", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, shelfRGD)
			c.waitRGDActive(t, "shelf")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Shelf, metadata: {name: s, namespace: %s}, spec: {books: [dune]}}", ns))
			inst := c.waitState(t, "kro.run/v1alpha1", "Shelf", ns, "s", v1alpha1.InstanceActive)
			if got, _, _ := unstructured.NestedString(inst.Object, "status", "first", "name"); got != "s-dune" {
				t.Fatalf("status.first.name = %q, want s-dune", got)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Shelf, metadata: {name: s, namespace: %s}, spec: {books: []}}", ns))
			eventually(t, 10*time.Second, "status.first to say there are no books", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Shelf", ns, "s")
				first, _, _ := unstructured.NestedMap(inst.Object, "status", "first")
				return fmt.Sprint(first) == "map[count:0]", fmt.Sprint(first)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
