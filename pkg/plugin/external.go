package plugin

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// externalRows reads what an externalRef names: one row for an object by
// name, one per object a selector matches.
func (c *cluster) externalRows(ctx context.Context, n *graph.Node, scope *resolve.Scope, depth int) []Row {
	row := Row{NodeID: n.ID, Depth: depth, Kind: n.External.Kind, Ready: VerdictExternal}
	read, err := c.readExternal(ctx, n, scope)
	var unresolved *unresolvedExternal
	switch {
	case errors.As(err, &unresolved):
		row.Reason = "external; cannot be resolved yet: " + unresolved.err.Error()
		return []Row{row}
	case errors.Is(err, errExternalKindUnknown):
		row.Reason = "external; its kind is not known"
		return []Row{row}
	case read.target.Selector != nil:
		if err != nil {
			row.Reason = "external; " + err.Error()
			return []Row{row}
		}
		if len(read.matched) == 0 {
			row.Reason = fmt.Sprintf("external; nothing matches the selector %q", read.target.Selector)
			if read.onlyOwn {
				row.Reason = fmt.Sprintf("external; only the instance's own objects match the selector %q, and it never reads those", read.target.Selector)
			}
			return []Row{row}
		}
		rows := make([]Row, 0, len(read.matched))
		for i := range read.matched {
			item := row
			item.Index = &i
			rows = append(rows, externalObjectRow(item, n, &read.matched[i], scope))
		}
		return rows
	}
	row.Name, row.Namespace = read.target.Name, read.target.Namespace
	switch {
	case err != nil:
		row.Reason, row.blocking = "external; "+err.Error(), "cannot be read"
		return []Row{row}
	case read.object == nil:
		row.Reason, row.blocking = "external; "+read.notFound.Error(), "does not exist"
		return []Row{row}
	}
	return []Row{externalObjectRow(row, n, read.object, scope)}
}

// externalRead is what an externalRef names, as kro-agent reads it.
type externalRead struct {
	target resolve.Target
	// matched are the objects a selector matched.
	matched []unstructured.Unstructured
	// onlyOwn says that a selector matched none but the instance's own
	// objects, which it never reads (resolve.Target.ListSelector).
	onlyOwn bool
	// object is the object named, nil when it does not exist, as notFound
	// says.
	object   *unstructured.Unstructured
	notFound error
	// observed is what the expressions reading it see.
	observed any
}

// unresolvedExternal is an externalRef whose name or selector cannot be
// rendered yet.
type unresolvedExternal struct{ err error }

func (e *unresolvedExternal) Error() string { return e.err.Error() }

// errExternalKindUnknown: the cluster does not serve an externalRef's kind.
var errExternalKindUnknown = errors.New("its kind is not known")

// readExternal reads what an externalRef names (GET by name, LIST by
// selector), notes the read for --watch, and gives it to the resources
// that read it in scope. Besides the API server's, its errors are an
// *unresolvedExternal and errExternalKindUnknown.
func (c *cluster) readExternal(ctx context.Context, n *graph.Node, scope *resolve.Scope) (externalRead, error) {
	target, err := resolve.ExternalTarget(n, scope)
	if err != nil {
		return externalRead{}, &unresolvedExternal{err: err}
	}
	read := externalRead{target: target}
	if n.Kind == nil || n.Kind.Resource == "" {
		return read, errExternalKindUnknown
	}
	client := c.dyn.Resource(n.Kind.GVR()).Namespace(target.Namespace)
	if target.Selector != nil {
		selector := target.ListSelector().String()
		list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return read, err
		}
		read.matched, read.observed = list.Items, typedItems(n, list.Items)
		if len(list.Items) == 0 && selector != target.Selector.String() {
			// kubectl get -l would show them: say why they do not count.
			own, err := client.List(ctx, metav1.ListOptions{LabelSelector: target.Selector.String(), Limit: 1})
			read.onlyOwn = err == nil && len(own.Items) > 0
		}
		c.noteList(watchedList{gvr: n.Kind.GVR(), namespace: target.Namespace, selector: selector, seen: seenOf(list.Items)})
		scope.Observe(n, read.observed)
		return read, nil
	}
	u, err := client.Get(ctx, target.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		read.notFound = err
		c.noteObject(n.Kind.GVR(), target.Namespace, target.Name, nil)
		return read, nil
	case err != nil:
		return read, err
	}
	read.object, read.observed = u, resolve.Typed(n, u.Object)
	c.noteObject(n.Kind.GVR(), target.Namespace, target.Name, u)
	scope.Observe(n, read.observed)
	return read, nil
}

// typedItems are the objects an externalRef's selector matched, as the
// expressions that read it see them.
func typedItems(n *graph.Node, objs []unstructured.Unstructured) []any {
	items := make([]any, 0, len(objs))
	for i := range objs {
		items = append(items, resolve.Typed(n, objs[i].Object))
	}
	return items
}

func externalObjectRow(row Row, n *graph.Node, u *unstructured.Unstructured, scope *resolve.Scope) Row {
	row.Name, row.Namespace = u.GetName(), u.GetNamespace()
	row.Created = ptrTime(u.GetCreationTimestamp())
	row.object = u
	if v := resolve.Ready(n, u.Object, scope); !v.Ready {
		row.Reason, row.blocking = "external; "+v.Reason, "is not ready"
	} else {
		row.Reason = "external; read, never written"
	}
	return row
}
