package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/conditions"
	"github.com/kro-agent/kro-agent/pkg/crdcheck"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// RGDReconciler turns each ResourceGraphDefinition into a served kind:
// compile, apply the CRD, wait for it to be established, start the
// instance engine on it, report.
type RGDReconciler struct {
	Client client.Client
	// APIReader reads from the API server, bypassing the cache: instances
	// of a kind no longer served are listed once, not watched.
	APIReader client.Reader
	// Recorder, when set, records an Event on each released instance.
	Recorder events.EventRecorder
	Engine   *Engine
	Resolver kinds.Resolver
	// CRDs follows the cluster's CRDs: an RGD learns from it at once that
	// a kind it uses was uninstalled, or one it waits for installed. The
	// manager runs it.
	CRDs *kinds.CRDs
	// Discovery, when set, is invalidated when a kind is not found, so a
	// CRD installed later is seen on the next try.
	Discovery *kinds.Discovery
	// RetryUnknownKinds is how soon an RGD that names an unknown kind is
	// tried again, besides when a CRD of the kind's group comes: a kind
	// an aggregated API server serves has no CRD to watch.
	RetryUnknownKinds time.Duration
	// AllowCRDDeletion deletes the CRD of a deleted RGD, and with it every
	// instance, each one's resources deleted in order first; RGDs carry
	// the agent's finalizer meanwhile. Otherwise the CRD and instances
	// stay (SPEC §3).
	AllowCRDDeletion bool
	// Reconciled, when set, is called with an RGD's name each time it has
	// been reconciled, whatever the outcome: how the agent learns that it
	// has been through every RGD once.
	Reconciled func(name string)

	mu sync.Mutex
	// compiled caches each RGD's graph by name, for its UID and generation;
	// an entry goes when its RGD does, or when a kind it uses is found not
	// served.
	compiled map[string]compiledGraph
	// rechecked is when each RGD was last queued by kindNotServed, and
	// recheck where it was queued.
	rechecked map[string]time.Time
	recheck   chan event.GenericEvent
	// waiting holds, for each RGD whose last compile could not resolve a
	// kind, the kinds' groups.
	waiting map[string]sets.Set[string]
	// schemas follows the CRDs of the kinds each RGD's graph was compiled
	// against, so that it is compiled again when one of them changes.
	schemas *schemaChanges
	// spells remembers the RGDs whose Ready has been False since it was
	// last True, so that its coming back is told.
	spells conditions.Spells[string]
}

// recheckEvery bounds how often an RGD is compiled again because an apply
// found one of its kinds not served: a 404 with another cause (the kind is
// served after all) must not make the instances' failures a compile loop.
const recheckEvery = time.Minute

// conflictRetry is how often an RGD whose CRD is someone else's looks
// again whether it has become free.
const conflictRetry = 30 * time.Second

// errSchemasPending: a CRD of a kind the RGD's graph uses changed, and the
// API server has not published its new schema yet.
var errSchemasPending = errors.New("waiting for the API server to publish the new schemas of changed CRDs")

type compiledGraph struct {
	uid        types.UID
	generation int64
	graph      *graph.Graph
}

// SetupWithManager registers the reconciler: RGDs, and the CRDs it made,
// so a deleted CRD is put back.
func (r *RGDReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.RetryUnknownKinds == 0 {
		r.RetryUnknownKinds = time.Minute
	}
	r.compiled = map[string]compiledGraph{}
	r.rechecked = map[string]time.Time{}
	r.recheck = make(chan event.GenericEvent, 64)
	r.waiting = map[string]sets.Set[string]{}
	r.schemas = newSchemaChanges()
	r.Engine.kindNotServed = r.kindNotServed
	r.Engine.lastInstanceGone = r.lastInstanceGone
	r.Engine.kindListChanged = r.enqueue
	r.Engine.local.crds = r.CRDs
	// Name validation guards metrics against two controllers of one name
	// in a process; an agent restarted in-process (tests) is one controller.
	skip := true
	return ctrl.NewControllerManagedBy(mgr).
		Named("resourcegraphdefinition").
		WithOptions(controller.Options{SkipNameValidation: &skip}).
		For(&v1alpha1.ResourceGraphDefinition{}).
		Watches(&extv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[v1alpha1.LabelRGDName]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
			}
			return nil
		})).
		WatchesRawSource(source.Channel(r.recheck, &handler.EnqueueRequestForObject{})).
		WatchesRawSource(r.crdEvents()).
		Complete(r)
}

// kindsRemoved is told that the CRD named crd (plural.group) was deleted
// or is being deleted, and returns the RGDs whose graphs use its kind:
// their graphs are dropped, to be compiled again without it.
func (r *RGDReconciler) kindsRemoved(crd string) []string {
	r.mu.Lock()
	var rgds []string
	for name, c := range r.compiled {
		if slices.ContainsFunc(c.graph.Nodes, func(n *graph.Node) bool {
			return n.Kind != nil && n.Kind.GVR().GroupResource().String() == crd
		}) {
			rgds = append(rgds, name)
			delete(r.compiled, name)
		}
	}
	r.mu.Unlock()
	if len(rgds) > 0 && r.Discovery != nil {
		r.Discovery.Invalidate()
	}
	return rgds
}

// kindsInstalled is told that the CRD named crd was created or changed,
// and returns the RGDs waiting for a kind of its group.
func (r *RGDReconciler) kindsInstalled(crd string) []string {
	group := crdGroup(crd)
	r.mu.Lock()
	var rgds []string
	for name, groups := range r.waiting {
		if groups.Has(group) {
			rgds = append(rgds, name)
		}
	}
	r.mu.Unlock()
	if len(rgds) > 0 && r.Discovery != nil {
		r.Discovery.Invalidate()
	}
	return rgds
}

// kindNotServed is told by the instance engine that an apply of one of an
// RGD's resources found its kind not served: its CRD was uninstalled. The
// graph compiled for the RGD's generation is dropped and the RGD queued,
// so that its conditions say which kind is missing and its instances are
// held, rather than each failing on its own while the RGD claims Active.
func (r *RGDReconciler) kindNotServed(rgdName string) {
	r.mu.Lock()
	if time.Since(r.rechecked[rgdName]) < recheckEvery {
		r.mu.Unlock()
		return
	}
	r.rechecked[rgdName] = time.Now()
	delete(r.compiled, rgdName)
	r.mu.Unlock()
	if r.Discovery != nil {
		r.Discovery.Invalidate()
	}
	// Not queued when the channel is full: RGDs are queued already, and
	// the instances' next failures ask again.
	r.enqueue(rgdName)
}

// lastInstanceGone is told by the instance engine that the last stored
// instance of an RGD's kind was deleted while the RGD's latest change was
// refused for breaking stored instances: the RGD is queued, and the change
// goes through.
func (r *RGDReconciler) lastInstanceGone(rgdName string) {
	// Not queued when the channel is full: the change is tried again on
	// the RGD's next change.
	r.enqueue(rgdName)
}

// enqueue queues an RGD from outside its watches, unless the channel to
// the queue is full: it never blocks the informer or worker calling it.
func (r *RGDReconciler) enqueue(rgdName string) {
	rgd := &v1alpha1.ResourceGraphDefinition{}
	rgd.Name = rgdName
	select {
	case r.recheck <- event.GenericEvent{Object: rgd}:
	default:
	}
}

// Reconcile implements reconcile.Reconciler.
func (r *RGDReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.Reconciled != nil {
		defer r.Reconciled(req.Name)
	}
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := r.Client.Get(ctx, req.NamespacedName, rgd); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted: stop serving; the CRD and instances stay.
			r.forget(req.Name)
			return ctrl.Result{}, r.releaseInstances(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	if rgd.DeletionTimestamp != nil {
		if r.AllowCRDDeletion && slices.Contains(rgd.Finalizers, v1alpha1.Finalizer) {
			return r.deleteKind(ctx, rgd)
		}
		// Another tool's finalizer may keep it a while; its instances
		// must not wait for that to be deletable.
		r.Engine.Stop(rgd.Name)
		if err := r.releaseInstances(ctx, rgd.Name); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.letGo(ctx, rgd)
	}
	if r.AllowCRDDeletion {
		if err := r.keepForDeletion(ctx, rgd); err != nil {
			return ctrl.Result{}, err
		}
	} else if err := r.letGo(ctx, rgd); err != nil {
		// Left by an agent that deleted CRDs with their RGDs: this one
		// leaves them, and would hold the RGD's deletion for nothing.
		return ctrl.Result{}, err
	}
	status := rgd.Status.DeepCopy()
	res, err := r.reconcile(ctx, rgd, status)
	if ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); ready != nil {
		// The generation the conditions were last set for: one whose
		// graph waits for schemas to check it against keeps the last.
		status.ObservedGeneration = ready.ObservedGeneration
	}
	if werr := r.writeStatus(ctx, rgd, status); werr != nil {
		if apierrors.IsConflict(werr) && err == nil {
			// The cache was behind: the RGD changed since it was read
			// (the agent's own status write, or an edit). The watch event
			// of that change queues this RGD again, so there is nothing
			// to report and nothing to retry.
			return ctrl.Result{}, nil
		}
		// Retried with backoff, which replaces any requeue delay.
		return ctrl.Result{}, errors.Join(err, werr)
	}
	return res, err
}

func (r *RGDReconciler) reconcile(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, status *v1alpha1.ResourceGraphDefinitionStatus) (ctrl.Result, error) {
	gen := rgd.Generation
	// Before the compile, whose dry run of the CRD would report another's
	// CRD by what is wrong with the two merged.
	current, err := r.claimKind(ctx, rgd)
	if err != nil {
		var conflict *conflictError
		if !errors.As(err, &conflict) {
			return ctrl.Result{}, err
		}
		status.MarkKindFailed(gen, v1alpha1.ReasonKindFailed, err)
		status.MarkNotServing(gen, "the kind is not served: its CustomResourceDefinition is not this RGD's (see KindReady)")
		// Resolved by someone deleting the CRD or the other RGD, neither
		// of which queues this one.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	g, retry, err := r.compile(ctx, rgd, current)
	if errors.Is(err, errSchemasPending) {
		// Nothing new to check the graph against yet: what the RGD's
		// status says, and what is served, stand until then.
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	var invalid *graph.Error
	if err != nil && !errors.As(err, &invalid) {
		// Nothing is known to be wrong with the graph: it could not be
		// checked (the API server did not answer the generated CRD's dry
		// run). Keep serving what is served and try again.
		return ctrl.Result{}, err
	}
	if err != nil {
		status.MarkGraphInvalid(gen, err)
		status.MarkNotServing(gen, "the graph is invalid: existing instances say so in their status, and their resources are left as they are")
		if err := r.hold(ctx, rgd, v1alpha1.ConditionGraphAccepted); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	deps := map[string][]string{}
	for _, n := range g.Nodes {
		deps[n.ID] = n.Dependencies
	}
	status.MarkGraphAccepted(gen, g.Order(), deps, g.ReadWarnings())

	crd, err := r.applyCRD(ctx, rgd, g, current)
	if err == nil && current == nil {
		r.kindRecreated(ctx, rgd, crd)
	}
	if err != nil {
		served, servedEarlier := r.Engine.ServedGeneration(rgd.Name)
		var breaking *breakingError
		isBreaking := errors.As(err, &breaking)
		if isBreaking {
			// Held instances (below) cannot be deleted: their deletion
			// waits for a graph to delete their resources in order.
			breaking.deletable = servedEarlier
			status.MarkKindFailed(gen, v1alpha1.ReasonBreakingChange, err)
			// Tried again on the RGD's next change, or once no instance
			// is left: they go on being watched, served with the graph
			// of before or held.
			err = nil
			defer r.Engine.TellWhenEmpty(rgd.Name)
		} else {
			status.MarkKindFailed(gen, v1alpha1.ReasonKindFailed, err)
		}
		// Instances served from an earlier generation keep being served.
		if servedEarlier {
			if served == gen {
				// Served already, and the CRD failed on a later pass.
				status.MarkServing(gen, g.Instance)
			} else {
				status.MarkServingEarlier(gen, served, g.Instance)
			}
			return ctrl.Result{}, err
		}
		if !isBreaking {
			status.MarkNotServing(gen, "the kind is not served: its CustomResourceDefinition is not ready (see KindReady)")
			return ctrl.Result{}, err
		}
		// The CRD serves instances made with a graph this agent has not
		// seen (it started after that generation): they are held until
		// the change is allowed or undone, their status saying so, rather
		// than left claiming what nobody reconciles any more.
		status.MarkNotServing(gen, fmt.Sprintf("instances are held: generation %d is not applied (see KindReady), and the graph of the generation they were made with is not known since kro-agent started", gen))
		return ctrl.Result{}, r.hold(ctx, rgd, v1alpha1.ConditionKindReady)
	}
	if !established(crd) {
		status.MarkKindPending(gen, crd.Name)
		status.MarkNotServing(gen, "waiting for the kind to be established")
		// The CRD watch brings us back when its status changes.
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	status.MarkKindEstablished(gen, crd.Name)
	if err := r.Engine.Serve(rgd, g); err != nil {
		status.MarkNotServing(gen, err.Error())
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if err := r.Engine.Unlisted(rgd.Name); err != nil {
		// The engine queues the RGD again once the kind is listed.
		status.MarkServingBlind(gen, g.Instance, err)
		return ctrl.Result{}, nil
	}
	status.MarkServing(gen, g.Instance)
	return ctrl.Result{}, nil
}

// kindRecreated tells, when the RGD's CRD was just created again, that it
// had been deleted: the API server deleted every instance with it, which
// leaves nothing else for whoever wonders where they went to find.
func (r *RGDReconciler) kindRecreated(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, crd *extv1.CustomResourceDefinition) {
	if _, served := r.Engine.ServedGeneration(rgd.Name); !served {
		return // the RGD's first CRD, or the agent's first look at it
	}
	// Nothing but a deletion takes a served RGD's CRD away: the kind,
	// group and version that name it are immutable.
	ctrl.LoggerFrom(ctx).Info("the kind's CustomResourceDefinition was deleted, and its instances with it; created it again", "crd", crd.Name)
	r.event(rgd, "Warning", "KindRecreated", "Reconcile",
		"CustomResourceDefinition %s was deleted, and the API server deleted every %s with it (kro-agent deleted their resources first); created it again", crd.Name, crd.Spec.Names.Kind)
}

// hold keeps the instances of an RGD without a graph to serve watched, so
// that their status says why nothing is done for them (heldFor names the
// RGD's condition that tells), if its kind is served by the CRD generated
// for an earlier generation. Without such a CRD there are no instances,
// and nothing to hold.
func (r *RGDReconciler) hold(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, heldFor string) error {
	crds, err := r.ownedCRDs(ctx, rgd.Name)
	if err != nil {
		return err
	}
	for i := range crds {
		gvk, ok := graph.ServedKind(&crds[i])
		if ok && rgd.Spec.Schema != nil && gvk.Kind == rgd.Spec.Schema.Kind {
			if err := r.Engine.Hold(rgd, gvk.GroupVersion().WithResource(crds[i].Spec.Names.Plural), gvk.Kind, heldFor); err != nil {
				return fmt.Errorf("holding the %s instances of ResourceGraphDefinition %s: %w", gvk.Kind, rgd.Name, err)
			}
			return nil
		}
	}
	r.Engine.Stop(rgd.Name)
	return nil
}

// ownedCRDs are the CRDs generated for an RGD, from the cache.
func (r *RGDReconciler) ownedCRDs(ctx context.Context, rgdName string) ([]extv1.CustomResourceDefinition, error) {
	crds := &extv1.CustomResourceDefinitionList{}
	if err := r.Client.List(ctx, crds, client.MatchingLabels{v1alpha1.LabelOwned: "true", v1alpha1.LabelRGDName: rgdName}); err != nil {
		return nil, fmt.Errorf("listing the CRDs of ResourceGraphDefinition %s: %w", rgdName, err)
	}
	return crds.Items, nil
}

// compile returns the RGD's graph, compiled once per generation. The
// generated CRD is validated by a dry-run apply, so that a schema the API
// server refuses is a GraphAccepted error at its RGD field, unless current
// (the RGD's CRD in the cluster, or nil) has its spec already: the API
// server accepted it, and there is nothing to apply. When a kind
// could not be resolved, retry says how soon to compile again without an
// event: shortly for a schema about to be published; for a kind not
// served, in case an aggregated API comes to serve it (a CRD of its group
// queues the RGD when it comes).
func (r *RGDReconciler) compile(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, current *extv1.CustomResourceDefinition) (g *graph.Graph, retry time.Duration, err error) {
	r.mu.Lock()
	c, ok := r.compiled[rgd.Name]
	r.mu.Unlock()
	kindsResolver := r.CRDs.Resolver(r.Resolver)
	stale, wait := r.schemas.pending(rgd.Name, kindsResolver, time.Now())
	if ok && c.uid == rgd.UID && c.generation == rgd.Generation && !stale {
		return c.graph, 0, nil
	}
	if wait > 0 {
		return nil, wait, errSchemasPending
	}
	resolver := &waitingKinds{next: kindsResolver, missing: sets.New[string]()}
	onServer := crdcheck.OnServer(ctx, r.Client, ownership.FieldManager)
	validate := func(crd *extv1.CustomResourceDefinition) (field.ErrorList, error) {
		// As an agent starts, that is every RGD's, whose dry runs
		// would otherwise hold each RGD's reconcile up in turn.
		if current != nil && specUnchanged(current, crd) {
			return nil, nil
		}
		return onServer(crd)
	}
	g, err = graph.Compile(rgd, graph.Options{Resolver: resolver, ValidateCRD: validate})
	r.schemas.compiled(rgd.Name, resolver.resolved, time.Now())
	if r.schemas.awaiting(rgd.Name, time.Now()) {
		// Compiled with the schemas of before: compiled again once the
		// new ones are published.
		r.schemas.awaitPublish(rgd.Name, func() kinds.Resolver { return r.CRDs.Resolver(r.Resolver) }, func() { r.enqueue(rgd.Name) })
	}
	r.mu.Lock()
	if resolver.missing.Len() > 0 {
		r.waiting[rgd.Name] = resolver.missing
	} else {
		delete(r.waiting, rgd.Name)
	}
	if err == nil {
		r.compiled[rgd.Name] = compiledGraph{uid: rgd.UID, generation: rgd.Generation, graph: g}
	} else {
		// A graph the kinds as they are now refuse is not served
		// again on the next pass.
		delete(r.compiled, rgd.Name)
	}
	r.mu.Unlock()
	if err != nil && r.Discovery != nil {
		r.Discovery.Invalidate()
	}
	switch {
	case resolver.notPublished:
		retry = 2 * time.Second
	case resolver.missing.Len() > 0:
		retry = r.RetryUnknownKinds
	}
	return g, retry, err
}

// claimKind tells whether the RGD may write the CRD of its kind, if one
// exists (see ownership.CRDConflict), and returns it as cached, or nil
// when there is none to update. The cache holds only the CRDs RGDs
// generated: one of the name that is not there is read from the API server
// (its metadata), which costs a read only while the RGD's own CRD is not
// created yet.
func (r *RGDReconciler) claimKind(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) (*extv1.CustomResourceDefinition, error) {
	if rgd.Spec.Schema == nil {
		return nil, nil // the compile says what is missing
	}
	gvk := rgd.Spec.Schema.GroupVersionKind()
	name := graph.CRDName(gvk.Kind, gvk.Group)
	cached := &extv1.CustomResourceDefinition{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, cached)
	switch {
	case err == nil:
		return cached, r.claimCRD(ctx, rgd, name, cached.Labels)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(extv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, m); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return nil, r.claimCRD(ctx, rgd, name, m.Labels)
}

// claimCRD tells whether the RGD may write an existing CRD of its kind,
// with its labels: see ownership.CRDConflict.
func (r *RGDReconciler) claimCRD(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, crd string, labels map[string]string) error {
	err := ownership.CRDConflict(crd, labels, rgd.Name, func(name string) bool {
		err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &v1alpha1.ResourceGraphDefinition{})
		return !apierrors.IsNotFound(err)
	})
	if err != nil {
		return &conflictError{err}
	}
	return nil
}

// conflictError is a CRD of the RGD's kind that is not the RGD's to write.
// No retry soon changes that.
type conflictError struct{ error }

func (e *conflictError) Unwrap() error { return e.error }

type breakingError struct {
	changes []string
	// deletable is set when the instances can be deleted, which lets the
	// change through.
	deletable bool
}

func (e *breakingError) Error() string {
	way := fmt.Sprintf("set the annotation %s: \"true\" on the RGD to apply it anyway", v1alpha1.AnnotationAllowBreakingChanges)
	if e.deletable {
		way = fmt.Sprintf("it is applied once none is left, or at once with the annotation %s: \"true\" on the RGD", v1alpha1.AnnotationAllowBreakingChanges)
	}
	return fmt.Sprintf("the new schema would break stored instances (%s); %s", strings.Join(e.changes, "; "), way)
}

// applyCRD server-side applies the generated CRD over current (as claimKind
// read it; nil when there was none), refusing breaking changes unless the
// RGD allows them.
func (r *RGDReconciler) applyCRD(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph, current *extv1.CustomResourceDefinition) (*extv1.CustomResourceDefinition, error) {
	desired := g.CRD.DeepCopy()
	desired.Labels[v1alpha1.LabelRGDID] = string(rgd.UID)
	if current != nil {
		if changes := graph.BreakingChanges(current, desired); len(changes) > 0 && rgd.Annotations[v1alpha1.AnnotationAllowBreakingChanges] != "true" {
			stored, err := r.anyStored(ctx, current)
			if err != nil {
				return nil, err
			}
			if stored {
				return nil, &breakingError{changes: changes}
			}
			// No instance for the change to break: an author still shaping
			// a new kind is not asked to annotate each try.
		}
		if specUnchanged(current, desired) && labelsContain(current.Labels, desired.Labels) {
			return current, nil // nothing to write
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	opts := []client.ApplyOption{client.FieldOwner(ownership.FieldManager)}
	if current != nil {
		// The RGD's own CRD (claimKind): fields someone changed by hand
		// are taken back.
		opts = append(opts, client.ForceOwnership)
	}
	// With none seen, the apply creates it; one someone created since
	// claimKind looked is not overwritten: the apply conflicts on the
	// fields they set, and the next reconcile finds whose it is.
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return nil, fmt.Errorf("applying CustomResourceDefinition %s: %w", desired.Name, err)
	}
	out := &extv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}

// anyStored tells whether the API server stores an instance of the CRD's
// kind, in any namespace: one metadata-only read of at most one item,
// made only when a change would break instances.
func (r *RGDReconciler) anyStored(ctx context.Context, crd *extv1.CustomResourceDefinition) (bool, error) {
	gvk, ok := graph.ServedKind(crd)
	if !ok {
		return true, nil // no version to ask through: assume there are
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.APIReader.List(ctx, list, client.Limit(1)); err != nil {
		return false, fmt.Errorf("listing the stored %s to tell whether a schema change breaks any: %w", crd.Spec.Names.Plural, err)
	}
	return len(list.Items) > 0, nil
}

// specUnchanged tells whether applying desired leaves current's spec as it is.
func specUnchanged(current, desired *extv1.CustomResourceDefinition) bool {
	return equality.Semantic.DeepEqual(current.Spec, mergedSpec(current, desired))
}

// mergedSpec is what the CRD's spec would be after applying desired: the
// API server fills in defaults we do not set, so compare against current
// with our fields laid over it.
func mergedSpec(current, desired *extv1.CustomResourceDefinition) extv1.CustomResourceDefinitionSpec {
	spec := current.Spec.DeepCopy()
	spec.Group = desired.Spec.Group
	spec.Names = desired.Spec.Names
	spec.Names.ListKind = desired.Spec.Names.ListKind
	spec.Scope = desired.Spec.Scope
	spec.Versions = desired.Spec.Versions
	return *spec
}

func labelsContain(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func established(crd *extv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
			return true
		}
	}
	return false
}

// writeStatus updates the RGD's status when it changed, and tells in
// Events what changed that needed attention (conditions.Newsworthy): an
// RGD that stops being Active, and its coming back.
func (r *RGDReconciler) writeStatus(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, status *v1alpha1.ResourceGraphDefinitionStatus) error {
	if equality.Semantic.DeepEqual(&rgd.Status, status) {
		return nil
	}
	before := rgd.Status.Conditions
	rgd.Status = *status
	if err := r.Client.Status().Update(ctx, rgd); err != nil {
		return err
	}
	ended := r.spells.Ended(rgd.Name,
		meta.FindStatusCondition(before, v1alpha1.ConditionReady), meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady))
	for _, n := range conditions.Newsworthy(before, status.Conditions, v1alpha1.ConditionReady, nil, ended) {
		r.event(rgd, n.EventType(), n.Reason, "Reconcile", "%s", n.Note())
	}
	return nil
}
