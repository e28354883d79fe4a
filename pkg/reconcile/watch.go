package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/access"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// indexInstance indexes managed objects by the UID of their instance.
const indexInstance = "kro.run/instance-id"

// watched is one running informer.
type watched struct {
	informer cache.SharedIndexInformer
	stop     chan struct{}
	// listErr is the last error listing or watching the kind: while the
	// informer has not synced, what keeps its cache empty (the agent's
	// role not granting the kind, most often).
	listErr atomic.Pointer[error]
	// refused follows whether its list and watch are refused, for an
	// informer made by metadataInformer that needs to know; nil otherwise.
	refused *refusals
}

// newWatched prepares the informer of a kind, keeping the error its lists
// fail with (notSynced); listChanged, when set, is told when a first list
// fails before the informer has synced. failed, when set, is why the
// informer it replaces could not list the kind: it stands until this one
// has, and then listChanged is told.
func newWatched(inf cache.SharedIndexInformer, listChanged func(), failed *error) *watched {
	x := &watched{informer: inf, stop: make(chan struct{})}
	if failed != nil {
		x.listErr.Store(failed)
	}
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if first := x.listErr.Swap(&err) == nil; first && !inf.HasSynced() && listChanged != nil {
			listChanged()
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	return x
}

// run starts the informer. Once it has listed its kind, synced is called,
// then listChanged if a list failed before.
func (x *watched) run(synced, listChanged func()) {
	go x.informer.Run(x.stop)
	go func() {
		if !cache.WaitForCacheSync(x.stop, x.informer.HasSynced) {
			return
		}
		if synced != nil {
			synced()
		}
		if x.listErr.Load() != nil && listChanged != nil {
			listChanged()
		}
	}()
}

// notSynced is why the informer has not listed its objects yet: the last
// error listing them, nil while none was seen.
func (x *watched) notSynced() error {
	if x.informer.HasSynced() {
		return nil
	}
	if err := x.listErr.Load(); err != nil {
		return *err
	}
	return nil
}

// forbidden tells whether the informer has not listed its kind because the
// API server forbids the agent to.
func (x *watched) forbidden() bool {
	err := x.notSynced()
	return err != nil && apierrors.IsForbidden(err)
}

// managedInformers are the informers of one cluster's managed kinds: one
// per kind, shared by every graph that uses it, restricted by label to the
// objects the agent manages so the cache holds nothing else.
//
// The informer of a kind no graph manages any more (a resource dropped from
// its RGD, an RGD deleted) is stopped once it holds none of the agent's
// objects: until then it is what finds them to prune, or to delete with
// their instance. An instance whose ApplySet annotation still lists the
// kind starts it again to look (recordedKinds). One of a version no graph
// uses since a graph moved to another version of the resource is stopped
// once that version's informer has listed the objects, which it holds too.
type managedInformers struct {
	client  *heldClient
	onEvent managedHandler

	mu    sync.Mutex
	byGVR map[schema.GroupVersionResource]*watched
	// graphs are the kinds each RGD's graph manages here, by RGD name;
	// managed counts the graphs managing each kind.
	graphs  map[string]sets.Set[schema.GroupVersionResource]
	managed map[schema.GroupVersionResource]int
	// awaiting are the instances that could not be reconciled because
	// the informer of a kind could not list it, to retry once it has.
	awaiting map[schema.GroupVersionResource]sets.Set[InstanceKey]
	enqueue  func(InstanceKey)
	// listChanged, when set, is told of a kind whose informer first failed
	// to list it, and of one that has listed it after failing to.
	listChanged func(gvr schema.GroupVersionResource)
	// deletions are the objects the agent deleted that the informers may
	// still hold.
	deletions deletions
}

// managedHandler is told of every event on a managed object: obj is the
// object as it is now (or as it was last seen, when deleted); before is,
// for an update, the object as it was.
type managedHandler func(gvr schema.GroupVersionResource, before, obj any, deleted bool)

func newManagedInformers(client *heldClient, onEvent managedHandler, enqueue func(InstanceKey)) *managedInformers {
	return &managedInformers{client: client, onEvent: onEvent, enqueue: enqueue,
		byGVR:    map[schema.GroupVersionResource]*watched{},
		graphs:   map[string]sets.Set[schema.GroupVersionResource]{},
		managed:  map[schema.GroupVersionResource]int{},
		awaiting: map[schema.GroupVersionResource]sets.Set[InstanceKey]{},
	}
}

var managedSelector = labels.SelectorFromSet(labels.Set{v1alpha1.LabelOwned: "true"}).String()

// use records the kinds an RGD's graph manages, replacing those it managed
// before, and starts their informers; a kind it dropped that no other
// graph manages is retired.
func (w *managedInformers) use(rgdName string, gvrs []schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.graphs[rgdName]
	now := sets.New(gvrs...)
	w.graphs[rgdName] = now
	for gvr := range now {
		w.managed[gvr]++
		w.watchLocked(gvr, nil)
	}
	w.dropLocked(before)
}

// forget drops what an RGD's graph managed, retiring the kinds no other
// graph manages.
func (w *managedInformers) forget(rgdName string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.graphs[rgdName]
	delete(w.graphs, rgdName)
	w.dropLocked(before)
}

// dropLocked takes a graph's kinds off the counts, retiring those no graph
// manages any more.
func (w *managedInformers) dropLocked(kinds sets.Set[schema.GroupVersionResource]) {
	for gvr := range kinds {
		if w.managed[gvr]--; w.managed[gvr] <= 0 {
			delete(w.managed, gvr)
			w.retireLocked(gvr, w.byGVR[gvr])
		}
	}
}

// watch starts (once) the informer of a managed kind.
func (w *managedInformers) watch(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchLocked(gvr, nil)
}

// watchLocked starts the informer of gvr unless it runs; failed, when
// set, is why an informer before it could not list the kind.
func (w *managedInformers) watchLocked(gvr schema.GroupVersionResource, failed *error) {
	if _, ok := w.byGVR[gvr]; ok {
		return
	}
	inf := cache.NewSharedIndexInformer(
		w.client.listWatch(gvr, func(o *metav1.ListOptions) { o.LabelSelector = managedSelector }),
		&heldObject{}, 0, cache.Indexers{indexInstance: byInstanceID})
	listChanged := func() {
		if w.listChanged != nil {
			w.listChanged(gvr)
		}
	}
	x := newWatched(inf, listChanged, failed)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onEvent(gvr, nil, obj, false) },
		UpdateFunc: func(before, obj any) { w.onEvent(gvr, before, obj, false) },
		DeleteFunc: func(obj any) {
			if m, ok := heldMeta(obj); ok {
				w.deletions.seen(m.UID)
			}
			w.onEvent(gvr, nil, obj, true)
			w.retire(gvr, x)
		},
	})
	x.run(func() { w.synced(gvr, x) }, listChanged)
	w.byGVR[gvr] = x
}

// relistRefused starts again the informers whose lists the API server
// refuses, keeping the refusal until the new one has listed: a grant to
// the agent has just come, and a reflector refused for a while waits up to
// 30 seconds before it tries again.
func (w *managedInformers) relistRefused() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var refused []schema.GroupVersionResource
	for gvr, x := range w.byGVR {
		if x.forbidden() {
			refused = append(refused, gvr)
		}
	}
	for _, gvr := range refused {
		x := w.byGVR[gvr]
		close(x.stop)
		delete(w.byGVR, gvr)
		// What the instances waiting on it are told stays true until the
		// new informer lists, and then they and the RGDs learn it did.
		w.watchLocked(gvr, x.listErr.Load())
	}
}

// synced looks, once the informer x has listed its objects, for informers
// to retire: x itself, started for a kind no graph manages (recordedKinds),
// may find nothing to keep; and the informers of the resource's other
// versions, a graph having moved to this one, now hold only what x holds.
func (w *managedInformers) synced(gvr schema.GroupVersionResource, x *watched) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key := range w.awaiting[gvr] {
		w.enqueue(key)
	}
	delete(w.awaiting, gvr)
	w.retireLocked(gvr, x)
	for other, y := range w.byGVR {
		if other != gvr && other.GroupResource() == gvr.GroupResource() {
			w.retireLocked(other, y)
		}
	}
}

// retire stops the informer x of a kind if it still runs for it, no graph
// manages the kind, and it has listed its objects and holds none, or holds
// only objects another version's informer holds too.
func (w *managedInformers) retire(gvr schema.GroupVersionResource, x *watched) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.retireLocked(gvr, x)
}

func (w *managedInformers) retireLocked(gvr schema.GroupVersionResource, x *watched) {
	if x == nil || w.byGVR[gvr] != x || w.managed[gvr] > 0 || !x.informer.HasSynced() {
		return
	}
	if len(x.informer.GetStore().ListKeys()) > 0 && !w.heldElsewhereLocked(gvr) {
		return
	}
	close(x.stop)
	delete(w.byGVR, gvr)
}

// heldElsewhereLocked tells whether a graph manages another version of
// gvr's resource, and its informer has listed the objects: the same
// objects, served at every version, so it finds whatever this one would.
func (w *managedInformers) heldElsewhereLocked(gvr schema.GroupVersionResource) bool {
	for other, y := range w.byGVR {
		if other != gvr && other.GroupResource() == gvr.GroupResource() &&
			w.managed[other] > 0 && y.informer.HasSynced() {
			return true
		}
	}
	return false
}

// informer returns the informer of a managed kind, if running.
func (w *managedInformers) informer(gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.byGVR[gvr]
	if !ok {
		return nil, false
	}
	return x.informer, true
}

// listFailure is why the informer of gvr has not listed its objects, once
// listing them failed; nil when it has, when it is not running, or while
// no attempt failed.
func (w *managedInformers) listFailure(gvr schema.GroupVersionResource) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.byGVR[gvr]
	if !ok {
		return nil
	}
	return x.notSynced()
}

// unlisted is the first kind (by name) the graph of rgdName manages whose
// informer fails to list it, as an unlistedKindError for where; nil when
// it can list them all.
func (w *managedInformers) unlisted(rgdName string, where *target) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	gvrs := w.graphs[rgdName].UnsortedList()
	slices.SortFunc(gvrs, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
	for _, gvr := range gvrs {
		if x, ok := w.byGVR[gvr]; ok {
			if err := x.notSynced(); err != nil {
				return &unlistedKindError{resource: gvr.GroupResource(), where: where, err: err}
			}
		}
	}
	return nil
}

// using names the RGDs whose graphs manage gvr.
func (w *managedInformers) using(gvr schema.GroupVersionResource) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var names []string
	for name, kinds := range w.graphs {
		if kinds.Has(gvr) {
			names = append(names, name)
		}
	}
	return names
}

// awaitSync records that key waits for the informer of gvr to list its
// objects, to be reconciled again as soon as it has.
func (w *managedInformers) awaitSync(gvr schema.GroupVersionResource, key InstanceKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.byGVR[gvr]; ok && x.informer.HasSynced() {
		w.enqueue(key)
		return
	}
	if w.awaiting[gvr] == nil {
		w.awaiting[gvr] = sets.New[InstanceKey]()
	}
	w.awaiting[gvr].Insert(key)
}

// held returns the informer's object at key, if it has one.
func (w *managedInformers) held(gvr schema.GroupVersionResource, key string) (*heldObject, bool) {
	inf, ok := w.informer(gvr)
	if !ok {
		return nil, false
	}
	h, err := heldAt(inf.GetStore(), key)
	return h, err == nil && h != nil
}

// member is one object of an instance, as its informer holds it.
type member struct {
	gvr             schema.GroupVersionResource
	namespace, name string
	uid             types.UID
	terminating     bool
	// deleted is an object the agent deleted that the informer has not
	// shown gone, or being deleted, yet.
	deleted bool
	// finalizers of a terminating object: what it waits for.
	finalizers []string
}

// objectName is how messages name the object: namespace/name, or the name
// of a cluster-scoped one. The namespace is always given, as a graph may
// place objects in namespaces other than its instance's.
func (m member) objectName() string {
	return cache.NewObjectName(m.namespace, m.name).String()
}

// members returns the objects kro-agent applied that are labelled as the
// instance's, by node id, from the informers' caches. Nothing is decoded:
// the prune after every apply reads them all and deletes, at most, a few.
// An object the informers of two versions of its kind both hold is listed
// once.
func (w *managedInformers) members(instUID types.UID) map[string][]member {
	w.mu.Lock()
	informers := make(map[schema.GroupVersionResource]cache.SharedIndexInformer, len(w.byGVR))
	for gvr, x := range w.byGVR {
		informers[gvr] = x.informer
	}
	w.mu.Unlock()
	out := map[string][]member{}
	seen := map[types.UID]bool{}
	for gvr, inf := range informers {
		objs, err := inf.GetIndexer().ByIndex(indexInstance, string(instUID))
		if err != nil {
			continue
		}
		for _, o := range objs {
			h := o.(*heldObject)
			m := &h.meta
			if seen[m.UID] || !h.applied {
				// Another's object with the instance's labels (a
				// controller that copies its parent's labels to what it
				// creates) is not kro-agent's to prune or delete.
				continue
			}
			seen[m.UID] = true
			node := m.Labels[v1alpha1.LabelNodeID]
			mem := member{gvr: gvr, namespace: m.Namespace, name: m.Name, uid: m.UID}
			mem.deleted = m.DeletionTimestamp == nil && w.deletions.pending(m.UID)
			if m.DeletionTimestamp != nil {
				// Rare, so decoded only here rather than held for every object.
				mem.terminating = true
				if u, err := h.object(); err == nil {
					mem.finalizers = u.GetFinalizers()
				}
			}
			out[node] = append(out[node], mem)
		}
	}
	return out
}

// stopResource stops and forgets the informers of every version of a
// resource; a graph that uses it again starts them again.
func (w *managedInformers) stopResource(gr schema.GroupResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, x := range w.byGVR {
		if gvr.GroupResource() == gr {
			close(x.stop)
			delete(w.byGVR, gvr)
		}
	}
}

func (w *managedInformers) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	stopEvery(w.byGVR)
}

// instanceInformers are the informers of the served instance kinds, one
// per kind, in the cluster the agent runs against.
type instanceInformers struct {
	client *heldClient

	mu    sync.Mutex
	byGVR map[schema.GroupVersionResource]*watched
}

func newInstanceInformers(client *heldClient) *instanceInformers {
	return &instanceInformers{client: client, byGVR: map[schema.GroupVersionResource]*watched{}}
}

// watch starts the informer of an instance kind, replacing a running one;
// listChanged is told when listing the kind first fails, and when it
// succeeds after that. failed, when set, is why the informer it replaces
// could not list the kind: it stands until the new one has.
func (w *instanceInformers) watch(gvr schema.GroupVersionResource, handler cache.ResourceEventHandler, listChanged func(), failed *error) *watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.byGVR[gvr]; ok {
		close(x.stop)
	}
	inf := cache.NewSharedIndexInformer(w.client.listWatch(gvr, nil), &heldObject{}, 0, cache.Indexers{indexUID: byUID})
	_, _ = inf.AddEventHandler(handler)
	x := newWatched(inf, listChanged, failed)
	x.run(nil, listChanged)
	w.byGVR[gvr] = x
	return x
}

func (w *instanceInformers) stop(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.byGVR[gvr]; ok {
		close(x.stop)
		delete(w.byGVR, gvr)
	}
}

func (w *instanceInformers) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	stopEvery(w.byGVR)
}

// stopEvery stops and forgets every informer of a set.
func stopEvery(set map[schema.GroupVersionResource]*watched) {
	for gvr, x := range set {
		close(x.stop)
		delete(set, gvr)
	}
}

// indexUID indexes instances by their own UID, which their objects'
// instance-id label names.
const indexUID = "uid"

func byUID(obj any) ([]string, error) {
	if m, ok := heldMeta(obj); ok && m.UID != "" {
		return []string{string(m.UID)}, nil
	}
	return nil, nil
}

func byInstanceID(obj any) ([]string, error) {
	m, ok := heldMeta(obj)
	if !ok {
		return nil, nil
	}
	if id := m.Labels[v1alpha1.LabelInstanceID]; id != "" {
		return []string{id}, nil
	}
	return nil, nil
}

// unlistedKindError is a kind of an instance's graph whose informer cannot
// list it: the instance's objects of that kind cannot be seen, so nothing
// of the graph is applied, pruned or deleted until it can.
type unlistedKindError struct {
	resource schema.GroupResource
	where    *target
	err      error
	// instances is set for the kind of an RGD's instances.
	instances bool
}

func (e *unlistedKindError) Error() string {
	// The API server's own message, without the reflector's "failed to
	// list *reconcile.heldObject" before it.
	why := refusal.Message(e.err)
	what, verbs := "the objects of that kind it manages", managedVerbs(e.resource)
	if e.instances {
		what = "the instances"
		verbs = instanceVerbs(e.resource)
	}
	if !apierrors.IsForbidden(e.err) {
		return fmt.Sprintf("listing %s in %s fails, so kro-agent cannot see %s: %s", e.resource, e.where, what, why)
	}
	return fmt.Sprintf("kro-agent may not list %s in %s, so it cannot see %s: %s; grant %s %s",
		e.resource, e.where, what, why, verbs, grantsIn(e.where))
}

func (e *unlistedKindError) Unwrap() error { return e.err }

// unauthorizedError is a write to a managed object (or to an instance,
// when instances is set) the API server's authorizer denied: kro-agent's
// role lacks a verb on its kind. Its message adds to the API server's what
// to grant, and where.
type unauthorizedError struct {
	resource  schema.GroupResource
	where     *target
	err       error
	instances bool
}

// asUnauthorized makes err, a write of an object of resource in where,
// an unauthorizedError when the authorizer denied it.
func asUnauthorized(err error, resource schema.GroupResource, where *target) (*unauthorizedError, bool) {
	if !refusal.IsUnauthorized(err) {
		return nil, false
	}
	return &unauthorizedError{resource: resource, where: where, err: err}, true
}

func (e *unauthorizedError) Error() string {
	verbs := managedVerbs(e.resource)
	if e.instances {
		verbs = instanceVerbs(e.resource)
	}
	return fmt.Sprintf("%s; grant kro-agent %s %s", e.err, verbs, grantsIn(e.where))
}

func (e *unauthorizedError) Unwrap() error { return e.err }

// escalationError is a write of a binding (or a role) the API server
// refused as granting what kro-agent does not hold itself. Its message adds
// to the API server's what to grant kro-agent for it to be allowed, and
// where: bind on the role a binding names, or escalate on the role's kind.
type escalationError struct {
	err   error
	grant string
}

// asEscalation makes err, a write of u, of resource, in where, an
// escalationError when the API server refused it as an escalation.
func asEscalation(err error, u *unstructured.Unstructured, resource schema.GroupResource, where *target) (*escalationError, bool) {
	if !apierrors.IsForbidden(err) || !refusal.QuotesEscalation(err.Error()) {
		return nil, false
	}
	grant := fmt.Sprintf("escalate on %s, or what the role grants,", resource)
	kind, _, _ := unstructured.NestedString(u.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
	if bind, ok := access.Bind(kind, name); ok {
		grant = bind.Grant()
	}
	return &escalationError{err: err, grant: "grant kro-agent " + grant + " " + grantsIn(where)}, true
}

func (e *escalationError) Error() string { return e.err.Error() + "; " + e.grant }

func (e *escalationError) Unwrap() error { return e.err }

// managedVerbs says what kro-agent needs on a kind whose objects it
// manages.
func managedVerbs(resource schema.GroupResource) string {
	return access.Need{Resource: resource, Verbs: access.ManagedVerbs}.Grant()
}

// instanceVerbs says what kro-agent needs on the kind of an RGD's
// instances, and on their status.
func instanceVerbs(resource schema.GroupResource) string {
	return fmt.Sprintf("%[1]s on %[2]s and %[2]s/status", access.Words(access.InstanceVerbs, "and"), resource)
}

// grantsIn says where kro-agent is granted what it does in where: its
// aggregated role in the local cluster (which it follows, to try a denied
// write again as soon as a grant is added), the identity of a workload
// cluster's kubeconfig there.
func grantsIn(where *target) string {
	if where.cluster != "" {
		return "to the identity of the kubeconfig Cluster " + where.cluster + " is registered with"
	}
	return access.GrantedIn
}
