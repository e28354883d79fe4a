package graph

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sort orders the nodes topologically, keeping authoring order among nodes
// that do not depend on each other, and reports a cycle with its path.
func (c *compiler) sort() []*Node {
	indegree := map[string]int{}
	dependents := map[string][]*Node{}
	for _, n := range c.nodes {
		indegree[n.ID] = len(n.Dependencies)
		for _, d := range n.Dependencies {
			dependents[d] = append(dependents[d], n)
		}
	}
	var order []*Node
	done := map[string]bool{}
	for len(order) < len(c.nodes) {
		// The ready node that comes first in the RGD goes next. Graphs are
		// small, so a scan beats a heap in clarity and in practice.
		var next *Node
		for _, n := range c.nodes {
			if !done[n.ID] && indegree[n.ID] == 0 {
				next = n
				break
			}
		}
		if next == nil {
			c.reportCycle(done)
			return nil
		}
		done[next.ID] = true
		order = append(order, next)
		for _, d := range dependents[next.ID] {
			indegree[d.ID]--
		}
	}
	// Dependencies are listed in apply order, which is the order they are
	// waited for.
	pos := map[string]int{}
	for i, n := range order {
		pos[n.ID] = i
	}
	for _, n := range order {
		deps := n.Dependencies
		sort.SliceStable(deps, func(i, j int) bool { return pos[deps[i]] < pos[deps[j]] })
	}
	return order
}

// reportCycle finds one cycle among the nodes not yet ordered and reports it
// as a path: a -> b -> a.
func (c *compiler) reportCycle(done map[string]bool) {
	const (
		unvisited = iota
		onStack
		finished
	)
	state := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(id string) bool
	visit = func(id string) bool {
		state[id] = onStack
		stack = append(stack, id)
		for _, d := range c.byID[id].Dependencies {
			if done[d] {
				continue
			}
			switch state[d] {
			case onStack:
				for i, s := range stack {
					if s == d {
						cycle = append(append([]string{}, stack[i:]...), d)
						return true
					}
				}
			case unvisited:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = finished
		return false
	}
	for _, n := range c.nodes {
		if !done[n.ID] && state[n.ID] == unvisited && visit(n.ID) {
			break
		}
	}
	// The path is printed in the direction of "depends on", with where
	// each resource reads the next.
	var reads []string
	for i := 0; i+1 < len(cycle); i++ {
		if at := readSite(c.byID[cycle[i]], cycle[i+1]); at != "" {
			reads = append(reads, cycle[i]+" reads "+cycle[i+1]+" in "+at)
		}
	}
	msg := "dependency cycle: " + strings.Join(cycle, " -> ")
	if len(reads) > 0 {
		msg += " (" + strings.Join(reads, ", ") + ")"
	}
	msg += "; resources must form a directed acyclic graph"
	if len(cycle) == 2 {
		// A template reading its own object, which exists only once it
		// is applied from what the template renders.
		msg += ": a resource cannot read its own object; a value of it is read in another resource or in the status"
	}
	c.errs = append(c.errs, field.Invalid(resourcesPath.Key(cycle[0]), strings.Join(cycle, " -> "), msg))
}

// readSite is where n reads the resource dep: the first template (or
// externalRef) field, forEach, includeWhen or readyWhen that does, "" for
// none.
func readSite(n *Node, dep string) string {
	for _, f := range n.Fields {
		if slices.Contains(f.References(), dep) {
			return f.Path.String()
		}
	}
	for _, it := range n.ForEach {
		if slices.Contains(it.List.References, dep) {
			return "forEach"
		}
	}
	for _, conds := range []struct {
		name  string
		exprs []*Expression
	}{{"includeWhen", n.IncludeWhen}, {"readyWhen", n.ReadyWhen}} {
		for _, e := range conds.exprs {
			if slices.Contains(e.References, dep) {
				return conds.name
			}
		}
	}
	return ""
}
