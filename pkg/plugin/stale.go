package plugin

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// VerdictStale is an object of the instance that the graph no longer
// produces (its resource now renders another name, its collection lost
// the item, its includeWhen turned false): kro-agent deletes it once a
// pass applies every resource, and until then it is not what the
// instance's readiness waits for.
const VerdictStale = "Stale"

// nodeObjects are the objects labelled as one node's, sorted out against
// what the graph renders now.
type nodeObjects struct {
	// current are the objects the graph still produces.
	current []*unstructured.Unstructured
	// index is, for a collection, the item each current object is now.
	index map[*unstructured.Unstructured]int
	// stale are the others, with why the graph no longer produces each.
	stale []staleObject
}

type staleObject struct {
	object *unstructured.Unstructured
	why    string
}

// sortOut tells apart the objects of node n the graph produces now from
// those it no longer does; skipped, when not "", is why n is skipped.
// When what n produces cannot be told (its template or forEach waits for
// something, or fails), every object counts as current: kro-agent prunes
// nothing while any resource cannot be applied either.
func sortOut(n *graph.Node, objs []*unstructured.Unstructured, scope *resolve.Scope, skipped, instanceNamespace string) nodeObjects {
	all := nodeObjects{current: objs}
	if len(objs) == 0 || n.Kind == nil || n.External != nil {
		return all
	}
	// Objects of the kind the resource had before it changed are never
	// what it produces now, whatever else can be told.
	var otherKind []staleObject
	objs = slices.DeleteFunc(slices.Clone(objs), func(u *unstructured.Unstructured) bool {
		if u.GroupVersionKind().GroupKind() == n.Kind.GVK.GroupKind() {
			return false
		}
		otherKind = append(otherKind, staleObject{u, fmt.Sprintf("resource %s is a %s now", n.ID, n.Kind.GVK.Kind)})
		return true
	})
	all = nodeObjects{current: objs, stale: otherKind}
	if skipped != "" {
		out := nodeObjects{stale: otherKind}
		for _, u := range objs {
			out.stale = append(out.stale, staleObject{u, skipped})
		}
		return out
	}
	items := []resolve.Item{{Scope: scope, Index: -1}}
	if n.IsCollection() {
		var err error
		if items, err = resolve.Expand(n, scope, maxCollectionPreview); err != nil {
			return all
		}
	}
	want := map[objectKey]int{}
	var named string
	for _, item := range items {
		key, ok := renderedKey(n, item.Scope, instanceNamespace)
		if !ok {
			return all
		}
		want[key] = item.Index
		named = key.kind.Kind + "/" + key.name
	}
	out := nodeObjects{index: map[*unstructured.Unstructured]int{}, stale: otherKind}
	for _, u := range objs {
		index, ok := want[objectKey{kind: u.GroupVersionKind().GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}]
		switch {
		case ok:
			out.current = append(out.current, u)
			if index >= 0 {
				out.index[u] = index
			}
		case n.IsCollection():
			out.stale = append(out.stale, staleObject{u, "collection " + n.ID + " has no such item now"})
		default:
			out.stale = append(out.stale, staleObject{u, fmt.Sprintf("resource %s renders %s now", n.ID, named)})
		}
	}
	return out
}

// maxCollectionPreview bounds the items of a collection the tree renders
// to sort out its objects; the agent's own limit is a flag, not known here,
// and past it the agent applies none of them.
const maxCollectionPreview = 10000

// renderedKey is the object n renders in scope, when its name and
// namespace can be rendered now.
func renderedKey(n *graph.Node, scope *resolve.Scope, instanceNamespace string) (objectKey, bool) {
	u := unstructured.Unstructured{Object: resolve.RenderOr(n, scope, func(*graph.Field, error) any { return pendingMarker })}
	key := objectKey{kind: n.Kind.GVK.GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}
	if key.namespace == "" && n.Kind.Namespaced {
		key.namespace = instanceNamespace
	}
	if key.name == "" || strings.Contains(key.namespace+key.name, pendingMarker) {
		return objectKey{}, false
	}
	return key, true
}

// staleRow is the row of an object the graph no longer produces, listed
// after the graph's own rows, under the instance.
func staleRow(n *graph.Node, s staleObject, scope *resolve.Scope, place int) Row {
	row := objectRow(n, s.object, scope, 1)
	row.Index = nil
	if row.Ready != VerdictDeleting {
		row.Ready, row.Reason = VerdictStale, "no longer produced: "+s.why+"; kro-agent deletes it once every resource is applied"
	}
	row.place, row.leftover = []int{place}, true
	return row
}

// goneRows are the rows of the objects in objs (by node id) whose resource
// the RGD of s no longer has, in the order they were created, listed after
// every other row. kro-agent deletes them as it prunes; while it serves the
// graph of an earlier generation of the RGD it keeps them instead, and the
// tree, drawn from the RGD as it is now, cannot judge their readiness.
func goneRows(objs map[string][]*unstructured.Unstructured, s *subject, place int) []Row {
	earlier := servesEarlierGraph(s.rgd)
	var rows []Row
	for id, us := range objs {
		if s.graph.Node(id) != nil {
			continue
		}
		for _, u := range us {
			row := flatRow(u)
			row.Index, row.place, row.leftover = nil, []int{place}, true
			switch {
			case row.Ready == VerdictDeleting:
			case earlier:
				// Short enough for the table: the note under it says the rest.
				row.Reason = fmt.Sprintf("the RGD has no resource %s now; kept by the graph of an earlier generation, which kro-agent still serves", id)
			default:
				row.Ready, row.Reason = VerdictStale, fmt.Sprintf("no longer produced: the RGD has no resource %s now; kro-agent deletes it once every resource is applied", id)
			}
			rows = append(rows, row)
		}
	}
	slices.SortStableFunc(rows, compareCreated)
	return rows
}

// servesEarlierGraph tells whether kro-agent reconciles the instances of rgd
// with the graph of an earlier generation, its latest not applied (a change
// refused as breaking).
func servesEarlierGraph(rgd *v1alpha1.ResourceGraphDefinition) bool {
	served := meta.FindStatusCondition(rgd.Status.Conditions, v1alpha1.ConditionControllerReady)
	return served != nil && served.Status == metav1.ConditionTrue && served.Reason == v1alpha1.ReasonServingEarlierGeneration &&
		served.ObservedGeneration == rgd.Generation
}
