package resolve

import (
	"fmt"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// Renderers records which resource of a graph, or which item of a
// collection, renders each object. Two of them naming the same object
// (items whose names do not depend on their iterators, two templates with
// one name) would take turns writing it, each undoing the other, and only
// one would ever be seen: an error of the instance's values, as kro reports
// a collection's duplicate identity.
type Renderers map[objectIdentity]string

// objectIdentity names an object whatever version of its kind renders it.
type objectIdentity struct {
	group, kind, namespace, name string
}

// Claim records that n renders the object (its item index, for a
// collection); it fails, naming both, when another resource or item
// renders it already.
func (r Renderers) Claim(n *graph.Node, index int, namespace, name string) error {
	who := n.ID
	if n.IsCollection() {
		who = fmt.Sprintf("%s[%d]", n.ID, index)
	}
	gk := n.Kind.GVK.GroupKind()
	id := objectIdentity{group: gk.Group, kind: gk.Kind, namespace: namespace, name: name}
	if first, taken := r[id]; taken {
		if namespace != "" {
			name = namespace + "/" + name
		}
		return fmt.Errorf("%s and %s both render %s %s: each object a graph manages needs a name of its own", first, who, gk.Kind, name)
	}
	r[id] = who
	return nil
}
