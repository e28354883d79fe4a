package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// releasedTree is what the instance of a deleted RGD left in place, listed
// by flatTree. level is how deep in another instance's tree it is, 0 for
// the top.
func (c *cluster) releasedTree(ctx context.Context, e *releasedError, level int) (*Tree, *subject, error) {
	s := &subject{instance: e.instance, mapping: e.mapping, released: e}
	// The RGD coming back is what changes the picture for --watch.
	c.noteObject(rgdGVR, "", e.rgd, nil)
	t, err := c.flatTree(ctx, s, e.graphless, level)
	if err != nil {
		return nil, nil, err
	}
	t.ReleasedFrom = e.rgd
	return t, s, nil
}

// unreadableTree is what kro-agent manages for an instance whose RGD the
// user may not read, listed by flatTree: without the graph, nothing says
// how the objects nest or when each is ready, but what is there, and its
// health, is still worth seeing.
func (c *cluster) unreadableTree(ctx context.Context, e *unreadableRGDError, level int) (*Tree, *subject, error) {
	s := &subject{instance: e.instance, mapping: e.mapping, unreadable: e}
	t, err := c.flatTree(ctx, s, e.graphless, level)
	if err != nil {
		return nil, nil, err
	}
	t.GraphUnreadable = e.why()
	return t, s, nil
}

// flatTree lists the objects of an instance without its graph: those
// carrying its instance-id label, of the kinds its ApplySet annotation
// records, in its namespace and the namespaces recorded beside it (in its
// workload cluster, for a placed instance), flat in the order they were
// created, with their generic health.
func (c *cluster) flatTree(ctx context.Context, s *subject, g graphless, level int) (*Tree, error) {
	inst := g.instance
	c.noteObject(g.mapping.Resource, inst.GetNamespace(), inst.GetName(), inst)
	c.follow(ctx, s)
	t := &Tree{Instance: instanceRow(inst, g.kind), Placement: s.placement}
	if s.workloadErr != nil {
		// Nothing there can be listed; the note under the table says why.
		return t, nil
	}
	where := c.members(s)
	var kinds []memberKind
	for _, gk := range ownership.RecordedKinds(inst) {
		m, err := where.mapper.RESTMapping(gk)
		if err != nil {
			t.Rows = append(t.Rows, Row{Depth: 1, Kind: gk.Kind, Ready: VerdictUnknown, Reason: kindUnlisted(gk.String(), err)})
			continue
		}
		kinds = append(kinds, mappedMemberKind(m))
	}
	objs, forbidden := where.listMembers(ctx, inst, kinds)
	for _, k := range kinds {
		if forbidden[k.gvr] {
			t.Rows = append(t.Rows, Row{Depth: 1, Kind: k.kind, Ready: VerdictUnknown, Reason: "you may not list " + k.kind})
		}
	}
	for _, u := range objs {
		t.Rows = append(t.Rows, flatRow(u))
	}
	sortByCreation(t.Rows)
	if s.workload == nil {
		c.expandNested(ctx, t, level)
	}
	return t, nil
}

// flatRow is an object of an instance drawn without its graph: no
// readyWhen judges it here, only its health does.
func flatRow(u *unstructured.Unstructured) Row {
	row := Row{NodeID: u.GetLabels()[v1alpha1.LabelNodeID], Depth: 1, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Created: ptrTime(u.GetCreationTimestamp()), Ready: VerdictUnknown, object: u}
	if idx, err := strconv.Atoi(u.GetLabels()[v1alpha1.LabelCollectionIndex]); err == nil {
		row.Index = &idx
	}
	judgeHealth(&row, u)
	return row
}

// sortByCreation puts rows in the order compareCreated says, which is also
// the order the text tree prints them in.
func sortByCreation(rows []Row) {
	slices.SortStableFunc(rows, compareCreated)
	for i := range rows {
		rows[i].place = []int{i}
	}
}

// compareCreated orders rows by creation, as kro-agent created a graph's
// resources in dependency order; then by node and item. Rows of no object
// come first.
func compareCreated(a, b Row) int {
	switch {
	case a.Created == nil && b.Created != nil:
		return -1
	case a.Created != nil && b.Created == nil:
		return 1
	case a.Created != nil && !a.Created.Equal(b.Created):
		if a.Created.Before(b.Created) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.NodeID, b.NodeID); c != 0 {
		return c
	}
	if a.Index != nil && b.Index != nil && *a.Index != *b.Index {
		return *a.Index - *b.Index
	}
	return strings.Compare(a.Name, b.Name)
}

// kindUnlisted says why the objects of a recorded kind cannot be listed.
func kindUnlisted(kind string, err error) string {
	if meta.IsNoMatchError(err) {
		return kind + " is not served by the cluster: its objects, if any are left, cannot be listed"
	}
	return fmt.Sprintf("cannot look up kind %s: %v", kind, err)
}

// printReleased says, under the tree of a released instance, what it shows.
func printReleased(w io.Writer, t *Tree, e *releasedError) {
	uid := e.instance.GetUID()
	fmt.Fprintf(w, "\n%s %s was released when ResourceGraphDefinition %s was deleted: kro-agent no longer manages it. ", e.kind, e.instance.GetName(), e.rgd)
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "It left nothing in place: no object of the kinds kro-agent recorded for it carries its label %s=%s.\n", v1alpha1.LabelInstanceID, uid)
	} else {
		fmt.Fprintf(w, "Above is what it left in place (labelled %s=%s), in the order it was created: the graph that nested these and judged their readiness went with the RGD.\n", v1alpha1.LabelInstanceID, uid)
	}
	fmt.Fprintf(w, "Apply ResourceGraphDefinition %s (or another for %s) again and kro-agent takes it back.\n", e.rgd, e.kind)
}

// printUnreadable says, under the tree of an instance whose RGD the user
// may not read, what it shows.
func printUnreadable(w io.Writer, e *unreadableRGDError) {
	fmt.Fprintf(w, "\n%s.\nAbove is what kro-agent manages for it (labelled %s=%s), in the order it was created, with each object's health; its Ready condition says whether kro-agent finds it ready.\n",
		e.why(), v1alpha1.LabelInstanceID, e.instance.GetUID())
}
