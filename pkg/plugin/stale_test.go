package plugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// movingRGD has a resource whose name comes from the instance, one that
// waits for another's status for its name, and a collection.
const movingRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: moving}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Moving
    spec: {name: string, names: "[]string"}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}"}
  - id: echo
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${config.data.next}"}
  - id: copies
    forEach:
    - entry: ${schema.spec.names}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${entry}"}
`

func configMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
}

// The objects of a node that its template no longer renders are stale,
// each with why, and a collection's objects take the index of the item
// they are now; where the name cannot be rendered, nothing is called stale.
func TestSortOutTellsStaleObjects(t *testing.T) {
	g := compileRGD(t, movingRGD)
	inst := map[string]any{"metadata": map[string]any{"name": "m", "namespace": "ns"}, "spec": map[string]any{"name": "new", "names": []any{"b", "c"}}}
	scope := resolve.NewScope(g, inst)

	old, renamed := configMap("old"), configMap("new")
	m := sortOut(g.Node("config"), []*unstructured.Unstructured{old, renamed}, scope, "", "ns")
	if len(m.current) != 1 || m.current[0] != renamed || len(m.stale) != 1 || m.stale[0].object != old || m.stale[0].why != "resource config renders ConfigMap/new now" {
		t.Errorf("renamed: current %v, stale %+v", names(m.current), m.stale)
	}

	// echo's name waits for config's data, not observed.
	m = sortOut(g.Node("echo"), []*unstructured.Unstructured{old}, scope, "", "ns")
	if len(m.current) != 1 || len(m.stale) != 0 {
		t.Errorf("unrenderable name: current %v, stale %+v", names(m.current), m.stale)
	}

	a, b, c := configMap("a"), configMap("b"), configMap("c")
	m = sortOut(g.Node("copies"), []*unstructured.Unstructured{a, b, c}, scope, "", "ns")
	if len(m.current) != 2 || m.index[b] != 0 || m.index[c] != 1 || len(m.stale) != 1 || m.stale[0].object != a ||
		m.stale[0].why != "collection copies has no such item now" {
		t.Errorf("collection: current %v, index %v, stale %+v", names(m.current), m.index, m.stale)
	}

	m = sortOut(g.Node("config"), []*unstructured.Unstructured{renamed}, scope, "includeWhen ${false} is false", "ns")
	if len(m.current) != 0 || len(m.stale) != 1 || m.stale[0].why != "includeWhen ${false} is false" {
		t.Errorf("skipped: current %v, stale %+v", names(m.current), m.stale)
	}

	row := staleRow(g.Node("copies"), m.stale[0], scope, 3)
	if row.Ready != VerdictStale || row.Index != nil || row.Depth != 1 ||
		row.Reason != "no longer produced: includeWhen ${false} is false; kro-agent deletes it once every resource is applied" {
		t.Errorf("stale row = %+v", row)
	}
}

// An object of the kind a resource had before it changed is stale even
// where what the resource renders now cannot be told.
func TestSortOutTellsObjectsOfAnotherKind(t *testing.T) {
	g := compileRGD(t, movingRGD)
	scope := resolve.NewScope(g, map[string]any{"metadata": map[string]any{"name": "m", "namespace": "ns"}, "spec": map[string]any{"name": "new"}})
	secret := configMap("new")
	secret.SetKind("Secret")
	for _, id := range []string{"config", "echo"} {
		m := sortOut(g.Node(id), []*unstructured.Unstructured{secret}, scope, "", "ns")
		if len(m.current) != 0 || len(m.stale) != 1 || m.stale[0].why != "resource "+id+" is a ConfigMap now" {
			t.Errorf("%s: current %v, stale %+v", id, names(m.current), m.stale)
		}
	}
}

// Objects of a resource the RGD no longer has are listed after the rest:
// stale, to be pruned, unless kro-agent still serves the graph of an
// earlier generation, which keeps them; those being deleted say so.
func TestGoneRows(t *testing.T) {
	g := compileRGD(t, movingRGD)
	retired, leaving, current := configMap("retired"), configMap("leaving"), configMap("m")
	retired.SetLabels(map[string]string{v1alpha1.LabelNodeID: "retired"})
	leaving.SetLabels(map[string]string{v1alpha1.LabelNodeID: "retired"})
	leaving.SetDeletionTimestamp(&metav1.Time{Time: time.Unix(1, 0)})
	retired.SetCreationTimestamp(metav1.Time{Time: time.Unix(1, 0)})
	leaving.SetCreationTimestamp(metav1.Time{Time: time.Unix(2, 0)})
	objs := map[string][]*unstructured.Unstructured{"retired": {retired, leaving}, "config": {current}}
	rgd := &v1alpha1.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "moving", Generation: 5}}
	rows := goneRows(objs, &subject{rgd: rgd, graph: g}, 3)
	if len(rows) != 2 || rows[0].Name != "retired" || rows[0].Ready != VerdictStale || rows[1].Name != "leaving" || rows[1].Ready != VerdictDeleting ||
		rows[0].Reason != "no longer produced: the RGD has no resource retired now; kro-agent deletes it once every resource is applied" || rows[0].Depth != 1 {
		t.Fatalf("gone rows: %+v", rows)
	}
	// kro-agent waits for no object it prunes: one still being deleted
	// is not what keeps the instance from being ready, as one of the
	// graph's would be.
	if rows[1].blocks() || !(Row{Ready: VerdictDeleting}).blocks() {
		t.Errorf("a pruned object being deleted blocks: %v; one of the graph's: %v", rows[1].blocks(), (Row{Ready: VerdictDeleting}).blocks())
	}

	rgd.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionControllerReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonServingEarlierGeneration, ObservedGeneration: 5}}
	rows = goneRows(objs, &subject{rgd: rgd, graph: g}, 3)
	if len(rows) != 2 || rows[0].Ready != VerdictUnknown ||
		rows[0].Reason != "the RGD has no resource retired now; kept by the graph of an earlier generation, which kro-agent still serves" {
		t.Errorf("gone rows while an earlier graph is served: %+v", rows)
	}
	// Conditions of an earlier generation say nothing of what is served now.
	rgd.Generation = 6
	if rows = goneRows(objs, &subject{rgd: rgd, graph: g}, 3); rows[0].Ready != VerdictStale {
		t.Errorf("gone rows under stale conditions: %+v", rows)
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		out = append(out, u.GetName())
	}
	return out
}

// A missing object whose apply the instance's ResourcesReady says was
// refused gives the API server's answer as its reason; another missing
// object keeps its own. The agent names the object with its namespace;
// earlier agents named it without.
func TestMissingObjectsTellTheirRefusal(t *testing.T) {
	const answer = `Service "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`
	for _, named := range []string{"team/a.b", "a.b"} {
		inst := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
			"type": "ResourcesReady", "status": "False", "reason": "ApplyFailed",
			"message": "applying Service " + named + " (resource service) in the local cluster: " + answer,
		}}}}}
		rows := []Row{
			{NodeID: "service", Kind: "Service", Name: "a.b", Namespace: "team", Ready: VerdictMissing, Reason: "expected by the graph but does not exist"},
			{NodeID: "other", Kind: "Service", Name: "a.b", Namespace: "team", Ready: VerdictMissing, Reason: "expected by the graph but does not exist"},
		}
		markRefused(rows, inst)
		if want := "kro-agent's apply is refused: " + answer; rows[0].Reason != want || !rows[0].refused {
			t.Errorf("named %s: refused row = %q, want %q", named, rows[0].Reason, want)
		}
		if !strings.HasPrefix(rows[1].Reason, "expected by the graph") || rows[1].refused {
			t.Errorf("named %s: another resource's row = %q", named, rows[1].Reason)
		}
	}
}

// An object that exists, whose change the API server refuses, says so in
// its row, ready or not: the row would otherwise say nothing of a change
// that does not get through. Someone else's object in the way is not
// kro-agent's to change, and says that instead.
func TestExistingObjectsTellTheirRefusedChange(t *testing.T) {
	const answer = `Deployment.apps "t1" is invalid: spec.selector: Invalid value: {"matchLabels":{"tier":"api"}}: field is immutable`
	inst := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "ResourcesReady", "status": "False", "reason": "ApplyFailed",
		"message": "applying Deployment team/t1 (resource deploy) in the local cluster: " + answer,
	}}}}}
	exists := &unstructured.Unstructured{}
	rows := []Row{
		{NodeID: "deploy", Kind: "Deployment", Name: "t1", Namespace: "team", Ready: VerdictReady, object: exists},
		{NodeID: "deploy", Kind: "Deployment", Name: "t1", Namespace: "team", Ready: VerdictConflict, Reason: "someone else's", object: exists},
	}
	markRefused(rows, inst)
	if want := "kro-agent's change is refused: " + answer; rows[0].Reason != want || !rows[0].refused || rows[0].Ready != VerdictReady {
		t.Errorf("row of the refused change = %s %q, want Ready %q", rows[0].Ready, rows[0].Reason, want)
	}
	if rows[1].Reason != "someone else's" || rows[1].refused {
		t.Errorf("row of someone else's object = %q", rows[1].Reason)
	}
}

// Each of the refusals the agent tells in one message, the first in full
// and the others after "Also: ", gives its own row its own answer.
func TestEveryRefusalToldIsItsRowsReason(t *testing.T) {
	const claim = `PersistentVolumeClaim "m1" is invalid: spec: Forbidden: spec is immutable after creation` + "\n@@ -6,7 +6,7 @@\n-  \"storage\": \"1Gi\"\n+  \"storage\": \"2Gi\""
	const job = `Job.batch "m1" is invalid: spec.template: Invalid value: "…": field is immutable`
	inst := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "ResourcesReady", "status": "False", "reason": "ApplyFailed",
		"message": "applying PersistentVolumeClaim team/m1 (resource claim) in the local cluster: " + claim +
			"\nAlso: applying Job team/m1 (resource job) in the local cluster: " + job,
	}}}}}
	exists := &unstructured.Unstructured{}
	rows := []Row{
		{NodeID: "claim", Kind: "PersistentVolumeClaim", Name: "m1", Namespace: "team", Ready: VerdictReady, object: exists},
		{NodeID: "job", Kind: "Job", Name: "m1", Namespace: "team", Ready: VerdictReady, object: exists},
	}
	markRefused(rows, inst)
	for i, want := range []string{claim, job} {
		if want = "kro-agent's change is refused: " + want; rows[i].Reason != want || !rows[i].refused {
			t.Errorf("row of %s = %q, want %q", rows[i].NodeID, rows[i].Reason, want)
		}
	}
}

// A collection none of whose objects exist because the API server refuses
// them lists each item by the name it renders, with its own refusal; one
// whose objects are not refused keeps its one row.
func TestRefusedItemsOfAnAbsentCollectionAreListed(t *testing.T) {
	g := compileGrid(t)
	n := g.Node("named")
	scope := resolve.NewScope(g, map[string]any{"metadata": map[string]any{"name": "n", "namespace": "ns"}, "spec": map[string]any{"names": []any{"x_1", "y_2"}}})
	refusal := func(name string) string {
		return fmt.Sprintf(`ConfigMap %q is invalid: metadata.name: Invalid value: %q: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`, name, name)
	}
	inst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "n", "namespace": "ns"}, "status": map[string]any{"conditions": []any{map[string]any{
		"type": "ResourcesReady", "status": "False", "reason": "ApplyFailed",
		"message": "applying ConfigMap ns/x_1 (resource named) in the local cluster: " + refusal("x_1") +
			"\nAlso: applying ConfigMap ns/y_2 (resource named) in the local cluster: " + refusal("y_2"),
	}}}}}
	absent := absentRow(n, scope, 1, "ConfigMap", "ns")
	rows := refusedItemRows(n, scope, 1, "ConfigMap", inst, absent)
	markRefused(rows, inst)
	if len(rows) != 2 {
		t.Fatalf("rows = %+v, want one per item", rows)
	}
	for i, name := range []string{"x_1", "y_2"} {
		if r := rows[i]; r.Name != name || r.Index == nil || *r.Index != i || r.Reason != "kro-agent's apply is refused: "+refusal(name) {
			t.Errorf("row %d = %s[%v] %s %q, want item %d, %s, with its refusal", i, r.NodeID, r.Index, r.Name, r.Reason, i, name)
		}
	}
	// Refused for another resource: the collection's one row stands.
	unstructured.SetNestedSlice(inst.Object, []any{map[string]any{"type": "ResourcesReady", "status": "False", "reason": "ApplyFailed",
		"message": "applying ConfigMap ns/a (resource cells) in the local cluster: " + refusal("a")}}, "status", "conditions")
	if rows := refusedItemRows(n, scope, 1, "ConfigMap", inst, absent); rows != nil {
		t.Errorf("rows = %+v for a refusal of another resource, want none", rows)
	}
}
