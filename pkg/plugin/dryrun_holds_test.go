package plugin

import (
	"slices"
	"testing"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// diamond is a -> c <- b, c -> d, and e alone: c waits for a and b.
func diamond() *graph.Graph {
	return &graph.Graph{Nodes: []*graph.Node{
		{ID: "a"}, {ID: "b"}, {ID: "c", Dependencies: []string{"a", "b"}}, {ID: "d", Dependencies: []string{"c"}}, {ID: "e"},
	}}
}

// settleAll settles entries, one per node of g, in order.
func settleAll(h *holds, g *graph.Graph, entries []PlannedResource) {
	for i, n := range g.Nodes {
		h.settle(n, entries[i:i+1])
	}
}

// A resource not ready once applied holds back what depends on it, directly
// or not, as kro-agent's pass does: the plan says so, those objects give the
// status nothing, and the resource itself says why it is not ready.
func TestHoldsFollowAResourceNotReady(t *testing.T) {
	g := diamond()
	entries := []PlannedResource{
		{NodeID: "a", Action: ActionUnchanged, notReady: `readyWhen ${a.data.ready == "yes"} is false; it read a.data.ready = "no"`},
		{NodeID: "b", Action: ActionUnchanged},
		{NodeID: "c", Action: ActionCreate, notReady: "readyWhen ${c.data.x} is false"},
		{NodeID: "d", Action: ActionUpdate},
		{NodeID: "e", Action: ActionCreate, notReady: "readyWhen ${e.data.x} is false"},
	}
	h := newHolds(g)
	settleAll(h, g, entries)
	want := []string{
		`not ready yet, so what depends on it waits: readyWhen ${a.data.ready == "yes"} is false; it read a.data.ready = "no"`,
		"",
		// Not applied, c is not judged ready.
		"kro-agent creates it only after a, which is not ready yet (above)",
		"kro-agent updates it only after c, which waits for a, which is not ready yet (above)",
		// Nothing depends on e.
		"not ready yet: readyWhen ${e.data.x} is false",
	}
	for i, e := range entries {
		if e.Reason != want[i] {
			t.Errorf("%s: reason %q, want %q", e.NodeID, e.Reason, want[i])
		}
	}
	if !h.waiting() {
		t.Error("waiting = false, want true: c and d wait for a")
	}
	got := h.unobserved()
	slices.Sort(got)
	if !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("unobserved = %v, want [c d]: a and e are applied and observed", got)
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if want := id == "c" || id == "d"; h.unreached(id) != want {
			t.Errorf("unreached(%s) = %v, want %v", id, !want, want)
		}
	}
}

// A refused dependency is told before one not ready: it does not resolve
// itself, and what it holds back is invalid or being deleted, not waiting.
func TestHoldsTellARefusalBeforeAWait(t *testing.T) {
	g := diamond()
	entries := []PlannedResource{
		{NodeID: "a", Action: ActionUnchanged, notReady: "readyWhen ${a.data.x} is false"},
		{NodeID: "b", Action: ActionInvalid, Reason: "spec.x: Invalid value"},
		// Not reached, c is not judged ready.
		{NodeID: "c", Action: ActionCreate, notReady: "readyWhen ${c.data.x} is false"},
		{NodeID: "d", Action: ActionCreate},
		{NodeID: "e", Action: ActionCreate},
	}
	h := newHolds(g)
	settleAll(h, g, entries)
	for i, want := range []string{
		"not ready yet, so what depends on it waits: readyWhen ${a.data.x} is false",
		"spec.x: Invalid value",
		"kro-agent creates it only after b, which is invalid (above)",
		"kro-agent creates it only after c, which waits for b, which is invalid (above)",
		"",
	} {
		if entries[i].Reason != want {
			t.Errorf("%s: reason %q, want %q", entries[i].NodeID, entries[i].Reason, want)
		}
	}
	if h.waiting() {
		t.Error("waiting = true, want false: what waits, waits for b, which is refused")
	}
	got := h.unobserved()
	slices.Sort(got)
	if !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("unobserved = %v, want [b c d]", got)
	}
	// b, refused, is not observed, and gives the status nothing; what
	// waits for it keeps what it gave.
	if h.unreached("b") || !h.unreached("c") || !h.unreached("d") {
		t.Errorf("unreached: b %v, c %v, d %v; want false, true, true", h.unreached("b"), h.unreached("c"), h.unreached("d"))
	}
}

// An externalRef not ready holds back what reads it; its own entry says so
// already.
func TestHoldsFollowAnExternalRefNotReady(t *testing.T) {
	g := &graph.Graph{Nodes: []*graph.Node{{ID: "src"}, {ID: "copy", Dependencies: []string{"src"}}}}
	h := newHolds(g)
	ext := PlannedResource{NodeID: "src", Action: ActionUnchanged, Reason: "externalRef: read, never written; not ready, so what reads it waits: x", notReady: "x"}
	h.settleExternal(g.Nodes[0], ext)
	entries := []PlannedResource{{NodeID: "copy", Action: ActionCreate}}
	h.settle(g.Nodes[1], entries)
	if want := "kro-agent creates it only after src, which is not ready yet (above)"; entries[0].Reason != want {
		t.Errorf("reason %q, want %q", entries[0].Reason, want)
	}
}
