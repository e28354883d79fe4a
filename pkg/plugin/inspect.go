package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// Verdicts of a node or object in a tree.
const (
	VerdictReady    = "Ready"
	VerdictNotReady = "NotReady"
	VerdictSkipped  = "Skipped"
	VerdictMissing  = "Missing"
	// VerdictDeleting is an object on its way out: kro-agent waits for it
	// to be gone and creates it again.
	VerdictDeleting = "Deleting"
	// VerdictDeleted is a node with no object left of an instance being
	// deleted: gone in reverse order, or never created.
	VerdictDeleted = "Deleted"
	// VerdictConflict is an object the graph expects that exists and is
	// not the instance's: kro-agent does not take it over.
	VerdictConflict = "Conflict"
	VerdictExternal = "External"
	VerdictUnknown  = "Unknown"
)

// Row is one object (or one node with no object) of an instance's tree.
type Row struct {
	NodeID    string `json:"nodeID"`
	Depth     int    `json:"depth"`
	Index     *int   `json:"index,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Ready is the readyWhen verdict (or existence): Ready, NotReady,
	// Deleting, Deleted, Skipped, Missing, Conflict, Stale, External or
	// Unknown.
	Ready string `json:"ready"`
	// Health is kstatus's generic verdict (Current, InProgress, Failed, ...).
	Health string `json:"health,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Created is the object's creation time, for AGE.
	Created *metav1.Time `json:"created,omitempty"`

	object *unstructured.Unstructured
	// place orders the rows as the text tree nests them: the positions,
	// in topological order, of the node's ancestors (each nested under its
	// last dependency) and of the node, then -1 and the item's index for
	// one item of a collection.
	place []int
	// blocking says, for an externalRef the instance waits for, why:
	// "does not exist", "cannot be read" or "is not ready".
	blocking string
	// pending is why a missing object's template cannot be rendered yet.
	pending error
	// refused is a missing object whose Reason quotes the instance's
	// ResourcesReady: the API server refused kro-agent's apply of it.
	refused bool
	// leftover is an object the graph no longer produces (stale, or of a
	// resource the RGD no longer has): kro-agent prunes it, and nothing
	// waits for it to be gone, so it blocks nothing.
	leftover bool
}

// blocks tells whether the row keeps the instance from being ready: an
// object not ready, missing, someone else's, or being deleted (kro-agent
// creates it again once it is gone).
func (r Row) blocks() bool {
	if r.leftover {
		return false
	}
	switch r.Ready {
	case VerdictNotReady, VerdictMissing, VerdictDeleting, VerdictConflict:
		return true
	}
	return false
}

// node is the row's node id, with the item's index in a collection:
// workers[2].
func (r Row) node() string {
	if r.Index == nil {
		return r.NodeID
	}
	return fmt.Sprintf("%s[%d]", r.NodeID, *r.Index)
}

// Tree is an instance and what it manages, in topological order.
type Tree struct {
	Instance Row `json:"instance"`
	// Placement is the workload cluster the resources live in, for an
	// instance placed by region.
	Placement *agentv1.Placement `json:"placement,omitempty"`
	// Unplaced says why an instance of a region has no cluster yet (its
	// Placed condition): none of its resources exists anywhere.
	Unplaced string `json:"unplaced,omitempty"`
	// ReleasedFrom is the RGD, deleted, that the instance belonged to:
	// kro-agent no longer manages it, and Rows are what it left in place,
	// flat, judged by their health alone.
	ReleasedFrom string `json:"releasedFrom,omitempty"`
	// GraphUnreadable says why the instance's RGD could not be read, so
	// that Rows are what kro-agent manages for it, flat, judged by their
	// health alone.
	GraphUnreadable string `json:"graphUnreadable,omitempty"`
	Rows            []Row  `json:"resources"`

	edges [][2]string
}

// buildTree fetches every member of the instance (LIST by label per kind
// the graph names, so requests grow with the graph, not the cluster) and
// judges each node.
func (c *cluster) buildTree(ctx context.Context, s *subject) (*Tree, error) {
	inst := s.instance
	t := &Tree{Instance: instanceRow(inst, s.mapping.GroupVersionKind.Kind)}
	t.Placement = s.placement
	if p := findCondition(inst, v1alpha1.ConditionPlaced); s.placement == nil && p != nil && p.Status == metav1.ConditionFalse {
		t.Unplaced = p.Message
	}
	if s.graph == nil {
		return t, nil
	}
	where := c.members(s)
	var objs map[string][]*unstructured.Unstructured
	var forbidden map[string]bool
	if s.workloadErr == nil && t.Unplaced == "" {
		objs, forbidden = where.fetchMembers(ctx, s)
	}
	scope := resolve.NewScope(s.graph, inst.Object)
	// What each node's objects are now, in topological order: a node's
	// name renders from what its dependencies are.
	sorted := map[string]nodeObjects{}
	excluded := map[string]bool{}
	skipWhy := map[string]string{}
	for _, n := range s.graph.Nodes {
		why := skipReason(n, excluded, scope)
		excluded[n.ID], skipWhy[n.ID] = why != "", why
		m := nodeObjects{current: objs[n.ID]}
		if inst.GetDeletionTimestamp() == nil {
			// An instance being deleted loses every object anyway.
			m = sortOut(n, objs[n.ID], scope, why, inst.GetNamespace())
		}
		sorted[n.ID] = m
		if n.IsCollection() {
			var items []any
			for _, u := range m.current {
				items = append(items, u.Object)
			}
			if len(m.current) > 0 {
				scope.Observe(n, items)
			}
		} else if len(m.current) > 0 {
			scope.Observe(n, m.current[0].Object)
		}
	}
	depth := map[string]int{}
	place := map[string][]int{}
	skipped := map[string]bool{}
	ready := map[string]bool{}
	for i, n := range s.graph.Nodes {
		first := len(t.Rows)
		d := 1
		var parentPlace []int
		if len(n.Dependencies) > 0 {
			parent := n.Dependencies[len(n.Dependencies)-1]
			d = depth[parent] + 1
			parentPlace = place[parent]
		}
		depth[n.ID] = d
		place[n.ID] = append(slices.Clone(parentPlace), i)
		for _, dep := range n.Dependencies {
			t.edges = append(t.edges, [2]string{dep, n.ID})
		}
		kind := "?"
		if n.Kind != nil {
			kind = n.Kind.GVK.Kind
		}
		switch {
		case s.workloadErr != nil || t.Unplaced != "":
			// The graph is known, and what the instance's values skip;
			// what is in the cluster is not (it cannot be reached), or
			// there is no cluster yet. Nothing is read from another
			// cluster in its place.
			row := Row{NodeID: n.ID, Depth: d, Kind: kind, Ready: VerdictMissing,
				Reason: "not created yet: the instance is not placed on a cluster"}
			if s.workloadErr != nil {
				row.Ready, row.Reason = VerdictUnknown, "in cluster "+s.placement.Cluster+", which cannot be reached"
			}
			if why := skipWhy[n.ID]; why != "" {
				row.Ready, row.Reason = VerdictSkipped, why
			}
			t.Rows = append(t.Rows, row)
		case n.External != nil:
			t.Rows = append(t.Rows, where.externalRows(ctx, n, scope, d)...)
		case forbidden[n.ID]:
			t.Rows = append(t.Rows, Row{NodeID: n.ID, Depth: d, Kind: kind, Ready: VerdictUnknown, Reason: "you may not list " + kind})
		case len(sorted[n.ID].current) == 0:
			row := Row{NodeID: n.ID, Depth: d, Kind: kind, Ready: VerdictSkipped}
			if dep := skippedDependency(n, skipped); dep != "" {
				row.Reason = dependsOnSkipped(dep)
			} else {
				row = absentRow(n, scope, d, kind, inst.GetNamespace())
				if dep := unreadyDependency(n, ready); dep != "" && row.Ready == VerdictMissing && row.pending == nil {
					// Its template may render, but kro-agent applies it
					// only once what it depends on is ready.
					row.Reason = "not created yet: kro-agent waits for " + dep + " to be ready"
				} else if items := refusedItemRows(n, scope, d, kind, inst, row); len(items) > 0 {
					t.Rows = append(t.Rows, items...)
					break
				}
			}
			skipped[n.ID] = row.Ready == VerdictSkipped
			t.Rows = append(t.Rows, row)
		default:
			m := sorted[n.ID]
			rows := make([]Row, 0, len(m.current))
			for _, u := range m.current {
				row := objectRow(n, u, scope, d)
				if index, ok := m.index[u]; ok {
					row.Index = &index
				}
				rows = append(rows, row)
			}
			if n.IsCollection() {
				rows = withMissingItems(rows, n, scope, d, kind, inst.GetNamespace())
			}
			t.Rows = append(t.Rows, rows...)
		}
		// A kind the user may not list is not known to block anything.
		ready[n.ID] = allReady(t.Rows[first:]) || forbidden[n.ID]
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		r.place = place[r.NodeID]
		if r.Index != nil {
			r.place = append(slices.Clone(r.place), -1, *r.Index)
		}
	}
	if s.workloadErr != nil {
		return t, nil
	}
	// What kro-agent prunes comes last, after every node's row, and then
	// the objects of resources the RGD no longer has.
	for _, n := range s.graph.Nodes {
		for _, stale := range sorted[n.ID].stale {
			t.Rows = append(t.Rows, staleRow(n, stale, scope, len(s.graph.Nodes)))
		}
	}
	t.Rows = append(t.Rows, goneRows(objs, s, len(s.graph.Nodes))...)
	if inst.GetDeletionTimestamp() != nil {
		markDeleted(t.Rows)
	}
	where.markConflicts(ctx, t.Rows, s)
	markRefused(t.Rows, inst)
	if id, _ := unrendered(inst); id != "" {
		// What exists of it was rendered from earlier values: ready as
		// it is, but not what the instance now asks.
		for i := range t.Rows {
			if r := &t.Rows[i]; r.NodeID == id && r.Reason == "" {
				r.Reason = "not rendered from the instance's values (GraphResolved)"
			}
		}
	}
	return t, nil
}

// nested returns the rows in the order the text tree prints them: each
// under the resource it depends on last, siblings in topological order.
// Rows stay in topological order everywhere else, as why-not-ready looks
// for the first blocker in that order.
func (t *Tree) nested() []Row {
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b Row) int { return slices.Compare(a.place, b.place) })
	return rows
}

// markDeleted turns the missing rows of an instance being deleted into
// deleted ones: kro-agent deletes its resources in reverse order and
// creates none, so what is absent is not waited for, and its template
// need not render.
func markDeleted(rows []Row) {
	for i := range rows {
		if r := &rows[i]; r.Ready == VerdictMissing {
			r.Ready, r.Reason, r.pending = VerdictDeleted, "gone: the instance is being deleted", nil
		}
	}
}

// conflictLookups bounds the GETs markConflicts makes: a collection whose
// items are all being created has as many missing rows.
const conflictLookups = 8

// markConflicts looks up the first missing objects the graph names: one
// that exists is someone else's (the instance's carry its label), and
// saying "does not exist" of it would hide what blocks the instance.
func (c *cluster) markConflicts(ctx context.Context, rows []Row, s *subject) {
	inst := ownerIdentity(s.instance)
	looked := 0
	for i := range rows {
		r := &rows[i]
		if r.Ready != VerdictMissing || r.Name == "" {
			continue
		}
		n := s.graph.Node(r.NodeID)
		if n == nil || n.Kind == nil || n.Kind.Resource == "" {
			continue
		}
		if looked++; looked > conflictLookups {
			return
		}
		u, err := c.dyn.Resource(n.Kind.GVR()).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		whose := ownership.Whose(u.GetLabels(), inst)
		switch {
		case whose == "":
		case c.adopts(inst, u):
			// Not in the way: kro-agent takes it over as it applies the
			// resource.
			adopted := "exists, " + ownership.WhyAdopted(u, inst) + ": kro-agent adopts it when it applies this resource"
			if r.Reason == expectedMissing {
				r.Reason = adopted
			} else {
				r.Reason += "; it " + adopted
			}
		default:
			r.Ready, r.Reason, r.Created, r.object = VerdictConflict, "exists and "+whose, ptrTime(u.GetCreationTimestamp()), u
		}
	}
}

// ownerIdentity is the instance u as the ownership labels of its objects
// name it, to tell its objects from another owner's: its RGD as its own
// labels name it, set as it was admitted.
func ownerIdentity(u *unstructured.Unstructured) ownership.Instance {
	return ownership.Instance{GVK: u.GroupVersionKind(), Name: u.GetName(), Namespace: u.GetNamespace(), UID: string(u.GetUID()),
		RGDName: u.GetLabels()[v1alpha1.LabelRGDName]}
}

// instanceName names an instance in plans and diagnoses: "Kind
// namespace/name", or "Kind name" for a cluster-scoped one.
func instanceName(kind string, u metav1.Object) string {
	return kind + " " + cache.MetaObjectToName(u).String()
}

// refusedItemRows are the rows of the items of a collection n none of
// whose objects exist (absent is the row saying so), one per item by the
// name it renders, when the instance's ResourcesReady quotes a refused
// apply of the collection's objects: each row then tells its own refusal
// (markRefused), where the collection's row would only count them. Nil
// otherwise.
func refusedItemRows(n *graph.Node, scope *resolve.Scope, depth int, kind string, inst *unstructured.Unstructured, absent Row) []Row {
	if !n.IsCollection() || absent.Ready != VerdictMissing || absent.pending != nil {
		return nil
	}
	c := findCondition(inst, v1alpha1.ConditionResourcesReady)
	if c == nil || c.Reason != v1alpha1.ReasonApplyFailed || !strings.Contains(c.Message, fmt.Sprintf(" (resource %s) in ", n.ID)) {
		return nil
	}
	return withMissingItems(nil, n, scope, depth, kind, inst.GetNamespace())
}

// markRefused gives the object whose apply the API server refused (the
// instance's ResourcesReady quotes the refusal, naming the object and its
// resource) the refusal as its reason: rather than "does not exist" for
// one missing, and for one that exists, whose row would otherwise say
// nothing of a change that does not get through (an immutable field, a
// policy the new values break).
func markRefused(rows []Row, inst *unstructured.Unstructured) {
	c := findCondition(inst, v1alpha1.ConditionResourcesReady)
	if c == nil || c.Reason != v1alpha1.ReasonApplyFailed {
		return
	}
	for i := range rows {
		r := &rows[i]
		if r.Name == "" || r.object == nil && r.Ready != VerdictMissing {
			continue
		}
		switch r.Ready {
		case VerdictConflict, VerdictDeleting, VerdictExternal, VerdictStale:
			// Not applied, or with more to say than the apply.
			continue
		}
		refused := "kro-agent's apply is refused: "
		if r.Ready != VerdictMissing {
			refused = "kro-agent's change is refused: "
		}
		// As the agent words it: applying Kind namespace/name (resource
		// id) in where: what the API server answered, the first refusal
		// in full and each other on a line of its own after "Also: ".
		// Earlier agents named the object without its namespace.
		for _, name := range []string{cache.NewObjectName(r.Namespace, r.Name).String(), r.Name} {
			_, refusal, found := strings.Cut(c.Message, fmt.Sprintf("applying %s %s (resource %s) in ", r.Kind, name, r.NodeID))
			refusal, _, _ = strings.Cut(refusal, "\nAlso: ")
			if _, answer, ok := strings.Cut(refusal, ": "); found && ok {
				r.Reason, r.refused = refused+answer, true
				break
			}
		}
	}
}

func objectRow(n *graph.Node, u *unstructured.Unstructured, scope *resolve.Scope, depth int) Row {
	row := Row{NodeID: n.ID, Depth: depth, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Created: ptrTime(u.GetCreationTimestamp()), object: u}
	if idx, err := strconv.Atoi(u.GetLabels()[v1alpha1.LabelCollectionIndex]); err == nil && n.IsCollection() {
		row.Index = &idx
	}
	verdict := resolve.Ready(n, u.Object, scope)
	row.Ready = VerdictReady
	if !verdict.Ready {
		row.Ready, row.Reason = VerdictNotReady, verdict.Reason
	}
	judgeHealth(&row, u)
	return row
}

// judgeHealth adds to the row of the object u its kstatus health, and
// its reason when no readyWhen gave one; an object being deleted is
// Deleting, whatever its readyWhen says, as its dependents wait for it.
func judgeHealth(row *Row, u *unstructured.Unstructured) {
	if res, err := status.Compute(u); err == nil {
		row.Health = res.Status.String()
		if row.Reason == "" && res.Status != status.CurrentStatus {
			row.Reason = res.Message
		}
	}
	if u.GetDeletionTimestamp() != nil {
		row.Ready, row.Reason = VerdictDeleting, "being deleted"+heldByFinalizers(u.GetFinalizers())
	}
}

// heldByFinalizers names the finalizers an object being deleted waits for,
// after what is said of it: ", held by the finalizers a, b", or "".
func heldByFinalizers(finalizers []string) string {
	if len(finalizers) == 0 {
		return ""
	}
	return ", held by the finalizers " + strings.Join(finalizers, ", ")
}

// instanceRow is the tree's first row, the instance u of kind.
func instanceRow(u *unstructured.Unstructured, kind string) Row {
	row := Row{Kind: kind, Name: u.GetName(), Namespace: u.GetNamespace(), Ready: instanceVerdict(u), Reason: readyReason(u), Created: ptrTime(u.GetCreationTimestamp()), object: u}
	if stale := staleConditions(u); stale != "" {
		row.Reason = strings.TrimSpace(row.Reason + " (stale: " + stale + ")")
	}
	if u.GetDeletionTimestamp() != nil {
		row.Ready = VerdictDeleting
		// Until kro-agent writes that it deletes (it deletes first), or
		// with no kro-agent to, the status still says ACTIVE; once it
		// has taken its finalizer off, what it wrote last is done with.
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		if st != string(v1alpha1.InstanceDeleting) || !slices.Contains(u.GetFinalizers(), v1alpha1.Finalizer) {
			row.Reason = "being deleted" + heldByFinalizers(v1alpha1.OtherFinalizers(u))
		}
	}
	return row
}

// staleConditions says, of an instance whose Ready condition describes an
// earlier generation than its own, which: kro-agent has not processed its
// latest change yet (it is busy, behind, or not running). "" otherwise, and
// for an instance kro-agent let go (its RGD deleted, or itself deleted and
// kept by another's finalizer): no agent is late with it, and its reason
// says so.
func staleConditions(u *unstructured.Unstructured) string {
	c := findCondition(u, v1alpha1.ConditionReady)
	if c == nil || c.ObservedGeneration == 0 || c.ObservedGeneration >= u.GetGeneration() {
		return ""
	}
	if m := findCondition(u, v1alpha1.ConditionInstanceManaged); m != nil && m.Status == metav1.ConditionFalse &&
		(m.Reason == v1alpha1.ReasonReleased || m.Reason == v1alpha1.ReasonFinalized) {
		return ""
	}
	return fmt.Sprintf("its conditions describe generation %d, the instance is at %d", c.ObservedGeneration, u.GetGeneration())
}

// skippedDependency is the first of n's dependencies that is skipped, or
// "": a node depending on one is skipped with it, as the agent skips it.
func skippedDependency(n *graph.Node, skipped map[string]bool) string {
	if i := slices.IndexFunc(n.Dependencies, func(d string) bool { return skipped[d] }); i >= 0 {
		return n.Dependencies[i]
	}
	return ""
}

// unreadyDependency is the first of n's dependencies that is not ready
// (ready says which are), or "".
func unreadyDependency(n *graph.Node, ready map[string]bool) string {
	if i := slices.IndexFunc(n.Dependencies, func(d string) bool { return !ready[d] }); i >= 0 {
		return n.Dependencies[i]
	}
	return ""
}

// allReady tells whether the rows of a node say it is ready, as kro-agent
// needs it to be before it applies what depends on it: every object
// ready, an externalRef's read and ready, an empty collection.
func allReady(rows []Row) bool {
	for _, r := range rows {
		if !r.isReady() {
			return false
		}
	}
	return len(rows) > 0
}

// isReady tells a row whose object is ready, or, for an externalRef, read
// and ready.
func (r Row) isReady() bool {
	return r.Ready == VerdictReady || r.Ready == VerdictExternal && r.blocking == ""
}

// skipReason says why kro-agent skips n, or "" when it does not (or cannot
// tell yet): a dependency skipped (skipped says which are), or an
// includeWhen that is false.
func skipReason(n *graph.Node, skipped map[string]bool, scope *resolve.Scope) string {
	if dep := skippedDependency(n, skipped); dep != "" {
		return dependsOnSkipped(dep)
	}
	if why, err := resolve.Excluded(n, scope); err == nil && why != "" {
		return "includeWhen " + why + " is false" + resolve.Until(scope, n.IncludeWhen...)
	}
	return ""
}

// dependsOnSkipped says why a node is skipped along with dep.
func dependsOnSkipped(dep string) string {
	return "it depends on " + dep + ", which is skipped"
}

// absentRow explains a node with no object: skipped by includeWhen, or
// missing (not created yet, or deleted). A missing object whose template
// renders is named, so that one can look for what is in its way.
func absentRow(n *graph.Node, scope *resolve.Scope, depth int, kind, instanceNamespace string) Row {
	row := Row{NodeID: n.ID, Depth: depth, Kind: kind, Ready: VerdictMissing}
	included, err := resolve.Included(n, scope)
	switch {
	case err == nil && !included:
		var srcs []string
		for _, e := range n.IncludeWhen {
			srcs = append(srcs, "${"+e.Source+"}")
		}
		row.Ready, row.Reason = VerdictSkipped, "includeWhen "+strings.Join(srcs, " && ")+" is false"+resolve.Until(scope, n.IncludeWhen...)
	case err != nil && errors.Is(err, resolve.ErrPending):
		row.Reason, row.pending = notCreatedYet(err), err
	case n.IsCollection():
		row.Reason, row.pending = collectionAbsence(n, scope)
		if row.Reason == "" {
			row.Ready, row.Reason = VerdictReady, "empty collection"
		}
	default:
		nameMissing(&row, n, scope, instanceNamespace)
	}
	return row
}

// expectedMissing is the reason of a missing object that nothing else
// explains.
const expectedMissing = "expected by the graph but does not exist"

// nameMissing names the object a node (or one item of it, in scope)
// expects and that does not exist, when its template renders.
func nameMissing(row *Row, n *graph.Node, scope *resolve.Scope, instanceNamespace string) {
	row.Reason = expectedMissing
	if n.Kind == nil {
		return
	}
	obj, err := resolve.Render(n, scope)
	switch {
	case err == nil:
	case errors.Is(err, resolve.ErrPending):
		row.Reason, row.pending = notCreatedYet(err), err
		// Its name may render already (from the instance's values, say,
		// while its data waits for another resource): an object of that
		// name that is someone else's is then seen in the way before the
		// agent gets there (markConflicts), with the one that holds it up
		// now, so that both can be dealt with at once.
		obj = resolve.RenderOr(n, scope, func(*graph.Field, error) any { return nil })
	default:
		return
	}
	u := unstructured.Unstructured{Object: obj}
	row.Name, row.Namespace = u.GetName(), u.GetNamespace()
	if row.Namespace == "" && n.Kind.Namespaced && row.Name != "" {
		row.Namespace = instanceNamespace
	}
}

// withMissingItems adds, to the rows of a collection some of whose
// objects exist, a Missing row for each item whose object does not (one
// just added to its list, one the API server refuses), in index order.
func withMissingItems(rows []Row, n *graph.Node, scope *resolve.Scope, depth int, kind, instanceNamespace string) []Row {
	items, err := resolve.Expand(n, scope, math.MaxInt)
	if err != nil {
		return rows
	}
	present := map[int]bool{}
	for _, r := range rows {
		if r.Index != nil {
			present[*r.Index] = true
		}
	}
	missing := false
	for _, item := range items {
		if present[item.Index] {
			continue
		}
		index := item.Index
		row := Row{NodeID: n.ID, Depth: depth, Index: &index, Kind: kind, Ready: VerdictMissing}
		nameMissing(&row, n, item.Scope, instanceNamespace)
		rows = append(rows, row)
		missing = true
	}
	if missing {
		sort.SliceStable(rows, func(a, b int) bool {
			return rows[a].Index != nil && rows[b].Index != nil && *rows[a].Index < *rows[b].Index
		})
	}
	return rows
}

// notCreatedYet says why an object whose template cannot be rendered yet
// (err is pending) does not exist: the instance lacks a field, a resource
// it depends on is not there, or a value it reads is not.
func notCreatedYet(err error) string {
	return "not created yet: " + resolve.Waiting(err)
}

// collectionAbsence says why a collection has none of its items, or ""
// when it has none to have; and, when its forEach cannot be evaluated yet,
// the pending error. The agent's own limit on the items is its flag,
// not known here: the instance's conditions say when it was exceeded.
func collectionAbsence(n *graph.Node, scope *resolve.Scope) (string, error) {
	items, err := resolve.Expand(n, scope, math.MaxInt)
	switch {
	case errors.Is(err, resolve.ErrPending):
		return notCreatedYet(err), err
	case err != nil:
		return "its forEach cannot be evaluated: " + err.Error(), nil
	case len(items) == 0:
		return "", nil
	case len(items) == 1:
		return "its one item does not exist", nil
	}
	return fmt.Sprintf("none of its %d items exists", len(items)), nil
}

func instanceVerdict(u *unstructured.Unstructured) string {
	if c := findCondition(u, v1alpha1.ConditionReady); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			return VerdictReady
		case metav1.ConditionFalse:
			return VerdictNotReady
		}
	}
	return VerdictUnknown
}

func readyReason(u *unstructured.Unstructured) string {
	st, _, _ := unstructured.NestedString(u.Object, "status", "state")
	if c := findCondition(u, v1alpha1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue &&
		!strings.EqualFold(strings.ReplaceAll(st, "_", ""), c.Reason) { // not "DELETING Deleting"
		return strings.TrimSpace(st + " " + c.Reason)
	}
	return st
}

// conditionsOf reads the conditions of any object's status.
func conditionsOf(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []metav1.Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		s, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(s)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.ObservedGeneration, _, _ = unstructured.NestedInt64(m, "observedGeneration")
		if ts, ok := m["lastTransitionTime"].(string); ok {
			_ = c.LastTransitionTime.UnmarshalQueryParameter(ts)
		}
		out = append(out, c)
	}
	return out
}

func findCondition(u *unstructured.Unstructured, t string) *metav1.Condition {
	conds := conditionsOf(u)
	i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == t })
	if i < 0 {
		return nil
	}
	return &conds[i]
}

func ptrTime(t metav1.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
