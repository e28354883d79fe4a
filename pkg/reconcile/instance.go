package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/conditions"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/refusal"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// run is one reconcile of one instance: what it found and what it did.
type run struct {
	e    *Engine
	s    *served
	key  InstanceKey
	inst *unstructured.Unstructured
	id   ownership.Instance
	rgd  ownership.RGD

	// t is the cluster the instance's resources live in and g the graph
	// as compiled for it; placement is status.placement, nil when unplaced.
	// waitsIn is the region an instance placed before waits to be placed
	// in again, its cluster gone: it never goes to the local cluster.
	t         *target
	g         *graph.Graph
	placement *agentv1.Placement
	waitsIn   string
	// reconciledLocally is set when the status as read says the agent
	// reconciled the instance in the local cluster (a region label given
	// to it later does not move it).
	reconciledLocally bool

	scope *resolve.Scope
	// desired are the objects the graph produces now, for pruning, by
	// their objectRef.anyVersion.
	desired map[objectRef]bool
	// renderers tells which resource renders each object, so that two
	// naming one object are an error rather than two writers of it.
	renderers resolve.Renderers
	// ready and excluded record each node's verdict, for its dependents.
	ready    map[string]bool
	excluded map[string]bool

	// unreached are the nodes not applied because something they depend
	// on is not ready: what they produce is not known this time, so
	// nothing is pruned, and what they gave the status stays. waits is the
	// first such node and dependency.
	unreached map[string]bool
	waits     struct{ node, dependency string }
	// notReady says why each node found not ready is not, by node id,
	// for the message of what waits on it.
	notReady map[string]string

	// The first reasons progress stopped, for the conditions.
	blocked      string // a resource is not ready
	deleting     string // a managed object is being deleted by someone else
	pending      string // an input is not available yet
	unset        bool   // that input is a field the instance does not set
	failed       error  // the instance's values make no valid resource
	applyErr     error  // the API server refused a write
	contested    error  // an object waits its turn to be restored
	pollExternal bool   // an externalRef waits on what no watch follows

	// writeFailures are the writes of the graph refused, or not tried,
	// this pass, in the order of the graph: each is told, not the first
	// alone, so that one fix is not followed by the news of the next.
	writeFailures []error

	// externalsRead are the externalRefs read this time, by node id.
	externalsRead []string
	// news is what this pass did to objects that Events tell.
	news []objectNews
	// awaited is what the run ended waiting for that no event of the
	// instance's own brings.
	awaited waits

	// recorded are the kinds the instance's ApplySet annotation lists that
	// its graph does not produce (recordedKinds).
	recorded []schema.GroupVersionResource
	// membersUnseen is set when the instance's objects cannot be looked
	// at: the workload cluster it is placed on is not reachable.
	membersUnseen bool
	// unmapped are the kinds the annotation lists whose mapping failed
	// (recordedKinds): their objects are not known.
	unmapped []unmappedKind

	// told are the messages this run's Events gave (tell).
	told map[string]bool
}

// reconcile brings one instance to its desired state.
func (e *Engine) reconcile(ctx context.Context, key InstanceKey) (result, error) {
	s := e.kind(key.GVK)
	if s == nil {
		return result{}, nil // the kind is no longer served
	}
	if !waitForSync(ctx, s.informer.informer) {
		return result{}, fmt.Errorf("the cache of %s %s has not synced", key.GVK.GroupVersion(), key.GVK.Kind)
	}
	held, written, err := e.statuses.read(func() (*heldObject, error) {
		return heldAt(s.informer.informer.GetStore(), cache.NewObjectName(key.Namespace, key.Name).String())
	})
	if err != nil {
		return result{}, err
	}
	if held == nil {
		// Gone: nothing it waited for would end its waits.
		for _, t := range e.targets() {
			t.noteWaits(key, nil, waits{})
		}
		return result{}, nil
	}
	inst, err := held.object()
	if err != nil {
		return result{}, err
	}
	if written != nil {
		// The cache has not caught up with the agent's last status write.
		inst.Object["status"] = written.status
		inst.SetResourceVersion(written.version)
	}
	r := &run{
		e: e, s: s, key: key, inst: inst,
		id:        ownership.Instance{GVK: key.GVK, Name: inst.GetName(), Namespace: inst.GetNamespace(), UID: string(inst.GetUID()), RGDName: s.rgdName, Labels: inst.GetLabels()},
		rgd:       ownership.RGD{Name: s.rgdName, UID: s.rgdUID},
		scope:     resolve.NewScope(s.graph, inst.Object),
		desired:   map[objectRef]bool{},
		renderers: resolve.Renderers{},
		ready:     map[string]bool{},
		excluded:  map[string]bool{},
		unreached: map[string]bool{},
		t:         e.local,
		g:         s.graph,
	}
	if p, ok := agentv1.PlacementOf(inst); ok {
		r.placement = &p
	} else {
		r.waitsIn = p.Region
	}
	if r.placedByRegion() && !e.clustersChecked() {
		// After a start, every registered cluster is checked once before
		// an instance placed by region is looked at: until then a
		// cluster missing from the registry may only not be checked yet,
		// and taking it for gone would leave the resources there behind
		// (or place the instance again). The registry's completion
		// brings it back; nothing is written meanwhile.
		return result{requeueAfter: clusterCheckWait}, nil
	}
	set := s.set
	if r.placedByRegion() {
		set = set.With(conditions.Dependent{Type: v1alpha1.ConditionPlaced})
	}
	status := r.currentStatus()
	r.reconciledLocally = status.ReconciledLocally(r.placement != nil || r.waitsIn != "")
	status.Manage(set, inst.GetGeneration())

	if s.graph == nil {
		// Held: without a valid graph nothing can be applied, or deleted
		// in order; the status says so, and the rest stays as it is.
		deleting := inst.GetDeletionTimestamp() != nil
		status.MarkHeld(s.rgdName, s.heldFor, deleting)
		status.ComputeState(deleting, false)
		return result{}, r.writeStatus(ctx, status, nil)
	}
	r.lookWherePlaced()
	r.recorded = r.recordedKinds()
	if inst.GetDeletionTimestamp() != nil {
		res, err := r.delete(ctx, status)
		r.t.noteWaits(key, err, waits{})
		return res, err
	}
	if v1alpha1.IsSuspended(inst) {
		status.MarkSuspended()
		status.ComputeState(false, false)
		return result{}, r.writeStatus(ctx, status, nil)
	}
	// The kinds the ApplySet annotation lists beyond the graph's are
	// looked for before manage writes it again: one whose informer finds
	// nothing leaves it (and the informer stops); one not listed in time
	// stays. One that cannot be listed is not this run's concern: the
	// instance is queued again once it is, to prune what it holds.
	_ = r.recordedSynced(ctx)
	if err := r.manage(ctx); err != nil {
		status.MarkManageFailed(err)
		status.ComputeState(false, true)
		return result{}, errors.Join(err, r.writeStatus(ctx, status, nil))
	}
	status.MarkManaged()
	if r.placedByRegion() {
		if res, done, err := r.place(ctx, status); done {
			return res, err
		}
	}

	if err := r.waitForManagedInformers(ctx); err != nil {
		if unlisted := (*unlistedKindError)(nil); errors.As(err, &unlisted) {
			status.MarkKindNotWatched(err.Error())
			status.ComputeState(false, true)
			return result{}, errors.Join(err, r.writeStatus(ctx, status, nil))
		}
		return result{}, err
	}
	for _, n := range r.g.Nodes {
		r.reconcileNode(ctx, n)
	}
	r.unreadExternals()
	if err := joinWriteFailures(r.writeFailures); err != nil {
		r.applyErr = err
		r.tellNews("ApplyFailed", err.Error())
	}
	if r.applyErr == nil {
		// A refused write is retried sooner than a contested object's turn.
		r.applyErr = r.contested
	}
	// Pruning needs every node applied, not every node ready: a resource
	// that never becomes ready must not keep what the graph dropped in
	// the cluster.
	allApplied := len(r.unreached) == 0 && r.deleting == "" && r.pending == "" && r.failed == nil && r.applyErr == nil
	if allApplied {
		if err := r.prune(ctx); err != nil {
			r.applyErr = err
		} else if err := r.settleNamespaces(ctx); err != nil {
			r.applyErr = err
		}
	}
	r.tellObjectNews()
	r.markProgress(status)
	current, _ := r.inst.Object["status"].(map[string]any)
	projected, projErr := resolve.StatusKeeping(s.graph, r.scope, current, func(id string) bool { return r.unreached[id] })
	for _, c := range resolve.Conditions(s.graph, r.scope) {
		if c.Status == nil && r.unreached[c.Unobserved] && meta.FindStatusCondition(status.Conditions, c.Condition.Type) != nil {
			// As a status field: what it was evaluated from is as the
			// last pass left it.
			continue
		}
		if c.Status == nil {
			status.MarkCustomConditionUnknown(c.Condition.Type, c.Pending, c.Message)
		} else {
			status.PropagateCustomCondition(c.Condition.Type, *c.Status, c.Condition.Reason, c.Message)
		}
	}
	computed, complete, condErr := resolve.ComputedConditions(s.graph, r.scope, status.Conditions)
	status.PropagateComputedConditions(computed, complete, s.graph.Declares)
	projErr = errors.Join(projErr, condErr)
	if projErr != nil && r.failed == nil {
		// The resources may be as they should, but the status the RGD
		// promises cannot be computed from them: an expression failing on
		// the instance's values as much as one in a template.
		status.MarkStatusUnprojected(projErr)
	}
	status.ComputeState(false, r.applyErr != nil)
	r.t.noteWaits(r.key, r.applyErr, r.awaited)
	if err := r.writeProjected(ctx, status, projected, projErr); err != nil {
		return result{}, err
	}
	switch {
	case r.applyErr != nil:
		return result{}, r.applyErr
	case projErr != nil:
		return result{}, projErr
	case len(r.unmapped) > 0:
		// Looked for again, with backoff, until the kind's objects are
		// known and can be pruned.
		return result{}, r.recordedKnown(ctx)
	}
	var res result
	if r.pollExternal {
		res.requeueAfter = e.opts.ExternalRefPoll
	}
	if at, ok := r.scope.Clock().NextChange(); ok {
		// An answer computed from time.now() turns then, and no change
		// of an object would bring the instance back for it.
		res.requeueAfter = sooner(res.requeueAfter, max(time.Until(at), time.Millisecond))
	}
	return res, nil
}

// sooner is the shorter of two waits, a zero one counting as none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

// markProgress turns the run's findings into conditions.
func (r *run) markProgress(status *v1alpha1.InstanceStatus) {
	switch {
	case r.failed != nil:
		status.MarkGraphUnresolved(r.failed)
	case r.unset:
		status.MarkInstanceFieldUnset(r.pending)
	case r.pending != "":
		status.MarkGraphPending(r.pending)
	case len(r.unreached) > 0:
		status.MarkGraphPending(r.waitsMessage())
	default:
		status.MarkGraphResolved()
	}
	switch {
	case r.applyErr != nil:
		status.MarkApplyFailed(r.applyErr.Error())
	case r.deleting != "":
		status.MarkResourceDeleting(r.deleting)
	case r.blocked != "":
		status.MarkResourceNotReady(r.blocked)
	case r.pending != "":
		status.MarkResourceNotReady(r.pending)
	case r.failed != nil:
		status.MarkResourceNotReady("resources cannot be resolved; see GraphResolved")
	default:
		status.MarkResourcesReady()
	}
}

// reconcileNode renders, applies and judges one node, if everything it
// depends on is ready.
func (r *run) reconcileNode(ctx context.Context, n *graph.Node) {
	for _, dep := range n.Dependencies {
		if r.excluded[dep] {
			r.excluded[n.ID] = true
			return
		}
		if !r.ready[dep] {
			if len(r.unreached) == 0 {
				r.waits.node, r.waits.dependency = n.ID, dep
			}
			r.unreached[n.ID] = true
			return
		}
	}
	included, err := resolve.Included(n, r.scope)
	if !r.note(n, err) {
		return
	}
	if !included {
		r.excluded[n.ID] = true
		return
	}
	switch {
	case n.External != nil:
		r.readExternal(ctx, n)
	case n.IsCollection():
		r.applyCollection(ctx, n)
	default:
		item := ownership.Item{NodeID: n.ID}
		u, ok := r.render(n, item, r.scope)
		if !ok || !r.claim(n, resolve.Item{Scope: r.scope}, u) {
			return
		}
		obj, ok := r.applyOne(ctx, n, u)
		if !ok {
			return
		}
		observed := resolve.Typed(n, obj.Object)
		r.scope.Observe(n, observed)
		verdict := resolve.Ready(n, observed, r.scope)
		r.ready[n.ID] = verdict.Ready
		if !verdict.Ready {
			r.noteNotReady(n, fmt.Sprintf("%s (%s %s): %s", n.ID, n.Kind.GVK.Kind, obj.GetName(), verdict.Reason))
		}
	}
}

// note records an evaluation error and reports whether to go on.
func (r *run) note(n *graph.Node, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, resolve.ErrPending):
		if r.pending != "" {
			break
		}
		if r.unset = errors.Is(err, resolve.ErrUnset); r.unset {
			// Nothing but the instance's author can supply it.
			r.pending = fmt.Sprintf("%s: %v", n.ID, err)
		} else {
			r.pending = fmt.Sprintf("%s: %s", n.ID, resolve.Waiting(err))
		}
	default:
		if r.failed == nil {
			r.failed = &v1alpha1.ResourceError{ID: n.ID, Err: err}
		}
	}
	return false
}

func (r *run) applyCollection(ctx context.Context, n *graph.Node) {
	items, err := resolve.Expand(n, r.scope, r.e.opts.MaxCollectionSize)
	if !r.note(n, err) {
		return
	}
	// Every item is rendered before any is applied: items naming one
	// object leave the whole collection as it is. The items do not depend
	// on each other, so their applies are sent together, a few at a time.
	objs := make([]*unstructured.Unstructured, len(items))
	for i, item := range items {
		oi := ownership.Item{NodeID: n.ID, Index: item.Index, Size: len(items)}
		if u, ok := r.render(n, oi, item.Scope); ok {
			if !r.claim(n, item, u) {
				return
			}
			objs[i] = u
		}
	}
	writes := make([]*applyWrite, len(items))
	for i, u := range objs {
		if u != nil {
			writes[i] = r.beforeApply(ctx, n, u)
		}
	}
	concurrently(len(writes), func(i int) {
		if w := writes[i]; w != nil {
			w.send(ctx, r)
		}
	})
	observed := make([]any, 0, len(items))
	allReady, allApplied := true, true
	for i, item := range items {
		var obj *unstructured.Unstructured
		ok := writes[i] != nil
		if ok {
			obj, ok = r.afterApply(ctx, n, writes[i])
		}
		if !ok {
			// The items do not depend on each other: one that cannot be
			// rendered or applied (an immutable field changed, say) does
			// not hold back the others, but the collection is not observed whole, so
			// nothing that reads it goes on.
			allApplied = false
			continue
		}
		typed := resolve.Typed(n, obj.Object)
		observed = append(observed, typed)
		if v := resolve.Ready(n, typed, item.Scope); !v.Ready {
			allReady = false
			r.noteNotReady(n, fmt.Sprintf("%s[%d] (%s %s): %s", n.ID, item.Index, n.Kind.GVK.Kind, obj.GetName(), v.Reason))
		}
	}
	if !allApplied {
		return
	}
	r.scope.Observe(n, observed)
	r.ready[n.ID] = allReady
}

// render renders one object of n (item of it, for a collection) and labels
// it; it reports false, with the reason recorded, when the object cannot be
// rendered.
func (r *run) render(n *graph.Node, item ownership.Item, scope *resolve.Scope) (*unstructured.Unstructured, bool) {
	desired, err := resolve.Render(n, scope)
	if !r.note(n, err) {
		return nil, false
	}
	u := &unstructured.Unstructured{Object: desired}
	if n.Kind.Namespaced && u.GetNamespace() == "" {
		u.SetNamespace(r.inst.GetNamespace())
	}
	if n.Kind.Namespaced && u.GetNamespace() == "" {
		// Only a cluster-scoped instance gets here, whose RGD sets the
		// namespace with an expression: it gave none.
		r.note(n, fmt.Errorf("metadata.namespace of %s %s is empty: the kind is namespaced and a cluster-scoped instance has no namespace to give it", n.Kind.GVK.Kind, u.GetName()))
		return nil, false
	}
	ownership.AddManagedLabels(u, r.rgd, r.id, item)
	return u, true
}

// claim records that n's item renders u; it reports false, with the reason
// recorded, when another resource or item of the graph renders it too.
func (r *run) claim(n *graph.Node, item resolve.Item, u *unstructured.Unstructured) bool {
	return r.note(n, r.renderers.Claim(n, item, u.GetNamespace(), u.GetName()))
}

// applyOne applies one rendered object, unless it is not the instance's
// to write or is on its way out.
func (r *run) applyOne(ctx context.Context, n *graph.Node, u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	w := r.beforeApply(ctx, n, u)
	if w == nil {
		return nil, false
	}
	w.send(ctx, r)
	return r.afterApply(ctx, n, w)
}

// applyWrite is the apply of one rendered object: what it is sent
// against, and what the API server answered.
type applyWrite struct {
	u    *unstructured.Unstructured
	ref  objectRef
	live *unstructured.Unstructured
	out  *unstructured.Unstructured
	err  error
	// adopting is set when live is an earlier instance's, taken over.
	adopting bool
	// undone is the drift the apply undid.
	undone drift
}

// send applies w's object. It touches nothing of the run but w, so the
// items of a collection are sent at once.
func (w *applyWrite) send(ctx context.Context, r *run) {
	w.out, w.undone, w.err = r.e.apply(ctx, r.t, r.inst.GetUID(), w.ref, w.u.Object, w.live)
}

// beforeApply makes ready to apply u: its namespace recorded and there,
// the object not another owner's nor on its way out. It returns nil, with
// the reason recorded, when u is not to be applied now.
func (r *run) beforeApply(ctx context.Context, n *graph.Node, u *unstructured.Unstructured) *applyWrite {
	if err := r.recordNamespace(ctx, u.GetNamespace()); err != nil {
		r.fail(err)
		return nil
	}
	if err := r.t.ensureNamespace(ctx, u.GetNamespace()); err != nil {
		r.fail(err)
		return nil
	}
	ref := objectRef{Cluster: r.t.cluster, GVR: n.Kind.GVR(), Namespace: u.GetNamespace(), Name: u.GetName()}
	r.desired[ref.anyVersion()] = true
	live, err := r.t.cached(ref)
	if err != nil {
		r.fail(err)
		return nil
	}
	adopting := false
	if live != nil && ownership.Whose(live.GetLabels(), r.id) != "" {
		if !r.adoptable(ref, live) {
			// Never take over an object another owner made: apply would.
			r.fail(r.heldByOther(n, ref, live))
			return nil
		}
		adopting = true
	}
	if live != nil && live.GetDeletionTimestamp() != nil {
		// Applying would change an object on its way out, and what
		// depends on it would be built from values about to vanish: wait
		// for it to be gone (its delete event queues the instance) and
		// create it afresh.
		msg := beingDeleted(n, live, r.t)
		if r.deleting == "" {
			r.deleting = msg
		}
		r.noteWhy(n, n.ID+": "+msg)
		return nil
	}
	return &applyWrite{u: u, ref: ref, live: live, adopting: adopting}
}

// adoptable tells whether live, an object of ref that is not the
// instance's, is one the instance takes over (ownership.Adopts): an
// earlier instance of its name left it behind, or its owner handed it
// over. One with no kro.run/instance-id label is not among the informers'
// objects, and is adopted as the apply finds it (afterApply).
func (r *run) adoptable(ref objectRef, live *unstructured.Unstructured) bool {
	return ownership.Adopts(r.id, live, r.t.applied(ref), r.t == r.e.local)
}

// afterApply takes in the API server's answer to w: the object as it now
// is, or the refusal recorded, with what to wait for before trying again.
func (r *run) afterApply(ctx context.Context, n *graph.Node, w *applyWrite) (*unstructured.Unstructured, bool) {
	u, ref, live, out, err := w.u, w.ref, w.live, w.out, w.err
	if refusal, ok := asQuotaRefusal(err, r.t.cluster, u.GetNamespace()); ok {
		// Tried again when the quota changes, not at the next retry of
		// the backoff.
		r.awaited.quotas = waitAlso(r.awaited.quotas, refusal.quota)
		err = refusal
	} else if refusal, ok := asWebhookRefusal(err, r.t.cluster); ok {
		// Tried again when the webhook's Service has endpoints again.
		r.awaited.webhookServices = waitAlso(r.awaited.webhookServices, refusal.service)
		err = refusal
	} else if refusal, ok := asNamespacePolicyRefusal(err, u.GetNamespace()); ok {
		// Tried again when the namespace or its LimitRanges change.
		r.awaited.namespaces = waitAlso(r.awaited.namespaces, refusal.namespace)
		err = refusal
	} else if unauthorized, ok := asUnauthorized(err, ref.GVR.GroupResource(), r.t); ok {
		// Tried again as soon as a grant is aggregated into the agent's
		// role, in the local cluster.
		err = unauthorized
	} else if escalation, ok := asEscalation(err, u, ref.GVR.GroupResource(), r.t); ok {
		// Likewise.
		err = escalation
	} else if apierrors.IsForbidden(err) && live == nil {
		// The informers hold only objects with the agent's labels: one of
		// the same name without them is found when the API server refuses
		// to let the apply take it over (SPEC §6).
		if held := r.holder(ctx, ref); held != nil {
			err = r.heldByOther(n, ref, held)
		}
	}
	if kinds.NotServed(err) {
		// An apply creates what is missing: a 404 means the kind is.
		err = fmt.Errorf("the API server does not serve %s in %s (was its CRD uninstalled?)", n.Kind.Resource, n.Kind.GVK.GroupVersion())
		if r.t == r.e.local && r.e.kindNotServed != nil {
			r.e.kindNotServed(r.s.rgdName)
		}
	}
	if err != nil && u.GetNamespace() == r.inst.GetNamespace() && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace controller deleted the object on its way to
		// deleting the instance: nothing to retry or report as a failure
		// (an Event could not be recorded in the namespace anyway).
		if r.deleting == "" {
			r.deleting = fmt.Sprintf("namespace %s is being deleted, with this instance: %s %s (resource %s) is not created again in it", u.GetNamespace(), n.Kind.GVK.Kind, u.GetName(), n.ID)
		}
		return nil, false
	}
	if unavailable, ok := asNamespaceUnavailable(err, u.GetNamespace()); ok {
		// Tried again when the namespace comes or goes, not at the next
		// retry of the backoff.
		r.awaited.namespaces = waitAlso(r.awaited.namespaces, unavailable.namespace)
		err = unavailable
	}
	var contested *contestedError
	if errors.As(err, &contested) {
		// Left as the other writer made it until its turn; the rest of
		// the graph goes on from it.
		if r.contested == nil {
			r.contested = fmt.Errorf("%s %s (resource %s) in %s is contested: %w", n.Kind.GVK.Kind, cache.MetaObjectToName(u).String(), n.ID, r.t, err)
			r.tellNews("Contested", r.contested.Error())
		}
		return out, true
	}
	if err != nil {
		err = fmt.Errorf("applying %s %s (resource %s) in %s: %w", n.Kind.GVK.Kind, cache.MetaObjectToName(u).String(), n.ID, r.t, err)
		if from := n.RenderedFrom(refusal.InvalidFields(err)); from != "" {
			// The author of the instance never wrote the object: what of
			// the template gave the refused fields says what to change.
			err = fmt.Errorf("%w; %s", err, from)
		}
		r.fail(err)
		return nil, false
	}
	switch {
	case w.adopting && !w.undone.repeated:
		// An apply that repeated the last one adopted nothing: that one
		// did, and the informer's copy, an earlier instance's still, is
		// older than it.
		r.noteAdopted(n, ref, live, out)
	case live == nil && out != nil && ownership.HandedTo(out, r.id):
		// Someone else's, handed over with kro.run/adopt-by (which no
		// template may write): the informers, which hold only objects
		// with the agent's labels, did not have it, and the API server's
		// guard let the apply take it over.
		r.noteAdopted(n, ref, out, out)
	}
	r.noteUndone(n, ref, out, w.undone)
	return out, true
}

// noteAdopted records, for the pass's Events, that the apply of ref took
// over an object of resource n that was not the instance's: before as it
// was, after as the apply left it, with what other writers set that its
// template does not.
func (r *run) noteAdopted(n *graph.Node, ref objectRef, before, after *unstructured.Unstructured) {
	if after == nil {
		after = before
	}
	why := ownership.WhyAdopted(before, r.id)
	if others := ownership.OtherWriters(after); len(others) > 0 {
		why += "; what its template does not set stays as " + strings.Join(others, ", ") + " set it"
	}
	r.noteNews("Adopted", "adopted", why, objectGroup{node: n.ID, kind: n.Kind.GVK.Kind},
		member{gvr: ref.GVR, namespace: after.GetNamespace(), name: after.GetName(), uid: after.GetUID()})
}

// objectNews is something a pass did to one object that its instance's
// Events tell: adopted it from an earlier instance of the name, re-created
// it, restored its fields, pruned it.
type objectNews struct {
	reason, done, why string
	g                 objectGroup
	m                 member
}

// noteNews records, for the pass's Events, what it did (done, told under
// reason) to m, an object of g, and why.
func (r *run) noteNews(reason, done, why string, g objectGroup, m member) {
	r.news = append(r.news, objectNews{reason: reason, done: done, why: why, g: g, m: m})
}

// tellObjectNews tells what the pass did to objects, a few Events at most
// per resource and reason (tellObjects), each group with the why of its
// first object.
func (r *run) tellObjectNews() {
	type key struct {
		reason, done string
		g            objectGroup
	}
	groups := map[key][]member{}
	var order []key
	why := map[key]string{}
	for _, n := range r.news {
		k := key{n.reason, n.done, n.g}
		if len(groups[k]) == 0 {
			order = append(order, k)
			why[k] = n.why
		}
		groups[k] = append(groups[k], n.m)
	}
	for _, k := range order {
		r.tellObjects(k.reason, k.done, why[k], k.g, groups[k])
	}
}

// noteUndone records, for the pass's Events, the drift an apply of ref,
// an object of resource n, undid.
func (r *run) noteUndone(n *graph.Node, ref objectRef, out *unstructured.Unstructured, undone drift) {
	g := objectGroup{node: n.ID, kind: n.Kind.GVK.Kind}
	m := member{gvr: ref.GVR, namespace: out.GetNamespace(), name: out.GetName(), uid: out.GetUID()}
	switch {
	case undone.deleted:
		r.noteNews("Recreated", "re-created", "which someone else deleted", g, m)
	case undone.field != "":
		r.noteNews("Restored", "restored", "whose "+undone.field+" someone else changed", g, m)
	}
}

// heldByOther is the refusal to apply an object whose name another
// owner's object, held, holds: the instance waits for that object to be
// deleted.
func (r *run) heldByOther(n *graph.Node, ref objectRef, held *unstructured.Unstructured) error {
	r.awaited.holders = waitAlso(r.awaited.holders, ref)
	return &heldByOtherError{fmt.Sprintf("%s %s already exists in %s and %s",
		n.Kind.GVK.Kind, cache.NewObjectName(ref.Namespace, ref.Name).String(), r.t,
		ownership.LeftAlone(held, r.id, n.ID, r.t.applied(ref), r.t == r.e.local))}
}

// heldByOtherError is the refusal to apply an object whose name another
// owner's object holds. It lasts until that object is deleted, which the
// agent watches for.
type heldByOtherError struct{ msg string }

func (e *heldByOtherError) Error() string { return e.msg }

// holder is the object of ref that exists but is not among the agent's,
// or nil when it is not found (or is, after all, this instance's).
func (r *run) holder(ctx context.Context, ref objectRef) *unstructured.Unstructured {
	live, err := r.t.client.Resource(ref.GVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil || ownership.Whose(live.GetLabels(), r.id) == "" {
		return nil
	}
	return live
}

// beingDeleted says which managed object someone else is deleting and what
// holds it, so the user knows whose finalizer to look at.
func beingDeleted(n *graph.Node, live *unstructured.Unstructured, t *target) string {
	return fmt.Sprintf("%s %s (resource %s) in %s is being deleted", n.Kind.GVK.Kind, cache.NewObjectName(live.GetNamespace(), live.GetName()).String(), n.ID, t) +
		heldBy(live.GetFinalizers()) + "; it is created again once it is gone, and the resources that depend on it wait for that"
}

// unreadExternals stops routing changes of what an externalRef read before
// to the instance when the reference was not read this time: includeWhen
// excludes it now, or it waits on a dependency, whose change brings the
// instance back instead.
func (r *run) unreadExternals() {
	for _, n := range r.g.Nodes {
		if n.External != nil && n.Kind != nil && !slices.Contains(r.externalsRead, n.ID) {
			r.t.externals.unread(n.Kind.GVR(), externalReader{instance: r.key, node: n.ID})
		}
	}
}

// fail records a write of the graph refused, or not tried for err.
func (r *run) fail(err error) {
	r.writeFailures = append(r.writeFailures, err)
}

// readExternal reads an externalRef (by name or selector): never written,
// waited for until it exists and is ready.
func (r *run) readExternal(ctx context.Context, n *graph.Node) {
	if n.Kind == nil {
		return
	}
	target, err := resolve.ExternalTarget(n, r.scope)
	if !r.note(n, err) {
		return
	}
	selector := target.ListSelector()
	// Watched from now on: a change (or the object's creation) brings
	// the instance back.
	r.t.externals.read(n.Kind.GVR(), externalReader{instance: r.key, node: n.ID},
		externalRead{namespace: target.Namespace, name: target.Name, selector: selector})
	followed := r.t.externals.follows(ctx, n.Kind.GVR())
	r.externalsRead = append(r.externalsRead, n.ID)
	client := r.t.client.Resource(n.Kind.GVR()).Namespace(target.Namespace)
	if selector != nil {
		list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			r.waitExternal(n, fmt.Sprintf("%s: listing external %s: %v", n.ID, n.Kind.Resource, err), false)
			return
		}
		items := make([]any, 0, len(list.Items))
		ready := true
		for i := range list.Items {
			item := &list.Items[i]
			typed := resolve.Typed(n, item.Object)
			items = append(items, typed)
			if v := resolve.Ready(n, typed, r.scope); !v.Ready && ready {
				ready = false
				r.waitExternal(n, fmt.Sprintf("%s (external %s %s): %s", n.ID, n.Kind.GVK.Kind, cache.NewObjectName(item.GetNamespace(), item.GetName()).String(), v.Reason), followed)
			}
		}
		r.scope.Observe(n, items)
		r.ready[n.ID] = ready
		return
	}
	obj, err := client.Get(ctx, target.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		r.waitExternal(n, fmt.Sprintf("%s: external %s %s does not exist yet", n.ID, n.Kind.GVK.Kind, cache.NewObjectName(target.Namespace, target.Name).String()), followed)
		return
	}
	if err != nil {
		r.waitExternal(n, fmt.Sprintf("%s: reading external %s %s: %v", n.ID, n.Kind.GVK.Kind, cache.NewObjectName(target.Namespace, target.Name).String(), err), false)
		return
	}
	observed := resolve.Typed(n, obj.Object)
	r.scope.Observe(n, observed)
	v := resolve.Ready(n, observed, r.scope)
	r.ready[n.ID] = v.Ready
	if !v.Ready {
		r.waitExternal(n, fmt.Sprintf("%s (external %s %s): %s", n.ID, n.Kind.GVK.Kind, target.Name, v.Reason), followed)
	}
}

// waitExternal records that n, an externalRef, is not there or not ready.
// The instance looks again after a while unless followed, the watch of its
// kind bringing it back when what it read changes: a read that failed is
// tried again either way.
func (r *run) waitExternal(n *graph.Node, msg string, followed bool) {
	if !followed {
		r.pollExternal = true
	}
	r.noteNotReady(n, msg)
}

// noteNotReady records that n is not ready, msg naming it first and
// saying why.
func (r *run) noteNotReady(n *graph.Node, msg string) {
	if r.blocked == "" {
		r.blocked = msg
	}
	r.noteWhy(n, msg)
}

// noteWhy keeps the first reason n is not ready, for what waits on it;
// msg names n first.
func (r *run) noteWhy(n *graph.Node, msg string) {
	if _, ok := r.notReady[n.ID]; ok {
		return
	}
	if r.notReady == nil {
		r.notReady = map[string]string{}
	}
	r.notReady[n.ID] = msg
}

// waitsMessage says which resource waits, and on what: GraphResolved's
// message while part of the graph is not rendered, which Ready shows.
func (r *run) waitsMessage() string {
	if why, ok := r.notReady[r.waits.dependency]; ok {
		return fmt.Sprintf("%s waits for %s", r.waits.node, why)
	}
	return fmt.Sprintf("%s waits for %s to be ready", r.waits.node, r.waits.dependency)
}

// waitForManagedInformers waits for the caches the run reads from. One
// whose informer fails to list its kind (the agent's role does not grant
// it, most often) is an unlistedKindError at once, and the instance is
// reconciled again as soon as the informer has listed it.
func (r *run) waitForManagedInformers(ctx context.Context) error {
	for _, n := range r.g.Nodes {
		if !n.IsManaged() {
			continue
		}
		if err := r.listed(ctx, n.Kind.GVR()); err != nil {
			return err
		}
	}
	return nil
}

// listed waits, briefly, until the informer of gvr has listed its objects
// or failed to. A failure (an unlistedKindError) ends the wait at once and
// queues the instance again for when the informer lists them.
func (r *run) listed(ctx context.Context, gvr schema.GroupVersionResource) error {
	inf, ok := r.t.managed.informer(gvr)
	if !ok || inf.HasSynced() {
		return nil
	}
	synced := waitUntil(ctx, func() bool { return inf.HasSynced() || r.t.managed.listFailure(gvr) != nil })
	if err := r.t.managed.listFailure(gvr); err != nil {
		r.t.managed.awaitSync(gvr, r.key)
		return &unlistedKindError{resource: gvr.GroupResource(), where: r.t, err: err}
	}
	if !synced {
		return fmt.Errorf("the cache of %s in %s has not synced", gvr.GroupResource(), r.t)
	}
	return nil
}

// tell records an Event on the instance, unless this run has given the
// same message already. The events API folds the Events of one reason about
// one version of an object into a series whatever their notes, so an apply
// error told again by each condition it turned False would read as three
// failures; related, when set, is the object the Event is about, which
// keeps Events of one reason about different objects apart.
func (r *run) tell(eventType, reason, message, note string, related runtime.Object) {
	if r.told[message] {
		return
	}
	if r.told == nil {
		r.told = map[string]bool{}
	}
	r.told[message] = true
	r.e.event(r.inst, related, eventType, reason, note)
}

// tellNews tells, as a Warning, why the resources could not be applied,
// unless the instance's ResourcesReady said so already when the run began:
// a refusal retried is the same news, and each retry that follows a status
// write (a new version of the instance) would be a new series of Events.
func (r *run) tellNews(reason, message string) {
	said := meta.FindStatusCondition(r.currentStatus().Conditions, v1alpha1.ConditionResourcesReady)
	if said != nil && said.Status == metav1.ConditionFalse && said.Message == message {
		return
	}
	r.tell("Warning", reason, message, message, nil)
}

// event records an Event on obj; related is the object it concerns, if any.
func (e *Engine) event(obj *unstructured.Unstructured, related runtime.Object, eventType, reason, note string) {
	if e.opts.Recorder == nil {
		return
	}
	e.opts.Recorder.Eventf(obj, related, eventType, reason, "Reconcile", "%s", note)
}
