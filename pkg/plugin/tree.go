package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kro-agent/kro-agent/pkg/resolve"
)

type treeOptions struct {
	*Options
	printFlags
	color    string
	watch    bool
	interval time.Duration
	now      func() time.Time
}

func newTreeCommand(parent *Options) *cobra.Command {
	o := &treeOptions{Options: parent, now: time.Now}
	cmd := instanceCommand(parent, "tree (KIND NAME | KIND/NAME | -f FILE)",
		"Show an instance and every resource it manages, nested by the dependency graph",
		`tree shows an instance and every resource it manages, in the RGD's topological order
and nested under the resource each depends on: node id, kind and name, namespace, READY
(the readyWhen verdict), HEALTH (kstatus), REASON and AGE. A collection (forEach) has a
row of its own, with its items and what depends on it under it. Resources are found by the
labels kro-agent sets, with one LIST per kind in the graph (per 500 objects). A resource
that is itself an instance of an RGD shows what it manages under it. For an instance
placed on a workload cluster by region, they are found there, through the Cluster's
kubeconfig. --watch draws the tree again whenever it changes (with -o, prints it again):
it watches the instance, its RGD and the lists the tree was read from by their metadata,
and reads them again only then. Once the instance is deleted it says so, and goes on as
kubectl get --watch does: an instance created again under the name is drawn.`,
		// An RGD is not an instance: it has no tree.
		false, []string{"json", "yaml", "dot", "name"}, &o.printFlags, &o.color, o.run)
	addWatchFlags(cmd, &o.watch, &o.interval)
	cmd.Example = `  kubectl kro tree webapp demo
  kubectl kro tree webapp demo -o yaml
  kubectl kro tree webapp demo -o dot | dot -Tsvg > demo.svg
  kubectl kro tree webapp demo -o name | xargs kubectl describe
  kubectl kro tree webapp demo --watch`
	return cmd
}

func (o *treeOptions) run(ctx context.Context, kind, name string) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	if !o.watch {
		t, s, err := c.tree(ctx, kind, name)
		if err != nil {
			return err
		}
		return o.print(t, s)
	}
	var shown *subject // the instance last drawn
	return redrawOnChange(ctx, newListWatch(c.metadata, o.Streams.ErrOut), o.Streams.Out, o.output, o.interval, func() (*watchView, error) {
		rc, reads := c.recording()
		t, s, err := rc.tree(ctx, kind, name)
		if shown != nil && apierrors.IsNotFound(err) {
			return o.deleted(rc, reads, shown), nil
		}
		if err != nil {
			return nil, err
		}
		key, err := treeKey(t, s)
		if err != nil {
			return nil, err
		}
		shown = s
		return &watchView{key: key, lists: reads.lists, draw: func() error { return o.print(t, s) }}, nil
	})
}

// deleted is what --watch shows once the instance s it drew is deleted:
// as kubectl get --watch goes on, it goes on watching, and draws the tree
// of an instance created again under the name. With -o it prints nothing
// until then.
func (o *treeOptions) deleted(c *cluster, reads *readLog, s *subject) *watchView {
	inst := s.instance
	c.noteObject(s.mapping.Resource, inst.GetNamespace(), inst.GetName(), nil)
	what := instanceName(s.mapping.GroupVersionKind.Kind, inst)
	return &watchView{key: "deleted", lists: reads.lists, silent: o.output != "", draw: func() error {
		_, err := fmt.Fprintf(o.Streams.Out, "%s is deleted; its tree is drawn again if it is created again\n", what)
		return err
	}}
}

// tree reads the instance KIND NAME and what it manages.
func (c *cluster) tree(ctx context.Context, kind, name string) (*Tree, *subject, error) {
	s, err := c.load(ctx, kind, name)
	if released := (*releasedError)(nil); errors.As(err, &released) {
		return c.releasedTree(ctx, released, 0)
	}
	if unreadable := (*unreadableRGDError)(nil); errors.As(err, &unreadable) {
		return c.unreadableTree(ctx, unreadable, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	t, err := c.buildTree(ctx, s)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", s.mapping.GroupVersionKind.Kind, name, err)
	}
	if s.workload == nil {
		// Instances among the resources show what they manage in turn.
		c.expandNested(ctx, t, 0)
	}
	return t, s, nil
}

// treeKey is what a tree shows, ages aside, to tell whether it changed.
func treeKey(t *Tree, s *subject) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	if s.graphErr != nil {
		b = fmt.Appendf(b, "\n%s", s.graphErr)
	}
	return string(b), nil
}

// print writes the tree as text, or in the -o format.
func (o *treeOptions) print(t *Tree, s *subject) error {
	switch o.output {
	case "":
		printTree(o.Streams.Out, t, s, newPalette(o.Streams.Out, o.color), o.now())
		return nil
	case "dot":
		printDot(o.Streams.Out, t)
		return nil
	case "name":
		printTreeNames(o.Streams.Out, t)
		return nil
	default:
		return o.printObject(o.Streams.Out, t)
	}
}

// printTreeNames prints the instance and each object it manages that
// exists, as kubectl get -o name prints them, a line each, for a script to
// hand to kubectl. What the instance only reads (an externalRef) and
// someone else's object in its way are left out: piped to kubectl delete,
// the names touch nothing of another owner.
func printTreeNames(w io.Writer, t *Tree) {
	for _, r := range append([]Row{t.Instance}, t.Rows...) {
		if r.object == nil || r.Ready == VerdictExternal || r.Ready == VerdictConflict {
			continue
		}
		fmt.Fprintln(w, objectName(r.object.GroupVersionKind().GroupKind(), r.object.GetName()))
	}
}

// printTree prints the tree as an aligned table with the NODE column
// indented by depth.
func printTree(w io.Writer, t *Tree, s *subject, p palette, now time.Time) {
	switch {
	case t.Placement != nil:
		fmt.Fprintf(w, "Placed on cluster %s (region %s)\n", p.bold(t.Placement.Cluster), t.Placement.Region)
	case t.Unplaced != "":
		fmt.Fprintf(w, "Not placed on a cluster yet: %s\n", t.Unplaced)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NODE\tKIND/NAME\tNAMESPACE\tREADY\tHEALTH\tREASON\tAGE")
	in := t.Instance
	fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\n", p.bold("(instance)"), in.Kind, in.Name, orDash(in.Namespace), p.verdict(in.Ready), "-", orDash(oneLine(in.Reason)), age(in.Created, now))
	rows := withCollectionHeads(t.nested())
	branch := branches(rows)
	for i, r := range rows {
		node := branch[i] + orDash(nodeName(r.NodeID))
		if r.Index != nil {
			node += fmt.Sprintf("[%d]", *r.Index)
		}
		kn := r.Kind
		if r.Name != "" {
			kn += "/" + r.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", node, kn, orDash(r.Namespace), p.verdict(r.Ready), p.verdict(orDash(r.Health)), orDash(resolve.Shorten(oneLine(r.Reason), 120)), age(r.Created, now))
	}
	tw.Flush()
	if s.released != nil {
		printReleased(w, t, s.released)
	}
	if s.unreadable != nil {
		printUnreadable(w, s.unreadable)
	}
	if s.graphErr != nil {
		fmt.Fprintf(w, "\nResourceGraphDefinition %s does not compile, so its resources cannot be shown:\n%s\n", s.rgd.Name, s.graphErr)
	}
	if s.workloadErr != nil && s.placement != nil {
		fmt.Fprintf(w, "\nCluster %s, where the resources are, cannot be reached, so what they are is not known:\n%s\n", s.placement.Cluster, s.workloadErr)
	}
	if s.rgd != nil && s.graph != nil && servesEarlierGraph(s.rgd) {
		fmt.Fprintf(w, "\nResourceGraphDefinition %s's generation %d is not applied, so kro-agent reconciles %s with the graph of an earlier one; this tree is drawn from generation %d (kubectl kro why-not-ready rgd %s says why, and how to go on).\n",
			s.rgd.Name, s.rgd.Generation, t.Instance.Kind+"/"+t.Instance.Name, s.rgd.Generation, s.rgd.Name)
	}
}

// withCollectionHeads gives each collection whose items are listed a row
// of its own, with its items (and what nests under them) one level
// deeper: a resource that depends on a collection depends on all of its
// items, and nested under the last item it would seem to wait for that
// one alone. rows are in nested order; the heads exist in the text alone.
func withCollectionHeads(rows []Row) []Row {
	out := make([]Row, 0, len(rows))
	var under [][]int // the places, with -1, of the collections headed so far
	headed := map[string]bool{}
	for _, r := range rows {
		if r.isItem() && !headed[r.NodeID] {
			headed[r.NodeID] = true
			out = append(out, collectionHead(r.NodeID, r.Depth, rows))
			under = append(under, r.place[:len(r.place)-1])
		}
		for _, p := range under {
			if hasPrefix(r.place, p) {
				r.Depth++
			}
		}
		out = append(out, r)
	}
	return out
}

// isItem tells a row placed as an item under its collection. The rows a
// released instance left keep their item's index but are placed flat, in
// the order they were created: no graph nests or judges them any more.
func (r Row) isItem() bool {
	return r.Index != nil && len(r.place) >= 2 && r.place[len(r.place)-2] == -1
}

func hasPrefix(place, prefix []int) bool {
	return len(place) >= len(prefix) && slices.Equal(place[:len(prefix)], prefix)
}

// collectionHead is the row of the collection id: its kind, how many
// items it has and how many of them are ready; its verdict is the items'
// when they agree, and otherwise that of the first item not ready.
func collectionHead(id string, depth int, rows []Row) Row {
	head := Row{NodeID: id, Depth: depth}
	n, ready := 0, 0
	for _, r := range rows {
		if r.NodeID != id || !r.isItem() {
			continue
		}
		if n == 0 {
			head.Kind, head.Namespace, head.Ready = r.Kind, r.Namespace, r.Ready
		}
		if r.Namespace != head.Namespace {
			head.Namespace = ""
		}
		if head.Ready == VerdictReady {
			head.Ready = r.Ready
		}
		if r.isReady() {
			ready++
		}
		n++
	}
	head.Kind = fmt.Sprintf("%s ×%d", head.Kind, n)
	head.Reason = fmt.Sprintf("%d of %d ready", ready, n)
	if head.Ready == VerdictExternal {
		head.Reason = "external; " + head.Reason
	}
	return head
}

// branches draws what comes before each row's node id, as tree(1) does:
// ├─ for a row with siblings below it, └─ for the last, and under an
// earlier row's branch a │ as long as that row has siblings still to come.
// rows are a tree flattened depth first (nested), so each row's parent is
// the last row before it one level up. One pass from the end tells, for
// each level, whether a row of it comes later before a shallower one.
func branches(rows []Row) []string {
	out := make([]string, len(rows))
	var later []bool // later[l]: a row of depth l+1 follows
	for i := len(rows) - 1; i >= 0; i-- {
		d := max(rows[i].Depth, 1)
		for len(later) < d {
			later = append(later, false)
		}
		var b strings.Builder
		for l := range d - 1 {
			if later[l] {
				b.WriteString("│  ")
			} else {
				b.WriteString("   ")
			}
		}
		if later[d-1] {
			b.WriteString("├─ ")
		} else {
			b.WriteString("└─ ")
		}
		out[i] = b.String()
		// Rows deeper than this one end here, seen from the rows above.
		later = later[:d]
		later[d-1] = true
	}
	return out
}

// printDot draws the live graph in Graphviz, nodes colored by readiness.
func printDot(w io.Writer, t *Tree) {
	fmt.Fprintln(w, "digraph instance {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box, style=filled, fontname=Helvetica];")
	fmt.Fprintf(w, "  instance [label=%q, fillcolor=%q];\n", t.Instance.Kind+"/"+t.Instance.Name, dotColor(t.Instance.Ready))
	verdicts := map[string]string{}
	labels := map[string][]string{}
	for _, r := range t.Rows {
		label := r.Kind
		if r.Name != "" {
			label += "/" + r.Name
		}
		if r.Ready == VerdictStale {
			label += " (stale)"
		}
		labels[r.NodeID] = append(labels[r.NodeID], label)
		if v, ok := verdicts[r.NodeID]; r.Ready != VerdictStale && (!ok || v == VerdictReady) {
			verdicts[r.NodeID] = r.Ready
		}
	}
	hasParent := map[string]bool{}
	for _, e := range t.edges {
		hasParent[e[1]] = true
	}
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if seen[r.NodeID] {
			continue
		}
		seen[r.NodeID] = true
		fmt.Fprintf(w, "  %q [label=%q, fillcolor=%q];\n", r.NodeID, nodeName(r.NodeID)+"\n"+strings.Join(labels[r.NodeID], "\n"), dotColor(verdicts[r.NodeID]))
		if !hasParent[r.NodeID] {
			fmt.Fprintf(w, "  instance -> %q;\n", r.NodeID)
		}
	}
	for _, e := range t.edges {
		fmt.Fprintf(w, "  %q -> %q;\n", e[0], e[1])
	}
	fmt.Fprintln(w, "}")
}

func dotColor(verdict string) string {
	switch verdict {
	case VerdictReady:
		return "palegreen"
	case VerdictNotReady, VerdictMissing, VerdictConflict:
		return "lightcoral"
	case VerdictSkipped, VerdictExternal, VerdictDeleted:
		return "lightblue"
	}
	return "khaki"
}
