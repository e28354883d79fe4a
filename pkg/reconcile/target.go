package reconcile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/clusters"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// target is a cluster the engine manages resources in: the local cluster,
// or a registered workload cluster instances are placed on. Its clients and
// informers are shared by every instance there.
type target struct {
	// cluster names the Cluster; "" is the local cluster.
	cluster string
	digest  string
	client  dynamic.Interface
	mapper  meta.RESTMapper
	managed *managedInformers
	// externals watch what externalRefs read in this cluster.
	externals *externalWatches

	// crds follows the cluster's CRDs, which a cached REST mapping does
	// not: in the agent's own cluster the RGD reconciler runs it, in a
	// workload cluster the target (followCRDs) until stopCRDs.
	crds     *kinds.CRDs
	stopCRDs context.CancelFunc
	// admission follows the cluster's admission configuration, to retry
	// the instances whose writes it refused once it changes.
	admission *admissionWatch
	// namespaceWatch follows the cluster's namespaces, to retry the
	// instances that wait for one as soon as it is created or gone.
	namespaceWatch *namespaceWatch
	// holders follow the objects of other owners that instances wait to
	// be deleted, to retry them then.
	holders *objectWatches
	// quotas follow the ResourceQuotas that refused instances' writes, to
	// retry them when one changes.
	quotas *objectWatches
	// webhookServices follow the endpoints of the Services of admission
	// webhooks the API server could not call, to retry the instances they
	// refused when those change.
	webhookServices *objectWatches

	// Remote targets only: graphs are type-checked again against the
	// cluster's own kinds, and namespaces are created as needed.
	core      kubernetes.Interface
	discovery *kinds.Discovery
	builtin   kinds.Resolver
	// schemas follows the CRDs here of the kinds each graph was compiled
	// against, so that it is compiled again when one of them changes.
	schemas *schemaChanges

	mu         sync.Mutex
	namespaces map[string]bool
	graphs     map[string]remoteGraph
	// unresolved are the RGDs whose graphs failed to compile here, to be
	// tried again when a CRD is installed.
	unresolved sets.Set[string]
	lastUsed   time.Time
}

// remoteGraph is an RGD's graph compiled against a remote cluster's kinds,
// for the hub graph it was compiled from.
type remoteGraph struct {
	from  *graph.Graph
	graph *graph.Graph
}

func (t *target) String() string {
	if t.cluster == "" {
		return "the local cluster"
	}
	return "cluster " + t.cluster
}

// newRemoteTarget connects to a registered cluster.
func newRemoteTarget(e clusters.Entry, builtin kinds.Resolver, onEvent func(cluster string) managedHandler, enqueue func(InstanceKey)) (*target, error) {
	client, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	informers, err := newHeldClient(e.Config)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	t := &target{
		cluster:    e.Name,
		digest:     e.ConfigDigest,
		client:     client,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(cached),
		core:       core,
		discovery:  kinds.NewDiscovery(cached),
		builtin:    builtin,
		namespaces: map[string]bool{},
		graphs:     map[string]remoteGraph{},
		lastUsed:   time.Now(),
		crds:       kinds.NewCRDs(meta),
		schemas:    newSchemaChanges(),
	}
	t.managed = newManagedInformers(informers, onEvent(e.Name), enqueue)
	return t, nil
}

// followCRDs starts the watch of a workload cluster's CRDs. When one is
// deleted there, every object of its kinds went with it: their informers
// stop rather than retry a watch the API server refuses until the kind is
// back, and the graphs using it are compiled again (and now fail to,
// naming the kind). When one is installed or changes, the graphs that
// failed to compile here are tried again; when the spec of one a graph
// uses changes, that graph is compiled again once the cluster publishes
// the new schema. recheck is told the RGDs of the graphs concerned, so
// that their instances placed here look at once.
func (t *target) followCRDs(recheck func(rgdNames sets.Set[string])) {
	ctx, cancel := context.WithCancel(context.Background())
	t.stopCRDs = cancel
	_ = t.crds.Notify(func(crd string, change kinds.CRDChange) {
		var rgds sets.Set[string]
		switch change {
		case kinds.CRDDeleted:
			gr := schema.ParseGroupResource(crd)
			t.managed.stopResource(gr)
			rgds = t.forgetGraphsUsing(gr)
		case kinds.CRDInstalled:
			rgds = t.takeUnresolved()
		case kinds.CRDChanged:
			rgds = t.takeUnresolved()
			for _, name := range t.schemas.crdChanged(schema.ParseGroupResource(crd), time.Now()) {
				t.awaitPublish(name, recheck)
			}
		}
		if rgds.Len() > 0 {
			recheck(rgds)
		}
	})
	go func() { _ = t.crds.Start(ctx) }()
}

// awaitPublish tells recheck of an RGD whose graph here waits for a
// changed CRD's new schema once the cluster has published it, or once
// schemaPublishWait has passed without it, and again should it be
// published later: instances go on with the graph of before meanwhile.
func (t *target) awaitPublish(rgdName string, recheck func(rgdNames sets.Set[string])) {
	t.schemas.awaitPublish(rgdName, t.kinds, func() { recheck(sets.New(rgdName)) })
}

// kinds resolves kinds as this cluster serves them.
func (t *target) kinds() kinds.Resolver {
	return t.crds.Resolver(kinds.Chain{t.discovery, t.builtin})
}

// takeUnresolved names, and forgets, the RGDs whose graphs failed to
// compile here since it was last asked.
func (t *target) takeUnresolved() sets.Set[string] {
	t.mu.Lock()
	defer t.mu.Unlock()
	rgds := t.unresolved
	t.unresolved = nil
	return rgds
}

// forgetGraphsUsing drops the graphs compiled here that use a kind of gr,
// and names their RGDs.
func (t *target) forgetGraphsUsing(gr schema.GroupResource) sets.Set[string] {
	t.mu.Lock()
	defer t.mu.Unlock()
	rgds := sets.New[string]()
	for name, c := range t.graphs {
		for _, n := range c.graph.Nodes {
			if n.Kind != nil && n.Kind.GVR().GroupResource() == gr {
				rgds.Insert(name)
				delete(t.graphs, name)
				break
			}
		}
	}
	if rgds.Len() > 0 {
		// Discovery may list the kind a moment longer; the graphs'
		// compile refuses it through the CRD watch meanwhile.
		t.discovery.Invalidate()
	}
	return rgds
}

// crdGone tells whether the CRD serving gr here was seen deleted, with
// every object of its kinds.
func (t *target) crdGone(gr schema.GroupResource) bool {
	return t.crds != nil && t.crds.Gone(gr)
}

// follow prepares what follows the cluster for the instances that wait on
// it: the objects their externalRefs read, its admission configuration, its
// namespaces, other owners' objects holding names their graphs render,
// quotas that refused them, and the Services of webhooks that did not
// answer.
func (t *target) follow(cfg *rest.Config, e *Engine, log logr.Logger) error {
	// All follow metadata alone, with one client.
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the metadata client: %w", err)
	}
	t.externals = newExternalWatches(client, e.enqueue, log)
	t.admission = newAdmissionWatch(client, e.retryRefused, log)
	t.namespaceWatch = newNamespaceWatch(client, e.retryNowAndSettled, log)
	t.holders = newHolderWatches(client, e.enqueue, log)
	t.quotas = newQuotaWatches(client, e.retryNowAndSettled, log)
	t.webhookServices = newWebhookServiceWatches(client, e.retryNowAndSettled, log)
	return nil
}

// startFollowing starts the watches of the admission configuration and
// the namespaces; other owners' objects and quotas are watched while
// waited on.
func (t *target) startFollowing() {
	t.admission.start()
	t.namespaceWatch.start()
}

// noteWaits records what a run of an instance in this cluster ended
// waiting for, each where it is followed: a write the API server refused
// (refused) and what else it awaited. What it no longer waits for is
// forgotten, and so is an instance that no longer exists (nil, waits{}).
func (t *target) noteWaits(key InstanceKey, refused error, w waits) {
	t.admission.note(key, refused)
	t.namespaceWatch.note(key, w.namespaces)
	t.holders.note(key, w.holders)
	t.quotas.note(key, w.quotas)
	t.webhookServices.note(key, w.webhookServices)
}

// forgetKind forgets what the instances of a kind the agent no longer
// serves read and waited for in this cluster, and stops watching what
// they alone waited on.
func (t *target) forgetKind(gvk schema.GroupVersionKind) {
	t.externals.forgetKind(gvk)
	t.namespaceWatch.forgetKind(gvk)
	t.holders.forgetKind(gvk)
	t.quotas.forgetKind(gvk)
	t.webhookServices.forgetKind(gvk)
}

// forgetRGD forgets what an RGD no longer served managed and compiled
// here.
func (t *target) forgetRGD(rgdName string) {
	t.managed.forget(rgdName)
	if t.cluster == "" {
		return
	}
	t.schemas.forget(rgdName)
	t.mu.Lock()
	delete(t.graphs, rgdName)
	t.mu.Unlock()
}

// stopInformers stops watching the cluster.
func (t *target) stopInformers() {
	t.managed.stopAll()
	t.externals.stopAll()
	if t.stopCRDs != nil {
		t.stopCRDs()
	}
	t.admission.stopWatching()
	t.namespaceWatch.stopWatching()
	t.holders.stopAll()
	t.quotas.stopAll()
	t.webhookServices.stopAll()
}

// ref names a member of an instance in this cluster.
func (t *target) ref(m member) objectRef {
	return objectRef{Cluster: t.cluster, GVR: m.gvr, Namespace: m.namespace, Name: m.name}
}

// kindOf names a resource's kind for messages, or the resource itself
// when the cluster no longer serves it.
func (t *target) kindOf(gvr schema.GroupVersionResource) string {
	gvk, err := t.mapper.KindFor(gvr)
	if err != nil {
		return gvr.Resource
	}
	return gvk.Kind
}

// cached returns a copy of the informer's object, or nil if it has none.
func (t *target) cached(ref objectRef) (*unstructured.Unstructured, error) {
	h, ok := t.managed.held(ref.GVR, ref.key())
	if !ok {
		return nil, nil
	}
	return h.object()
}

// holds reports whether the informer has the object, without decoding it.
func (t *target) holds(ref objectRef) bool {
	_, ok := t.managed.held(ref.GVR, ref.key())
	return ok
}

// applied reports whether the informer's copy of the object shows
// kro-agent's own apply in its managedFields (heldObject.applied).
func (t *target) applied(ref objectRef) bool {
	h, ok := t.managed.held(ref.GVR, ref.key())
	return ok && h.applied
}

// graphFor returns the graph to reconcile s with here: the hub's graph on
// the local cluster; elsewhere the same RGD compiled against the remote
// cluster's kinds, so a kind it lacks or a field its version does not have
// is reported before anything is applied there.
func (t *target) graphFor(s *served) (*graph.Graph, error) {
	if t.cluster == "" {
		return s.graph, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.graphs[s.rgdName]
	stale, wait := t.schemas.pending(s.rgdName, t.kinds(), time.Now())
	if ok && c.from == s.graph && (!stale || wait > 0) {
		// A graph waiting for a changed CRD's new schema goes on with
		// the one of before; awaitPublish comes back.
		return c.graph, nil
	}
	resolver := &waitingKinds{next: t.kinds(), missing: sets.New[string]()}
	g, err := graph.Compile(s.rgd, graph.Options{Resolver: resolver})
	t.schemas.compiled(s.rgdName, resolver.resolved, time.Now())
	if err != nil {
		// Not the graph of before either: the kinds as they are now
		// refuse the RGD.
		delete(t.graphs, s.rgdName)
		// A CRD installed there later is seen on the next try.
		t.discovery.Invalidate()
		if t.unresolved == nil {
			t.unresolved = sets.New[string]()
		}
		t.unresolved.Insert(s.rgdName)
		return nil, fmt.Errorf("ResourceGraphDefinition %s does not type-check against cluster %s: %w", s.rgdName, t.cluster, err)
	}
	t.graphs[s.rgdName] = remoteGraph{from: s.graph, graph: g}
	return g, nil
}

// use records the kinds an RGD's graph manages in this cluster and starts
// their informers: in the agent's own cluster as the graph is served, in a
// workload cluster as an instance is placed there.
func (t *target) use(rgdName string, g *graph.Graph) {
	t.managed.use(rgdName, managedKinds(g))
}

// watch starts the informers of the graph's managed kinds, leaving what
// graphs are recorded to manage as it is: for a run that may hold a graph
// the RGD has just replaced.
func (t *target) watch(g *graph.Graph) {
	for _, gvr := range managedKinds(g) {
		t.managed.watch(gvr)
	}
}

func managedKinds(g *graph.Graph) []schema.GroupVersionResource {
	var gvrs []schema.GroupVersionResource
	for _, n := range g.Nodes {
		if n.IsManaged() {
			gvrs = append(gvrs, n.Kind.GVR())
		}
	}
	return gvrs
}

// ensureNamespace creates a namespace in a remote cluster before the first
// object goes there; the local cluster's namespaces are the users' own.
func (t *target) ensureNamespace(ctx context.Context, ns string) error {
	if t.cluster == "" || ns == "" {
		return nil
	}
	t.mu.Lock()
	known := t.namespaces[ns]
	t.mu.Unlock()
	if known {
		return nil
	}
	_, err := t.core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = t.core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   ns,
			Labels: map[string]string{"app.kubernetes.io/managed-by": ownership.FieldManager},
		}}, metav1.CreateOptions{FieldManager: ownership.FieldManager})
		countWrite("namespace", err)
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("creating namespace %s in cluster %s: %w", ns, t.cluster, err)
	}
	t.mu.Lock()
	t.namespaces[ns] = true
	t.mu.Unlock()
	return nil
}

func (t *target) touch() {
	t.mu.Lock()
	t.lastUsed = time.Now()
	t.mu.Unlock()
}

func (t *target) idleSince() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastUsed
}

// remoteTarget returns the shared connection to a registered cluster,
// building it on first use and again when its kubeconfig changed.
func (e *Engine) remoteTarget(entry clusters.Entry) (*target, error) {
	e.tmu.Lock()
	defer e.tmu.Unlock()
	if t, ok := e.remote[entry.Name]; ok && t.digest == entry.ConfigDigest {
		t.touch()
		return t, nil
	} else if ok {
		t.stopInformers()
		delete(e.remote, entry.Name)
	}
	// Every request to the cluster tells the registry whether it
	// answered, so that its Cluster is checked as soon as it stops.
	entry.Config = e.opts.Clusters.Observed(entry.Name, entry.Config)
	t, err := newRemoteTarget(entry, e.opts.Builtin, e.routeManaged, e.enqueue)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", entry.Name, err)
	}
	t.followCRDs(func(rgds sets.Set[string]) { e.requeuePlaced(entry.Name, rgds) })
	if err := t.follow(entry.Config, e, e.opts.Log.WithValues("cluster", entry.Name)); err != nil {
		t.stopInformers()
		return nil, fmt.Errorf("connecting to cluster %s: %w", entry.Name, err)
	}
	t.startFollowing()
	e.remote[entry.Name] = t
	return t, nil
}

// requeuePlaced queues the instances placed on a cluster whose RGD is one
// of rgds.
func (e *Engine) requeuePlaced(cluster string, rgds sets.Set[string]) {
	e.eachInstance(func(gvk schema.GroupVersionKind, u *unstructured.Unstructured) {
		if p, ok := agentv1.PlacementOf(u); !ok || p.Cluster != cluster {
			return
		}
		if s := e.kind(gvk); s != nil && rgds.Has(s.rgdName) {
			e.queue.Add(InstanceKey{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()})
		}
	})
}

// clusterChanged is told of every change to a registered cluster: a
// connection built from an outdated kubeconfig, or to a cluster that is
// gone, is dropped, and every instance placed by region looks again. It is
// told "" once every cluster has been checked after a start: the placed
// instances waiting for that look.
func (e *Engine) clusterChanged(name string) {
	entry, ok := e.opts.Clusters.Get(name)
	e.tmu.Lock()
	if t := e.remote[name]; t != nil && (!ok || t.digest != entry.ConfigDigest) {
		t.stopInformers()
		delete(e.remote, name)
	}
	e.tmu.Unlock()
	e.eachInstance(func(gvk schema.GroupVersionKind, u *unstructured.Unstructured) {
		if u.GetLabels()[agentv1.LabelRegion] != "" || placed(u) {
			e.queue.Add(InstanceKey{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()})
		}
	})
}

// dropUnusedClusters closes the connections and informers of clusters no
// instance has been placed on for a while.
func (e *Engine) dropUnusedClusters() {
	e.tmu.Lock()
	none := len(e.remote) == 0
	e.tmu.Unlock()
	if none {
		return // nothing to drop, so no need to read every instance
	}
	inUse := map[string]bool{}
	e.eachInstance(func(_ schema.GroupVersionKind, u *unstructured.Unstructured) {
		if p, ok := agentv1.PlacementOf(u); ok {
			inUse[p.Cluster] = true
		}
	})
	e.tmu.Lock()
	defer e.tmu.Unlock()
	for name, t := range e.remote {
		if !inUse[name] && time.Since(t.idleSince()) > e.opts.UnusedClusterTimeout {
			t.stopInformers()
			delete(e.remote, name)
		}
	}
}

// targets are the local cluster and the workload clusters connected now.
func (e *Engine) targets() []*target {
	e.tmu.Lock()
	defer e.tmu.Unlock()
	out := make([]*target, 0, 1+len(e.remote))
	out = append(out, e.local)
	for _, t := range e.remote {
		out = append(out, t)
	}
	return out
}

// eachInstance calls f with every cached instance of every served kind.
func (e *Engine) eachInstance(f func(schema.GroupVersionKind, *unstructured.Unstructured)) {
	e.mu.RLock()
	kinds := make(map[schema.GroupVersionKind]*served, len(e.kinds))
	for gvk, s := range e.kinds {
		kinds[gvk] = s
	}
	e.mu.RUnlock()
	for gvk, s := range kinds {
		for _, obj := range s.informer.informer.GetStore().List() {
			if u, err := obj.(*heldObject).object(); err == nil {
				f(gvk, u)
			}
		}
	}
}

// kindGone is told that the CRD serving gr in the agent's cluster was
// deleted, and with it every object of its kinds: the informers of its
// managed objects stop rather than retry a watch the API server refuses
// until the kind is back, when the RGDs using it are served again and
// start them anew. Workload clusters follow their own (followCRDs).
func (e *Engine) kindGone(gr schema.GroupResource) {
	e.local.managed.stopResource(gr)
}

func (e *Engine) stopInformers() {
	e.instances.stopAll()
	e.local.stopInformers()
	e.tmu.Lock()
	defer e.tmu.Unlock()
	for name, t := range e.remote {
		t.stopInformers()
		delete(e.remote, name)
	}
}

// placed reports whether the instance is placed on a workload cluster, or
// waits to be placed again, its cluster gone.
func placed(u *unstructured.Unstructured) bool {
	p, ok := agentv1.PlacementOf(u)
	return ok || p.Region != ""
}
