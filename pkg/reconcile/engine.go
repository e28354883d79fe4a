// Package reconcile holds kro-agent's reconcilers: the RGD reconciler, which
// compiles RGDs, applies their CRDs and starts serving their kinds, and the
// instance engine, which keeps every instance's graph of resources in the
// cluster: apply in order gated on readiness, status, drift, pruning and
// ordered deletion. Condition bookkeeping stays in the API types' helpers.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/clusters"
	"github.com/kro-agent/kro-agent/pkg/conditions"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// InstanceKey names an instance of a served kind.
type InstanceKey struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

func (k InstanceKey) String() string {
	if k.Namespace == "" {
		return k.GVK.Kind + "/" + k.Name
	}
	return k.GVK.Kind + "/" + k.Namespace + "/" + k.Name
}

// served is a kind the engine reconciles, with its compiled graph. Serve
// and Hold change an entry in place under the engine's lock; workers read
// copies of it (kind).
type served struct {
	rgdName string
	rgdUID  string
	// rgd is kept to compile the graph again against remote clusters.
	rgd *v1alpha1.ResourceGraphDefinition
	// graph is nil while the kind is held (Hold): its RGD has no graph
	// to serve, and only the instances' status is reconciled; heldFor is
	// the RGD condition that says why.
	graph   *graph.Graph
	heldFor string
	// set is the instance condition set: built-in plus the RGD's custom
	// conditions that count toward Ready.
	set      conditions.Set
	gvr      schema.GroupVersionResource
	informer *watched
	// tellWhenEmpty is set while a change of the RGD waits for no instance
	// to be stored (it would break them), until the RGD is served again.
	tellWhenEmpty bool
}

// EngineOptions configure the instance engine.
type EngineOptions struct {
	// Config is the agent's connection to its cluster; the informers of
	// instances and managed objects use it directly.
	Config  *rest.Config
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// Recorder records the instances' Events; the agent's cuts each note
	// to what the events API takes.
	Recorder events.EventRecorder
	// Workers is the number of instances reconciled in parallel.
	Workers int
	// MaxCollectionSize bounds forEach expansion.
	MaxCollectionSize int
	// ExternalRefPoll is how often an instance waiting on an externalRef
	// looks again while the watch of its kind does not follow it: not
	// listed yet, or refused (the agent may read the kind but not watch
	// it).
	ExternalRefPoll time.Duration
	// OnKindsChanged, when set, is told the instance kinds served after
	// each change (the instance webhook registers them).
	OnKindsChanged func([]schema.GroupVersionResource)
	// OnAdmissionChanged, when set, is told the resource and name of each
	// webhook configuration, admission policy or binding of the agent's
	// own cluster created, changed or deleted while the engine runs (the
	// agent restores its own registrations at once). The engine watches
	// them already, for the instances they refused.
	OnAdmissionChanged func(schema.GroupResource, string)
	// GrantsRole, when set, names the ClusterRole the agent's grants of
	// managed kinds are aggregated into: as soon as it changes, a grant
	// having come, an instance a write of which was refused is tried
	// again, and a kind the agent was refused a list of (of instances, of
	// managed objects, read by externalRefs) is listed again.
	GrantsRole string
	// Clusters are the registered workload clusters instances labelled
	// agent.kro.run/region are placed on; nil places none.
	Clusters *clusters.Registry
	// Builtin resolves built-in kinds when graphs are type-checked against
	// a workload cluster, beside that cluster's discovery.
	Builtin kinds.Resolver
	// UnusedClusterTimeout is how long a workload cluster's connection and
	// informers stay once no instance is placed there; 1 minute when zero.
	UnusedClusterTimeout time.Duration
	Log                  logr.Logger
}

// Engine reconciles the instances of every served kind. It is a
// controller-runtime Runnable that needs leader election: only the leader
// writes.
type Engine struct {
	opts  EngineOptions
	queue workqueue.TypedRateLimitingInterface[InstanceKey]
	// refusals paces the retries of runs the API server refused for good
	// (retries.go); the queue paces those after other errors.
	refusals workqueue.TypedRateLimiter[InstanceKey]

	mu        sync.RWMutex
	kinds     map[schema.GroupVersionKind]*served
	byRGD     map[string]schema.GroupVersionKind
	instances *instanceInformers
	// local is the cluster the agent runs against; remote are the workload
	// clusters instances are placed on, connected while in use.
	local  *target
	tmu    sync.Mutex
	remote map[string]*target
	// applied remembers, per managed object, the digest of what was last
	// applied, so an unchanged desired object is not applied again.
	applied *appliedCache
	// statuses remembers status writes, against a stale instance cache.
	statuses statusMemo
	// spells remembers the instances whose Ready has been False since it
	// was last True, so that its coming back is told.
	spells conditions.Spells[types.UID]
	// statusRefusals remembers the refused status writes told.
	statusRefusals statusRefusals
	// oversized remembers the projected statuses refused as too large.
	oversized oversizedStatuses
	// orphans remembers the instances seen deleted with propagationPolicy
	// Orphan, whose resources are left in place.
	orphans orphanRequests
	ctx     context.Context
	// kindNotServed, when set, is told the RGD one of whose kinds an apply
	// in the local cluster found not served (the RGD reconciler checks
	// the RGD again).
	kindNotServed func(rgdName string)
	// lastInstanceGone, when set, is told the RGD whose kind's last stored
	// instance was deleted, while it asked to be told (TellWhenEmpty).
	lastInstanceGone func(rgdName string)
	// kindListChanged, when set, is told the RGDs of a kind the agent
	// could not list in the local cluster, and that it has listed since.
	kindListChanged func(rgdName string)
}

// NewEngine returns an engine; Start runs it.
func NewEngine(opts EngineOptions) (*Engine, error) {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.ExternalRefPoll == 0 {
		opts.ExternalRefPoll = 10 * time.Second
	}
	if opts.UnusedClusterTimeout == 0 {
		opts.UnusedClusterTimeout = time.Minute
	}
	afterError, afterRefusal := newRetryLimiters()
	e := &Engine{
		opts: opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(afterError,
			workqueue.TypedRateLimitingQueueConfig[InstanceKey]{Name: "instances"}),
		refusals: afterRefusal,
		kinds:    map[schema.GroupVersionKind]*served{},
		byRGD:    map[string]schema.GroupVersionKind{},
		applied:  newAppliedCache(),
		remote:   map[string]*target{},
	}
	informers, err := newHeldClient(opts.Config)
	if err != nil {
		return nil, err
	}
	e.instances = newInstanceInformers(informers)
	e.local = &target{client: opts.Dynamic, mapper: opts.Mapper}
	if err := e.local.follow(opts.Config, e, opts.Log); err != nil {
		return nil, err
	}
	e.local.admission.observe = opts.OnAdmissionChanged
	e.local.admission.grants = opts.GrantsRole
	e.local.managed = newManagedInformers(informers, e.routeManaged(""), e.enqueue)
	// A kind the agent was refused may be granted now: its informer
	// lists again at once, rather than when its backoff ends.
	e.local.admission.granted = e.relistRefused
	e.local.managed.listChanged = func(gvr schema.GroupVersionResource) {
		if e.kindListChanged == nil {
			return
		}
		for _, name := range e.local.managed.using(gvr) {
			e.kindListChanged(name)
		}
	}
	if opts.Clusters != nil {
		opts.Clusters.Watch(e.clusterChanged)
	}
	return e, nil
}

// NeedLeaderElection makes only the leader reconcile instances.
func (e *Engine) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends, then lets in-flight reconciles
// finish before returning.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	defer e.stopInformers()
	defer e.countInstances()()
	e.local.startFollowing()
	go wait.Until(e.dropUnusedClusters, e.opts.UnusedClusterTimeout/2, ctx.Done())
	// Reconciles in flight when the agent is asked to stop run to the end
	// on a context the stop does not cancel; a write cut in half would
	// only be redone by the next leader. The manager's graceful shutdown
	// timeout bounds the wait. Queued instances are left for the next one.
	work := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < e.opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e.processNext(work) {
			}
		}()
	}
	<-ctx.Done()
	e.queue.ShutDown()
	wg.Wait()
	return nil
}

// Serve starts (or updates) reconciliation of a kind with a newly compiled
// graph and re-queues every instance so the new graph takes effect.
func (e *Engine) Serve(rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph) error {
	defer e.kindsChanged()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return fmt.Errorf("the instance engine is not running (is this replica the leader?)")
	}
	gvk := g.Instance
	if old, ok := e.byRGD[rgd.Name]; ok && old != gvk {
		e.stopLocked(rgd.Name)
	}
	s := e.kindLocked(gvk, gvk.GroupVersion().WithResource(g.Resource))
	s.rgdName, s.rgdUID, s.rgd, s.graph = rgd.Name, string(rgd.UID), rgd.DeepCopy(), g
	s.tellWhenEmpty = false
	s.set = instanceSet(g)
	e.byRGD[rgd.Name] = gvk
	e.local.use(rgd.Name, g)
	e.enqueueAllLocked(gvk, s)
	return nil
}

// kindLocked returns the kind's entry, made and its instances watched from
// now on if it has none.
func (e *Engine) kindLocked(gvk schema.GroupVersionKind, gvr schema.GroupVersionResource) *served {
	if s := e.kinds[gvk]; s != nil {
		return s
	}
	s := &served{gvr: gvr, set: v1alpha1.InstanceConditions}
	s.informer = e.watchInstances(gvk, gvr, nil)
	e.kinds[gvk] = s
	return s
}

// watchInstances starts the informer of a kind's instances, replacing a
// running one; failed, when set, is why that one could not list them.
func (e *Engine) watchInstances(gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, failed *error) *watched {
	return e.instances.watch(gvr, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { e.instanceAdded(gvk, obj) },
		UpdateFunc: func(_, obj any) { e.instanceUpdated(gvk, obj) },
		DeleteFunc: func(obj any) { e.instanceDeleted(gvk, obj) },
	}, func() { e.instancesListChanged(gvk) }, failed)
}

// relistRefused starts again, at once, the informers of instance kinds,
// managed kinds and kinds externalRefs read whose lists the API server
// forbids: a grant to the agent has just come, and a reflector refused for
// a while waits up to 30 seconds before it tries again.
func (e *Engine) relistRefused() {
	e.mu.Lock()
	for gvk, s := range e.kinds {
		if s.informer.forbidden() {
			s.informer = e.watchInstances(gvk, s.gvr, s.informer.listErr.Load())
		}
	}
	e.mu.Unlock()
	e.local.managed.relistRefused()
	e.local.externals.relistRefused()
}

// enqueueAllLocked queues every instance of a kind, so that what changed
// for the kind takes effect on each.
func (e *Engine) enqueueAllLocked(gvk schema.GroupVersionKind, s *served) {
	for _, obj := range s.informer.informer.GetStore().List() {
		e.enqueueInstance(gvk, obj)
	}
}

// Hold keeps watching the instances of the kind an RGD serves, or served
// before the agent started, while the RGD has no graph to serve them with,
// and reconciles only their status: it says why nothing else is done for
// them, and a deletion waiting on the RGD shows as DELETING. Their
// resources are left as they are. Serve with a valid graph resumes them.
// heldFor is the RGD's condition that says why: GraphAccepted for a graph
// that is invalid, KindReady for a change of its kind that was refused.
func (e *Engine) Hold(rgd *v1alpha1.ResourceGraphDefinition, gvr schema.GroupVersionResource, kind, heldFor string) error {
	defer e.kindsChanged()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		return fmt.Errorf("the instance engine is not running (is this replica the leader?)")
	}
	gvk := gvr.GroupVersion().WithKind(kind)
	if old, ok := e.byRGD[rgd.Name]; ok && old != gvk {
		e.stopLocked(rgd.Name)
	}
	if s := e.kinds[gvk]; s != nil && s.graph == nil && s.rgdUID == string(rgd.UID) && s.heldFor == heldFor {
		// Held already: an RGD missing a kind is checked again every few
		// seconds, and its instances' status says the same each time.
		return nil
	}
	s := e.kindLocked(gvk, gvr)
	// The condition set stays that of the last graph served, so custom
	// conditions are neither dropped nor counted anew.
	s.rgdName, s.rgdUID, s.rgd, s.graph, s.heldFor = rgd.Name, string(rgd.UID), rgd.DeepCopy(), nil, heldFor
	e.byRGD[rgd.Name] = gvk
	e.enqueueAllLocked(gvk, s)
	return nil
}

// Serves reports whether an RGD serves the kind, or holds it (Hold).
func (e *Engine) Serves(gvk schema.GroupVersionKind) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.kinds[gvk] != nil
}

// Synced reports whether the kind's instance informer has synced.
func (e *Engine) Synced(gvk schema.GroupVersionKind) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := e.kinds[gvk]
	return s != nil && s.informer.informer.HasSynced()
}

// Stop ends reconciliation of the kind an RGD served. Instances and their
// resources are left as they are.
func (e *Engine) Stop(rgdName string) {
	defer e.kindsChanged()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopLocked(rgdName)
}

// kindsChanged reports the served kinds to OnKindsChanged.
func (e *Engine) kindsChanged() {
	if e.opts.OnKindsChanged == nil {
		return
	}
	e.mu.RLock()
	gvrs := make([]schema.GroupVersionResource, 0, len(e.kinds))
	for _, s := range e.kinds {
		gvrs = append(gvrs, s.gvr)
	}
	e.mu.RUnlock()
	e.opts.OnKindsChanged(gvrs)
}

func (e *Engine) stopLocked(rgdName string) {
	gvk, ok := e.byRGD[rgdName]
	if !ok {
		return
	}
	if s := e.kinds[gvk]; s != nil {
		if s.informer != nil {
			// No deletion of these instances will be seen any more.
			for _, obj := range s.informer.informer.GetStore().List() {
				if m, ok := heldMeta(obj); ok {
					e.forgetInstance(m.UID)
				}
			}
		}
		e.instances.stop(s.gvr)
	}
	for _, t := range e.targets() {
		t.forgetKind(gvk)
		t.forgetRGD(rgdName)
	}
	delete(e.kinds, gvk)
	delete(e.byRGD, rgdName)
}

// ServedGeneration is the generation of the RGD whose graph its instances
// are reconciled with, if they are (not held): an earlier one while the
// RGD's latest change cannot be applied.
func (e *Engine) ServedGeneration(rgdName string) (int64, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	gvk, ok := e.byRGD[rgdName]
	if !ok {
		return 0, false
	}
	s := e.kinds[gvk]
	if s == nil || s.graph == nil {
		return 0, false
	}
	return s.rgd.Generation, true
}

// Serving returns the kind an RGD is served as, if it is.
func (e *Engine) Serving(rgdName string) (schema.GroupVersionKind, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	gvk, ok := e.byRGD[rgdName]
	return gvk, ok
}

// kind returns a copy of the kind's entry, taken under the lock. Serve and
// Hold change the entry in place while workers reconcile its instances, and
// a run must go on with the graph it started with: one that rendered the
// objects of a graph and recorded the kinds, or wrote the status, of the
// next would report on what it did not apply. Serve queues every instance
// again, so the next run uses the new graph.
func (e *Engine) kind(gvk schema.GroupVersionKind) *served {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := e.kinds[gvk]
	if s == nil {
		return nil
	}
	snapshot := *s
	return &snapshot
}

// instanceUpdated reconciles an instance that changed, unless the change is
// only the echo of the agent's own status write.
func (e *Engine) instanceUpdated(gvk schema.GroupVersionKind, obj any) {
	if m, ok := heldMeta(obj); ok && e.statuses.echoed(m.UID, m.ResourceVersion) {
		return
	}
	e.orphans.seen(obj)
	e.enqueueInstance(gvk, obj)
}

// instanceAdded reconciles an instance created, or listed.
func (e *Engine) instanceAdded(gvk schema.GroupVersionKind, obj any) {
	e.orphans.seen(obj)
	e.enqueueInstance(gvk, obj)
}

// forgetInstance forgets what the engine remembers of an instance beyond
// a run, once no event of it will be seen any more.
func (e *Engine) forgetInstance(uid types.UID) {
	e.spells.Forget(uid)
	e.statusRefusals.forget(uid)
	e.oversized.forget(uid)
	e.orphans.forget(uid)
}

// instanceDeleted is told that an instance is gone from the API server, its
// deletion finished.
func (e *Engine) instanceDeleted(gvk schema.GroupVersionKind, obj any) {
	e.enqueueInstance(gvk, obj)
	if m, ok := heldMeta(obj); ok {
		e.forgetInstance(m.UID)
	}
	e.mu.RLock()
	rgdName, empty := e.emptyLocked(gvk)
	e.mu.RUnlock()
	if empty {
		e.lastInstanceGone(rgdName)
	}
}

// TellWhenEmpty has the RGD reconciler told (lastInstanceGone) once no
// instance of the kind an RGD serves or holds is stored any more, at once
// if none is: a change of its schema refused for breaking stored instances
// goes through then. It stays asked until the RGD is next served.
func (e *Engine) TellWhenEmpty(rgdName string) {
	e.mu.Lock()
	gvk, ok := e.byRGD[rgdName]
	if s := e.kinds[gvk]; ok && s != nil {
		s.tellWhenEmpty = true
	}
	_, empty := e.emptyLocked(gvk)
	e.mu.Unlock()
	if empty {
		e.lastInstanceGone(rgdName)
	}
}

// emptyLocked tells whether a kind whose RGD asked to be told
// (TellWhenEmpty) has no instance left, and names the RGD. The store is
// listed only while one asks: listing it on every deletion would make
// deleting many instances cost time in the square of their number.
func (e *Engine) emptyLocked(gvk schema.GroupVersionKind) (string, bool) {
	s := e.kinds[gvk]
	if s == nil || !s.tellWhenEmpty || e.lastInstanceGone == nil {
		return "", false
	}
	// An informer takes an object out of its store before it tells of
	// the deletion; one that has not synced yet knows of none.
	inf := s.informer.informer
	return s.rgdName, inf.HasSynced() && len(inf.GetStore().ListKeys()) == 0
}

// Unlisted says which kind of an RGD's the agent fails to list in the
// local cluster, its instances' or one its graph manages, and why; nil
// when it lists them all.
func (e *Engine) Unlisted(rgdName string) error {
	e.mu.RLock()
	s := e.kinds[e.byRGD[rgdName]]
	e.mu.RUnlock()
	if s != nil {
		if err := s.informer.notSynced(); err != nil {
			return &unlistedKindError{resource: s.gvr.GroupResource(), where: e.local, err: err, instances: true}
		}
	}
	return e.local.managed.unlisted(rgdName, e.local)
}

// instancesListChanged tells the RGD of a kind that listing its instances
// first failed, or succeeded after failing.
func (e *Engine) instancesListChanged(gvk schema.GroupVersionKind) {
	e.mu.RLock()
	var rgdName string
	if s := e.kinds[gvk]; s != nil {
		rgdName = s.rgdName
	}
	e.mu.RUnlock()
	if rgdName != "" && e.kindListChanged != nil {
		e.kindListChanged(rgdName)
	}
}

func (e *Engine) enqueue(key InstanceKey) { e.queue.Add(key) }

// retryRefused tries an instance refused by admission again once a change
// of the admission configuration has had time to take effect. Its backoff
// is kept: refused again, it waits as its next refusal would have.
func (e *Engine) retryRefused(key InstanceKey) { e.queue.AddAfter(key, admissionSettle) }

// retryNowAndSettled tries an instance again at once, and again once the
// API server's own caches have caught up with what changed: its quota,
// LimitRange and Pod Security admission and its webhook client read
// quotas, LimitRanges, namespaces and endpoints from informers of their
// own, which may still hold them as they were when the first try comes,
// and a refusal then would wait out the backoff.
func (e *Engine) retryNowAndSettled(key InstanceKey) {
	e.queue.Add(key)
	e.queue.AddAfter(key, admissionSettle)
}

func (e *Engine) enqueueInstance(gvk schema.GroupVersionKind, obj any) {
	m, ok := heldMeta(obj)
	if !ok {
		return
	}
	e.queue.Add(InstanceKey{GVK: gvk, Namespace: m.Namespace, Name: m.Name})
}

// routeManaged returns the handler of a cluster's managed informers: it
// sends an event on a managed object to the instance that owns it, found
// through the labels the agent put on it.
func (e *Engine) routeManaged(cluster string) managedHandler {
	return func(gvr schema.GroupVersionResource, before, obj any, deleted bool) {
		e.managedEvent(cluster, gvr, before, obj, deleted)
	}
}

func (e *Engine) managedEvent(cluster string, gvr schema.GroupVersionResource, before, obj any, deleted bool) {
	m, ok := heldMeta(obj)
	if !ok {
		return
	}
	ref := objectRef{Cluster: cluster, GVR: gvr, Namespace: m.Namespace, Name: m.Name}
	if echo := e.applied.observed(ref, deleted, m.ResourceVersion); echo {
		return
	}
	owner, ok := e.owner(gvr, m.Labels)
	if ok {
		e.queue.Add(owner)
	}
	// An instance finds its objects by the UID their instance-id label
	// names (members): one whose name labels were changed since still
	// counts for it, and its events, its deletion among them, must reach
	// it too, or an instance being deleted waits for an event that went
	// elsewhere.
	if uid := types.UID(m.Labels[v1alpha1.LabelInstanceID]); uid != "" && (!ok || !e.holds(owner, uid)) {
		if byUID, found := e.instanceWithUID(uid); found {
			e.queue.Add(byUID)
		}
	}
	// An edit of the labels naming the owner (only the agent's own
	// identity may make one, SPEC §6) would send this and every later
	// event to the instance they name now, if any: the owner they named is
	// told, so that it puts them back.
	if b, found := heldMeta(before); found && !sameOwnerLabels(b.Labels, m.Labels) {
		if was, named := e.owner(gvr, b.Labels); named && (!ok || was != owner) {
			e.queue.Add(was)
		}
	}
}

// sameOwnerLabels tells whether two versions of an object name the same
// owner: nearly every update, which then costs no second lookup.
func sameOwnerLabels(a, b map[string]string) bool {
	for _, k := range []string{v1alpha1.LabelInstanceName, v1alpha1.LabelInstanceNamespace, v1alpha1.LabelRGDName, v1alpha1.LabelInstanceID} {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// owner is the instance a managed object's labels name.
func (e *Engine) owner(gvr schema.GroupVersionResource, labels map[string]string) (InstanceKey, bool) {
	name, namespace := labels[v1alpha1.LabelInstanceName], labels[v1alpha1.LabelInstanceNamespace]
	if name == "" {
		return InstanceKey{}, false
	}
	gvk, ok := e.Serving(labels[v1alpha1.LabelRGDName])
	if s := e.kind(gvk); ok && s != nil && s.gvr == gvr {
		// The object is itself an instance of the RGD its labels name (an
		// RGD built on another RGD's kind): they name the RGD serving it,
		// not the one whose instance manages it. That instance is found
		// by its UID.
		return e.instanceWithUID(types.UID(labels[v1alpha1.LabelInstanceID]))
	}
	if !ok {
		return InstanceKey{}, false
	}
	return InstanceKey{GVK: gvk, Namespace: namespace, Name: name}, true
}

// holds reports whether the instance key is served and has the UID uid.
func (e *Engine) holds(key InstanceKey, uid types.UID) bool {
	s := e.kind(key.GVK)
	if s == nil || s.informer == nil {
		return false
	}
	h, err := heldAt(s.informer.informer.GetStore(), cache.NewObjectName(key.Namespace, key.Name).String())
	return err == nil && h != nil && h.meta.UID == uid
}

// instanceWithUID finds the served instance with the UID uid.
func (e *Engine) instanceWithUID(uid types.UID) (InstanceKey, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for gvk, s := range e.kinds {
		if s.informer == nil {
			continue
		}
		objs, err := s.informer.informer.GetIndexer().ByIndex(indexUID, string(uid))
		if err != nil || len(objs) == 0 {
			continue
		}
		if m, ok := heldMeta(objs[0]); ok {
			return InstanceKey{GVK: gvk, Namespace: m.Namespace, Name: m.Name}, true
		}
	}
	return InstanceKey{}, false
}

func (e *Engine) processNext(ctx context.Context) bool {
	key, shutdown := e.queue.Get()
	if shutdown {
		return false
	}
	defer e.queue.Done(key)
	start := time.Now()
	res, err := e.reconcileSafely(ctx, key)
	observeReconcile(start, err)
	var contested *contestedError
	switch {
	case errors.As(err, &contested):
		// Not a failure to retry soon: a restoration that waits its turn.
		e.forgetFailures(key)
		e.queue.AddAfter(key, contested.retryAfter)
	case err != nil && refusedUntilChange(err):
		e.logFailure(key, err)
		e.queue.AddAfter(key, e.refusals.When(key))
	case err != nil:
		// Retries back off in the queue.
		e.logFailure(key, err)
		e.queue.AddRateLimited(key)
	case res.requeueAfter > 0:
		e.forgetFailures(key)
		e.queue.AddAfter(key, res.requeueAfter)
	default:
		e.forgetFailures(key)
	}
	return true
}

// forgetFailures starts the next failure of the instance over from the
// shortest wait.
func (e *Engine) forgetFailures(key InstanceKey) {
	e.queue.Forget(key)
	e.refusals.Forget(key)
}

// statusNotStoredQuietTries is how many times in a row a status write may
// lose fields to a schema not in use yet before it is logged as an error:
// the queue's backoff has then waited some seconds.
const statusNotStoredQuietTries = 10

// logFailure logs a failed reconcile for whoever runs the agent (the
// instance's status and Events say it to its users). A conflict is routine,
// the cache trailing the API server, and the next try reads the change: it
// is logged at debug level, not as an error with a stack trace.
func (e *Engine) logFailure(key InstanceKey, err error) {
	if apierrors.IsConflict(err) {
		e.opts.Log.V(1).Info("instance changed while reconciled, trying again", "instance", key.String(), "error", err.Error())
		return
	}
	// The API server takes a CRD's new schema into use moments after the
	// change; a status that goes on losing fields long after is an error.
	if notStored := (*statusNotStoredError)(nil); errors.As(err, &notStored) && e.queue.NumRequeues(key) < statusNotStoredQuietTries {
		e.opts.Log.V(1).Info("status written before the API server serves its new schema, trying again", "instance", key.String(), "error", err.Error())
		return
	}
	e.opts.Log.Error(err, "reconciling instance", "instance", key.String())
}

// reconcileSafely turns a panic into an error for the instance, so no input
// can stop the agent.
func (e *Engine) reconcileSafely(ctx context.Context, key InstanceKey) (res result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error reconciling %s: %v\n%s", key, p, debug.Stack())
		}
	}()
	return e.reconcile(ctx, key)
}

// result tells the worker when to look at an instance again, beyond the
// watch events that will bring it back anyway.
type result struct {
	requeueAfter time.Duration
}

// waitForSync waits briefly for an informer; reconciling from a cache that
// has not synced would mistake missing objects for deleted ones.
func waitForSync(ctx context.Context, informers ...cache.SharedIndexInformer) bool {
	return waitUntil(ctx, func() bool {
		for _, inf := range informers {
			if !inf.HasSynced() {
				return false
			}
		}
		return true
	})
}

// waitUntil waits briefly for done to hold, and tells whether it did.
func waitUntil(ctx context.Context, done func() bool) bool {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return done(), nil
	})
	return err == nil
}

func instanceSet(g *graph.Graph) conditions.Set {
	var custom []conditions.Dependent
	for _, c := range g.Conditions {
		if c.CountsTowardReady {
			custom = append(custom, conditions.Dependent{Type: c.Type, Negative: c.Polarity == graph.PolarityNegative})
		}
	}
	return v1alpha1.InstanceConditions.With(custom...)
}
