package plugin

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// gridRGD has collections whose lists come from the instance, from another
// collection, and from an expression that can fail.
const gridRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: grid}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Grid
    spec: {size: integer, names: "[]string"}
  resources:
  - id: cells
    forEach:
    - i: ${lists.range(schema.spec.size)}
    - j: ${lists.range(schema.spec.size)}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${string(i)}-${string(j)}"}
  - id: named
    forEach:
    - name: ${schema.spec.names}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${name}"}
  - id: echoes
    forEach:
    - c: ${named}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${c.metadata.name}-echo"}
  - id: first
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.names[0]}"}
  - id: divided
    forEach:
    - i: ${lists.range(10 / schema.spec.size)}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${string(i)}"}
`

// compileGrid compiles gridRGD against the built-in kinds.
func compileGrid(t *testing.T) *graph.Graph {
	t.Helper()
	return compileRGD(t, gridRGD)
}

// compileRGD compiles the RGD of the manifest text against the built-in
// kinds.
func compileRGD(t *testing.T, text string) *graph.Graph {
	t.Helper()
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(text), rgd); err != nil {
		t.Fatal(err)
	}
	builtin, _ := kinds.Builtin()
	g, err := graph.Compile(rgd, graph.Options{Resolver: builtin})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A collection none of whose items exist says why: how many it should have,
// that it waits for a field of the instance or for a resource, that its
// forEach fails, or that it has none to have. The agent's limit on items is
// not the plugin's to apply.
func TestAbsentCollectionsSayWhy(t *testing.T) {
	g := compileGrid(t)
	for _, tc := range []struct {
		name         string
		spec         map[string]any
		node         string
		ready, cause string
	}{
		{"beyond the default limit", map[string]any{"size": int64(34), "names": []any{}}, "cells", VerdictMissing, "none of its 1156 items exists"},
		{"one item", map[string]any{"size": int64(1), "names": []any{}}, "cells", VerdictMissing, "its one item does not exist"},
		{"empty", map[string]any{"size": int64(0), "names": []any{}}, "cells", VerdictReady, "empty collection"},
		{"a list the instance does not set", map[string]any{"size": int64(1)}, "named", VerdictMissing, "not created yet: the instance does not set spec.names"},
		{"a list of a resource not there yet", map[string]any{"size": int64(1)}, "echoes", VerdictMissing, "not created yet: waiting for resource named"},
		{"an index past the end of the instance's list", map[string]any{"size": int64(1), "names": []any{}}, "first", VerdictMissing, "not created yet: metadata.name: ${schema.spec.names[0]}: index out of bounds: 0 (the expression reads only the instance"},
		{"a list that cannot be computed", map[string]any{"size": int64(0)}, "divided", VerdictMissing, "its forEach cannot be evaluated: forEach i: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := map[string]any{"metadata": map[string]any{"name": "g", "namespace": "ns"}, "spec": tc.spec}
			row := absentRow(g.Node(tc.node), resolve.NewScope(g, inst), 1, "ConfigMap", "ns")
			if row.Ready != tc.ready || len(row.Reason) < len(tc.cause) || row.Reason[:len(tc.cause)] != tc.cause {
				t.Errorf("row = %s %q, want %s %q", row.Ready, row.Reason, tc.ready, tc.cause)
			}
		})
	}
}

// A collection some of whose objects exist lists the others as missing, by
// the name each would have, in index order.
func TestMissingItemsAreListed(t *testing.T) {
	g := compileGrid(t)
	inst := map[string]any{"metadata": map[string]any{"name": "n", "namespace": "ns"}, "spec": map[string]any{"names": []any{"x", "y", "z"}}}
	zero, two := 0, 2
	rows := []Row{
		{NodeID: "named", Index: &zero, Kind: "ConfigMap", Name: "x", Ready: VerdictReady},
		{NodeID: "named", Index: &two, Kind: "ConfigMap", Name: "z", Ready: VerdictReady},
	}
	got := withMissingItems(rows, g.Node("named"), resolve.NewScope(g, inst), 1, "ConfigMap", "ns")
	if len(got) != 3 {
		t.Fatalf("rows = %+v, want 3", got)
	}
	for i, want := range []struct{ name, ready string }{{"x", VerdictReady}, {"y", VerdictMissing}, {"z", VerdictReady}} {
		r := got[i]
		if r.Index == nil || *r.Index != i || r.Name != want.name || r.Ready != want.ready {
			t.Errorf("row %d = %s %s %s, want %s %s", i, r.node(), r.Name, r.Ready, want.name, want.ready)
		}
	}
	if got[1].Namespace != "ns" || got[1].Reason != "expected by the graph but does not exist" {
		t.Errorf("missing row = %+v", got[1])
	}
}

// The instance's row gives its state and, while it is not Ready, the Ready
// condition's reason, unless that only says the state again.
func TestInstanceReasonDoesNotRepeatTheState(t *testing.T) {
	for _, tc := range []struct{ state, status, reason, want string }{
		{"ACTIVE", "True", "Ready", "ACTIVE"},
		{"IN_PROGRESS", "False", "ResourcesNotReady", "IN_PROGRESS ResourcesNotReady"},
		{"DELETING", "Unknown", "Deleting", "DELETING"},
		{"", "False", "GraphNotAccepted", "GraphNotAccepted"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"state":      tc.state,
			"conditions": []any{map[string]any{"type": "Ready", "status": tc.status, "reason": tc.reason}},
		}}}
		if got := readyReason(u); got != tc.want {
			t.Errorf("state %s, Ready %s %s: reason %q, want %q", tc.state, tc.status, tc.reason, got, tc.want)
		}
	}
}

// An instance being deleted is Deleting in its row from the moment it is
// marked, while its status, which kro-agent writes after its first
// deletions, still says ACTIVE (another's finalizer named, kro-agent's
// own not); then its state says it, until kro-agent has taken its
// finalizer off and another's holds it.
func TestInstanceRowOfAnInstanceBeingDeleted(t *testing.T) {
	for _, tc := range []struct {
		state, ready, reason string
		finalizers           []any
	}{
		{"ACTIVE", VerdictDeleting, "being deleted, held by the finalizers example.com/backup", []any{v1alpha1.Finalizer, "example.com/backup"}},
		{"DELETING", VerdictDeleting, "DELETING", []any{v1alpha1.Finalizer, "example.com/backup"}},
		// kro-agent is done with it: its last status is not the news.
		{"DELETING", VerdictDeleting, "being deleted, held by the finalizers example.com/backup", []any{"example.com/backup"}},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "shop", "deletionTimestamp": "2026-12-03T04:00:00Z", "finalizers": tc.finalizers},
			"status": map[string]any{
				"state":      tc.state,
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready"}},
			},
		}}
		if row := instanceRow(u, "WebApp"); row.Ready != tc.ready || row.Reason != tc.reason {
			t.Errorf("state %s, finalizers %v: row %s %q, want %s %q", tc.state, tc.finalizers, row.Ready, row.Reason, tc.ready, tc.reason)
		}
	}
}

// The instance's row says when its conditions describe a generation
// before its own: kro-agent has not processed its latest change.
func TestInstanceRowOfStaleConditions(t *testing.T) {
	managed := map[string]any{"type": "InstanceManaged", "status": "True", "reason": "Managed", "observedGeneration": int64(1)}
	released := map[string]any{"type": "InstanceManaged", "status": "False", "reason": "Released", "observedGeneration": int64(1)}
	for _, tc := range []struct {
		generation, observed int64
		managed              map[string]any
		want                 string
	}{
		{2, 1, managed, "ACTIVE (stale: its conditions describe generation 1, the instance is at 2)"},
		{2, 2, managed, "ACTIVE"},
		// Written by an agent that did not record generations.
		{2, 0, managed, "ACTIVE"},
		// Its RGD deleted, no agent is late with it.
		{2, 1, released, "ACTIVE"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "shop", "generation": tc.generation},
			"status": map[string]any{"state": "ACTIVE", "conditions": []any{tc.managed, map[string]any{
				"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": tc.observed,
			}}},
		}}
		if row := instanceRow(u, "WebApp"); row.Reason != tc.want {
			t.Errorf("generation %d, observed %d, %s: reason %q, want %q", tc.generation, tc.observed, tc.managed["reason"], row.Reason, tc.want)
		}
	}
}

// A node is ready for what depends on it when every row of it is: objects
// ready, externalRefs read and ready, and not when it has no row at all.
func TestAllReady(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []Row
		want bool
	}{
		{"no rows", nil, false},
		{"ready objects", []Row{{Ready: VerdictReady}, {Ready: VerdictReady}}, true},
		{"an item missing", []Row{{Ready: VerdictReady}, {Ready: VerdictMissing}}, false},
		{"an external read", []Row{{Ready: VerdictExternal}}, true},
		{"an external not ready", []Row{{Ready: VerdictExternal, blocking: "is not ready"}}, false},
		{"an object of unknown health", []Row{{Ready: VerdictUnknown}}, false},
	} {
		if got := allReady(tc.rows); got != tc.want {
			t.Errorf("%s: allReady = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// What depends on a resource that is not ready names it, the first of its
// dependencies that is not.
func TestUnreadyDependency(t *testing.T) {
	g := compileGrid(t)
	echoes := g.Node("echoes")
	if got := unreadyDependency(echoes, map[string]bool{}); got != "named" {
		t.Errorf("with named not ready: %q", got)
	}
	if got := unreadyDependency(echoes, map[string]bool{"named": true}); got != "" {
		t.Errorf("with named ready: %q", got)
	}
}
