package plugin

import (
	"slices"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// holds follows, through a plan in topological order, the resources
// kro-agent goes no further than, as its pass over the graph does: one
// with an invalid object (refused by the API server, or not rendered) or
// one being deleted, which holds back what depends on it until it
// changes; and one not ready, which holds back what depends on it until
// it is.
type holds struct {
	// refused holds, for each node with an invalid object or one being
	// deleted, and for each node that depends on one, directly or not,
	// which node that is; blocked says of each such node why ("is
	// invalid").
	refused, blocked map[string]string
	// unready holds, for each node whose readyWhen is false on its object
	// as kro-agent would find it after its apply, that node, and for each
	// node that depends on one, the node it waits for.
	unready map[string]string
	// dependedOn are the nodes another one depends on.
	dependedOn map[string]bool
}

func newHolds(g *graph.Graph) *holds {
	h := &holds{refused: map[string]string{}, blocked: map[string]string{}, unready: map[string]string{}, dependedOn: map[string]bool{}}
	for _, n := range g.Nodes {
		for _, d := range n.Dependencies {
			h.dependedOn[d] = true
		}
	}
	return h
}

// settle takes in the plan's entries for node n, once they are planned,
// and says in them what holds them back: a dependency that is refused,
// or one not ready; or, for n's own objects not ready, that what depends
// on them waits.
func (h *holds) settle(n *graph.Node, entries []PlannedResource) {
	if dep := h.firstOf(n, h.refused); dep != "" {
		h.refused[n.ID] = h.refused[dep]
		for i := range entries {
			entries[i].Reason = afterRefused(entries[i], dep, h.refused[dep], h.blocked[h.refused[dep]])
		}
	} else if dep := h.firstOf(n, h.unready); dep != "" {
		// kro-agent does not get to n's objects in this pass: they are
		// not applied, nor judged ready, nor do they give the status.
		h.unready[n.ID] = h.unready[dep]
		for i := range entries {
			entries[i].Reason = afterRefused(entries[i], dep, h.unready[dep], "is not ready yet")
		}
	}
	switch {
	case slices.ContainsFunc(entries, func(p PlannedResource) bool { return p.Action == ActionInvalid }):
		h.refused[n.ID], h.blocked[n.ID] = n.ID, "is invalid"
	case slices.ContainsFunc(entries, func(p PlannedResource) bool { return p.deleting }):
		h.refused[n.ID], h.blocked[n.ID] = n.ID, "is being deleted"
	case h.refused[n.ID] == "" && h.unready[n.ID] == "" && slices.ContainsFunc(entries, func(p PlannedResource) bool { return p.notReady != "" }):
		// Reached by the pass, and not ready once applied.
		h.unready[n.ID] = n.ID
		for i := range entries {
			if entries[i].notReady != "" {
				entries[i].Reason = joinReasons(entries[i].Reason, notReadyYet(entries[i].notReady, h.dependedOn[n.ID]))
			}
		}
	}
}

// settleExternal takes in the plan's entry for an externalRef, n, which
// says itself whether it is ready: what reads it waits for it, as it
// waits for what it reads.
func (h *holds) settleExternal(n *graph.Node, p PlannedResource) {
	if dep := h.firstOf(n, h.unready); dep != "" {
		h.unready[n.ID] = h.unready[dep]
	} else if p.notReady != "" {
		h.unready[n.ID] = n.ID
	}
}

// firstOf is the first dependency of n that among holds back, "" for
// none.
func (h *holds) firstOf(n *graph.Node, among map[string]string) string {
	if i := slices.IndexFunc(n.Dependencies, func(d string) bool { return among[d] != "" }); i >= 0 {
		return n.Dependencies[i]
	}
	return ""
}

// unobserved are the nodes whose objects kro-agent's pass does not
// observe: refused ones, and those it does not get to (unreached); not a
// resource not ready, whose object is applied and observed.
func (h *holds) unobserved() []string {
	var out []string
	for id, root := range h.refused {
		if root == id || h.unreached(id) {
			out = append(out, id)
		}
	}
	for id := range h.unready {
		if h.unreached(id) {
			out = append(out, id)
		}
	}
	return out
}

// waiting tells whether some node waits for one not ready: kro-agent's
// pass does not apply every resource, and prunes nothing.
func (h *holds) waiting() bool {
	for id := range h.unready {
		if h.unreached(id) {
			return true
		}
	}
	return false
}

// unreached tells the nodes kro-agent's pass does not get to, waiting for
// a dependency refused or not ready: their objects stay as they are, and
// so does what they gave the status.
func (h *holds) unreached(id string) bool {
	if root := h.refused[id]; root != "" && root != id {
		return true
	}
	root := h.unready[id]
	return root != "" && root != id
}

// applied tells the actions whose object kro-agent applies, or finds
// as it is, and then judges ready.
func applied(action string) bool {
	return action == ActionCreate || action == ActionUpdate || action == ActionUnchanged
}

// notReadyYet is the part of a plan's reason for an object not ready
// once applied, why (readyWhen's verdict), and, when something depends on
// it, that it waits.
func notReadyYet(why string, dependedOn bool) string {
	if dependedOn {
		return "not ready yet, so what depends on it waits: " + why
	}
	return "not ready yet: " + why
}

// joinReasons joins the parts of a plan's reason, leaving out empty ones:
// why kro-agent does something only later goes before what the reason
// said already.
func joinReasons(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
