package resolve

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// Renderers records which resource of a graph, or which item of a
// collection, renders each object. Two of them naming the same object
// (items whose names do not depend on their iterators, two templates with
// one name) would take turns writing it, each undoing the other, and only
// one would ever be seen: an error of the instance's values, as kro reports
// a collection's duplicate identity.
type Renderers map[objectIdentity]renderer

// objectIdentity names an object whatever version of its kind renders it.
type objectIdentity struct {
	group, kind, namespace, name string
}

// renderer is the resource, or the item of a collection, that renders an
// object.
type renderer struct {
	node *graph.Node
	item Item
}

func (r renderer) String() string {
	if r.node.IsCollection() {
		return fmt.Sprintf("%s[%d]", r.node.ID, r.item.Index)
	}
	return r.node.ID
}

// Claim records that n renders the object (item of it, for a collection);
// it fails, naming both, when another resource or item renders it already.
func (r Renderers) Claim(n *graph.Node, item Item, namespace, name string) error {
	gk := n.Kind.GVK.GroupKind()
	id := objectIdentity{group: gk.Group, kind: gk.Kind, namespace: namespace, name: name}
	claimant := renderer{node: n, item: item}
	first, taken := r[id]
	if !taken {
		r[id] = claimant
		return nil
	}
	if namespace != "" {
		name = namespace + "/" + name
	}
	return fmt.Errorf("%s and %s both render %s %s: each object a graph manages needs a name of its own%s",
		first, claimant, gk.Kind, name, repeatedValues(n, first.item, item, first.node == n))
}

// repeatedValues explains two items of n that render one object because
// their iterators are bound to equal values, which a list forEach reads
// must hold twice (the name uses every iterator, so such items cannot
// differ): the instance's author is shown the repeat, rather than left to
// find it. It is empty for two resources, or for items whose values differ.
func repeatedValues(n *graph.Node, a, b Item, sameNode bool) string {
	if !sameNode || !n.IsCollection() || a.Scope == nil || b.Scope == nil {
		return ""
	}
	var bound []string
	for _, it := range n.ForEach {
		va, vb := a.Scope.vars[it.Name], b.Scope.vars[it.Name]
		if !reflect.DeepEqual(va, vb) {
			return ""
		}
		text, err := json.Marshal(va)
		if err != nil {
			return ""
		}
		bound = append(bound, fmt.Sprintf("%s to %s", it.Name, text))
	}
	where := "one of the lists forEach reads holds a value twice"
	if len(n.ForEach) == 1 {
		where = fmt.Sprintf("${%s} holds it twice", n.ForEach[0].List.Source)
	}
	return fmt.Sprintf("; both bind %s: %s (a schema field marked uniqueItems=true refuses a repeat)",
		strings.Join(bound, " and "), where)
}
