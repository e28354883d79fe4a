package graph

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// namespaceOrderHint says, for a resource n whose template puts its object
// in the namespace another resource of g makes further on in its order
// (the same string, literal or ${...}), when n does not depend on that
// resource: nothing orders the two, so n is applied before its namespace
// exists (and waits for it) and deleted after it. "" when n reads it, or
// comes after it, or its namespace is no such one.
func (g *Graph) namespaceOrderHint(n *Node) string {
	namespace, _, _ := unstructured.NestedString(n.Template, "metadata", "namespace")
	if namespace == "" {
		return ""
	}
	after := false
	for _, m := range g.Nodes {
		if m == n {
			after = true
		}
		if !after || m == n || m.IsCollection() || !isNamespace(m) {
			continue
		}
		if name, _, _ := unstructured.NestedString(m.Template, "metadata", "name"); name != namespace || g.dependsOn(n, m.ID) {
			continue
		}
		return fmt.Sprintf("%s: %s is the name of the Namespace resource %s makes, but %s does not read %s, so nothing orders them: %s is applied before its namespace exists (and waits for it), and deleted after it; write the namespace as ${%s.metadata.name}",
			field.NewPath("spec", "resources").Key(n.ID).Child("template", "metadata", "namespace"), namespace, m.ID, n.ID, m.ID, n.ID, m.ID)
	}
	return ""
}

// isNamespace tells whether n makes a core Namespace.
func isNamespace(n *Node) bool {
	return n.Template != nil && n.Kind != nil && n.Kind.GVK.Group == "" && n.Kind.GVK.Kind == "Namespace"
}

// dependsOn tells whether n needs the node id, directly or through others.
func (g *Graph) dependsOn(n *Node, id string) bool {
	seen := map[string]bool{}
	var walk func(*Node) bool
	walk = func(x *Node) bool {
		for _, d := range x.Dependencies {
			if d == id {
				return true
			}
			if !seen[d] {
				seen[d] = true
				if dn := g.Node(d); dn != nil && walk(dn) {
					return true
				}
			}
		}
		return false
	}
	return walk(n)
}
