package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// prune deletes, after a pass that applied every node, the objects labelled as
// this instance's that the graph no longer produces: an includeWhen turned
// false, a collection that shrank, a resource removed from the RGD.
func (r *run) prune(ctx context.Context) error {
	var stale []member
	var nodes []string
	for node, objs := range r.t.managed.members(r.inst.GetUID()) {
		for _, m := range objs {
			if !r.desired[r.t.ref(m).anyVersion()] && !m.terminating && !m.deleted {
				stale, nodes = append(stale, m), append(nodes, node)
			}
		}
	}
	var refused []error
	for i, err := range r.t.deleteAll(ctx, stale) {
		if errors.Is(err, errGone) {
			// Deleted by someone else a moment ago: nothing this pass did.
			continue
		}
		m := stale[i]
		// Namespace and node tell apart the objects one resource left
		// behind as it moved (to another namespace, or another kind).
		kind := r.t.kindOf(m.gvr)
		if err != nil {
			what := fmt.Sprintf("%s %s (resource %s) in %s", kind, m.objectName(), nodes[i], r.t)
			refused = append(refused, fmt.Errorf("pruning %s: %w", what, err))
			continue
		}
		// Made again some day (an includeWhen turning back), it is
		// created, not re-created after someone deleted it.
		r.e.applied.drop(r.t.ref(m))
		r.noteNews("Pruned", "deleted", "which the graph no longer produces", objectGroup{node: nodes[i], kind: kind}, m)
	}
	switch len(refused) {
	case 0:
		return nil
	case 1:
		return refused[0]
	}
	return fmt.Errorf("%w; and %d more objects the graph no longer produces could not be pruned", refused[0], len(refused)-1)
}

// objectGroup is the objects of one kind, of one resource, that a pass
// did the same to (pruned, adopted, re-created, restored).
type objectGroup struct{ node, kind string }

// toldOneByOne is how many objects of one resource a pass did the same to
// that are told of an Event each, with the object as its related;
// more (a collection that shrank by hundreds) are told of by one Event,
// rather than bury the instance's other Events and write as many.
const toldOneByOne = 3

// tellObjects tells, in Events of reason, what the pass did (done:
// "deleted") to the objects ms of g, and why.
func (r *run) tellObjects(reason, done, why string, g objectGroup, ms []member) {
	if len(ms) > toldOneByOne {
		names := make([]string, 0, len(ms))
		for _, m := range ms {
			names = append(names, m.objectName())
		}
		slices.Sort(names)
		note := fmt.Sprintf("%s %d %s objects (resource %s) in %s, %s: %s", done, len(ms), g.kind, g.node, r.t, why, joinMax(names, 5))
		r.tell("Normal", reason, note, note, nil)
		return
	}
	for _, m := range ms {
		note := fmt.Sprintf("%s %s %s (resource %s) in %s, %s", done, g.kind, m.objectName(), g.node, r.t, why)
		r.tell("Normal", reason, note, note, &corev1.ObjectReference{
			APIVersion: m.gvr.GroupVersion().String(), Kind: g.kind,
			Namespace: m.namespace, Name: m.name, UID: m.uid,
		})
	}
}

// deleteAll deletes the objects ms, which do not wait for each other,
// a few at a time, and returns the error of each.
func (t *target) deleteAll(ctx context.Context, ms []member) []error {
	return t.writeEach(ctx, ms, t.deleteObject)
}

// writeEach writes each of the objects ms (a delete, a release) with
// write, a few at a time, as they do not wait for each other, and
// returns the error of each.
func (t *target) writeEach(ctx context.Context, ms []member, write func(context.Context, objectRef, types.UID) error) []error {
	errs := make([]error, len(ms))
	concurrently(len(ms), func(i int) {
		errs[i] = write(ctx, t.ref(ms[i]), ms[i].uid)
	})
	return errs
}

// errGone is what deleteObject returns for an object gone before it
// deleted it, or replaced by another of its name: nothing was deleted,
// and nothing is left to delete.
var errGone = errors.New("already gone")

// deleteObject deletes one object, only if it is still the one we saw.
func (t *target) deleteObject(ctx context.Context, ref objectRef, uid types.UID) error {
	policy := metav1.DeletePropagationBackground
	err := t.client.Resource(ref.GVR).Namespace(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &policy,
	})
	countWrite("delete", err)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		err = errGone
	}
	if err == nil || errors.Is(err, errGone) {
		// Gone or being deleted, which the informer shows in a moment.
		t.managed.deletions.deleted(uid)
		return err
	}
	if unauthorized, ok := asUnauthorized(err, ref.GVR.GroupResource(), t); ok {
		return unauthorized
	}
	return err
}

// delete tears an instance's resources down in reverse topological order:
// a node's objects are deleted only once everything that depends on it is
// gone. The finalizer goes last.
func (r *run) delete(ctx context.Context, status *v1alpha1.InstanceStatus) (result, error) {
	if !slices.Contains(r.inst.GetFinalizers(), v1alpha1.Finalizer) {
		return result{}, nil
	}
	if r.placement != nil {
		res, done, err := r.placedForDelete(ctx, status)
		if done {
			return res, err
		}
	}
	r.t.watch(r.s.graph)
	if err := r.waitForManagedInformers(ctx); err != nil {
		if unlisted := (*unlistedKindError)(nil); errors.As(err, &unlisted) {
			// Its objects of that kind cannot be found: removing the
			// finalizer now could leave them behind.
			status.MarkDeleting(fmt.Sprintf("the instance's resources are deleted once they can be found: %v", err))
			status.ComputeState(true, false)
			return result{}, errors.Join(err, r.writeStatus(ctx, status, nil))
		}
		return result{}, err
	}
	if err := r.recordedKnown(ctx); err != nil {
		// Its objects are not known: removing the finalizer now could
		// leave them behind.
		status.MarkDeleting(err.Error())
		status.ComputeState(true, false)
		return result{}, errors.Join(err, r.writeStatus(ctx, status, nil))
	}
	members := r.t.managed.members(r.inst.GetUID())
	if r.e.orphans.asked(r.inst) {
		return r.orphan(ctx, status, members)
	}
	g := r.s.graph
	remaining := map[string]bool{}
	for node, objs := range members {
		remaining[node] = len(objs) > 0
	}
	dependents := dependentsOf(g)
	var waiting, failures []string
	var refused []error
	var deletable []member
	for node, objs := range members {
		// Objects of nodes no longer in the graph have no dependents.
		blockedBy := ""
		for _, d := range dependents[node] {
			if remaining[d] {
				blockedBy = d
				break
			}
		}
		if blockedBy != "" {
			waiting = append(waiting, fmt.Sprintf("%s waits for %s", node, blockedBy))
			continue
		}
		for _, m := range objs {
			switch {
			case m.terminating:
				waiting = append(waiting, terminating(r.t.kindOf(m.gvr), m))
			case m.deleted:
				// Deleted by an earlier pass; the informer has yet to
				// show it gone or terminating.
				waiting = append(waiting, deleting(r.t.kindOf(m.gvr), m))
			default:
				deletable = append(deletable, m)
			}
		}
	}
	errs := r.t.deleteAll(ctx, deletable)
	for i, m := range deletable {
		kind := r.t.kindOf(m.gvr)
		if err := errs[i]; err != nil && !errors.Is(err, errGone) {
			// The others are deleted all the same; the refusal is what
			// the status leads with, and the run ends with it, to be
			// retried.
			refused = append(refused, fmt.Errorf("deleting %s %s: %w", kind, m.objectName(), err))
			failures = append(failures, v1alpha1.DeleteRefused(kind, m.objectName(), err))
			continue
		}
		waiting = append(waiting, deleting(kind, m))
	}
	if len(members) > 0 {
		slices.Sort(waiting)
		slices.Sort(failures)
		msg := joinMax(waiting, 5)
		if len(failures) > 0 {
			msg = strings.Join(failures, "; ")
			if len(waiting) > 0 {
				msg += "; and " + joinMax(waiting, 5)
			}
			r.tellDeleteFailures(failures)
		}
		status.MarkDeleting("deleting resources in reverse topological order" + r.inCluster() + ": " + msg)
		status.ComputeState(true, false)
		// Watch events on the members bring the instance back as they go.
		return result{}, errors.Join(append(refused, r.writeStatus(ctx, status, nil))...)
	}
	return result{}, r.finishDeletion(ctx, status, "every resource is deleted"+r.inCluster())
}

// finishDeletion takes kro-agent's finalizer off the instance being
// deleted, done saying what became of its resources. An instance another
// controller's finalizer keeps stays a while, and its status first says
// so, rather than what was deleted last: a write only such instances cost.
// The garbage collector's own finalizers (orphan, foregroundDeletion) go
// of themselves.
func (r *run) finishDeletion(ctx context.Context, status *v1alpha1.InstanceStatus, done string) error {
	others := slices.DeleteFunc(v1alpha1.OtherFinalizers(r.inst), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if len(others) > 0 {
		status.MarkFinalized(done, others)
		status.ComputeState(true, false)
		if err := r.writeStatus(ctx, status, nil); err != nil {
			return err
		}
	}
	return r.removeFinalizer(ctx)
}

// tellDeleteFailures tells, as Warnings, the deletions of the instance's
// objects the API server refused, each once: not again while the
// instance's status, written when the run began, says so already, as it
// does on every retry until what refused it changes.
func (r *run) tellDeleteFailures(failures []string) {
	said := meta.FindStatusCondition(r.currentStatus().Conditions, v1alpha1.ConditionResourcesReady)
	for _, f := range failures {
		if said == nil || !strings.Contains(said.Message, f) {
			r.tell("Warning", "DeleteFailed", f, f, nil)
		}
	}
}

// removeFinalizer lets the API server delete the instance.
func (r *run) removeFinalizer(ctx context.Context) error {
	_, err := r.e.opts.Dynamic.Resource(r.s.gvr).Namespace(r.inst.GetNamespace()).
		Patch(ctx, r.inst.GetName(), types.MergePatchType, finalizerRemoval(r.inst), patchOptions)
	countWrite("finalizer", err)
	if apierrors.IsNotFound(err) {
		err = nil
	}
	if err == nil {
		r.e.applied.forget(r.inst.GetUID())
		r.e.statuses.forget(r.inst.GetUID())
		r.t.externals.forget(r.key)
	}
	return err
}

// finalizerRemoval is the merge patch that takes the agent's finalizer off
// inst, conditional on the resourceVersion it was read at: a finalizer list
// changed since (by another tool, or by the agent adding its own back) is
// not overwritten, the write fails with a conflict instead.
func finalizerRemoval(inst metav1.Object) []byte {
	return finalizersPatch(inst, v1alpha1.OtherFinalizers(inst))
}

// finalizerAddition is the merge patch that puts the agent's finalizer on
// obj, conditional on the resourceVersion it was read at, as above.
func finalizerAddition(obj metav1.Object) []byte {
	return finalizersPatch(obj, append(slices.Clone(obj.GetFinalizers()), v1alpha1.Finalizer))
}

func finalizersPatch(obj metav1.Object, finalizers []string) []byte {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion(), "finalizers": finalizers}})
	return patch
}

// dependentsOf maps each node id to the ids that depend on it.
func dependentsOf(g *graph.Graph) map[string][]string {
	out := map[string][]string{}
	for _, n := range g.Nodes {
		for _, d := range n.Dependencies {
			out[d] = append(out[d], n.ID)
		}
	}
	return out
}

func joinMax(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// terminating says which of an instance's objects is still being deleted and
// whose finalizers hold it, so the user reading why the instance stays
// DELETING knows what to look at.
func terminating(kind string, m member) string {
	return fmt.Sprintf("%s %s is terminating", kind, m.objectName()) + heldBy(m.finalizers)
}

// deleting says which of an instance's objects was just deleted.
func deleting(kind string, m member) string {
	return fmt.Sprintf("deleting %s %s", kind, m.objectName())
}

// heldBy names the finalizers an object being deleted waits for, if any.
func heldBy(finalizers []string) string {
	if len(finalizers) == 0 {
		return ""
	}
	return ", held by the finalizers " + strings.Join(finalizers, ", ")
}
