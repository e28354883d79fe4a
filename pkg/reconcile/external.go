package reconcile

import (
	"context"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// externalWatches bring an instance back when an object its externalRefs
// read changes, appears or goes: one informer per kind that externalRefs
// read in a cluster, metadata-only (the objects are other owners', often
// Secrets, and a reconcile reads the few it needs), and, per kind, what
// each instance's references read.
type externalWatches struct {
	client  metadata.Interface
	enqueue func(InstanceKey)
	log     logr.Logger

	mu    sync.Mutex
	byGVR map[schema.GroupVersionResource]*watched
	reads map[schema.GroupVersionResource]map[externalReader]externalRead
}

// externalReader is one externalRef of one instance.
type externalReader struct {
	instance InstanceKey
	node     string
}

// externalRead is what an externalRef read last: one object by name, or
// the objects a selector matches (in every namespace when namespace is "").
type externalRead struct {
	namespace, name string
	selector        labels.Selector
}

func (r externalRead) matches(m metav1.Object) bool {
	if r.namespace != "" && r.namespace != m.GetNamespace() {
		return false
	}
	if r.selector != nil {
		return r.selector.Matches(labels.Set(m.GetLabels()))
	}
	return r.name == m.GetName()
}

func newExternalWatches(client metadata.Interface, enqueue func(InstanceKey), log logr.Logger) *externalWatches {
	return &externalWatches{client: client, enqueue: enqueue, log: log,
		byGVR: map[schema.GroupVersionResource]*watched{},
		reads: map[schema.GroupVersionResource]map[externalReader]externalRead{}}
}

// read records what an instance's externalRef is about to read, and
// watches its kind.
func (w *externalWatches) read(gvr schema.GroupVersionResource, reader externalReader, what externalRead) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reads[gvr] == nil {
		w.reads[gvr] = map[externalReader]externalRead{}
	}
	w.reads[gvr][reader] = what
	if _, ok := w.byGVR[gvr]; ok {
		return
	}
	w.watchLocked(gvr)
}

// relistRefused starts again the watches whose list or watch the API
// server refused: a grant to the agent has just come, and a refused watch
// tries again 30 to 60 seconds apart, its readers looking again meanwhile
// on their own (waitExternal).
func (w *externalWatches) relistRefused() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, x := range w.byGVR {
		if !x.refused.allowed() {
			close(x.stop)
			w.watchLocked(gvr)
		}
	}
}

// watchLocked starts the watch of a kind externalRefs read.
func (w *externalWatches) watchLocked(gvr schema.GroupVersionResource) {
	// The agent may be allowed to get the objects it reads by name and
	// not to list and watch their kind: the log says so once.
	refused := &refusals{gvr: gvr, log: w.log, lost: "instances reading its objects see their changes only when they are reconciled again"}
	inf := metadataInformer(w.client, gvr, metav1.NamespaceAll, nil, refused)
	// Only names, namespaces and labels are matched: the rest of the
	// metadata (managed fields, annotations) is not kept.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ManagedFields, m.Annotations = nil, nil
		}
		return obj, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial { // what the first list finds was there when read
				w.changed(gvr, obj)
			}
		},
		// The object as it was too: one a selector matched until a
		// label of it changed is one its readers must read again.
		UpdateFunc: func(old, obj any) { w.changed(gvr, old, obj) },
		DeleteFunc: func(obj any) { w.changed(gvr, obj) },
	})
	x := &watched{informer: inf, stop: make(chan struct{}), refused: refused}
	go inf.Run(x.stop)
	w.byGVR[gvr] = x
}

// follows tells whether the watch of a kind read follows it: its first
// list done, and neither list nor watch refused since. Then whatever
// changes after a read made now reaches the instances that read it, and
// they need not look again of their own accord. A watch just started is
// waited for briefly (its first list, once per kind): before it, the list
// could find an object made just after the read and take it for one that
// was there already.
func (w *externalWatches) follows(ctx context.Context, gvr schema.GroupVersionResource) bool {
	w.mu.Lock()
	x := w.byGVR[gvr]
	w.mu.Unlock()
	if x == nil {
		return false
	}
	waitUntil(ctx, func() bool { return x.informer.HasSynced() || !x.refused.allowed() })
	return x.informer.HasSynced() && x.refused.allowed()
}

// changed queues every instance that read the object, in any of the
// states given.
func (w *externalWatches) changed(gvr schema.GroupVersionResource, states ...any) {
	var objs []metav1.Object
	for _, obj := range states {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(metav1.Object); ok {
			objs = append(objs, m)
		}
	}
	var readers []InstanceKey
	w.mu.Lock()
	for reader, what := range w.reads[gvr] {
		if slices.ContainsFunc(objs, what.matches) {
			readers = append(readers, reader.instance)
		}
	}
	w.mu.Unlock()
	for _, k := range readers {
		w.enqueue(k)
	}
}

// unread drops what one externalRef of an instance read: it was not read
// this time (excluded by includeWhen, or waiting on its dependencies).
func (w *externalWatches) unread(gvr schema.GroupVersionResource, reader externalReader) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.reads[gvr], reader)
}

// forget drops what an instance read: it is gone.
func (w *externalWatches) forget(inst InstanceKey) {
	w.forgetIf(func(k InstanceKey) bool { return k == inst })
}

// forgetKind drops what the instances of a kind read: the agent no longer
// serves it (its RGD was deleted, or serves another kind).
func (w *externalWatches) forgetKind(gvk schema.GroupVersionKind) {
	w.forgetIf(func(k InstanceKey) bool { return k.GVK == gvk })
}

func (w *externalWatches) forgetIf(drop func(InstanceKey) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, reads := range w.reads {
		for reader := range reads {
			if drop(reader.instance) {
				delete(reads, reader)
			}
		}
	}
}

// stopAll ends every watch; nil (a cluster whose watches were never made)
// has none.
func (w *externalWatches) stopAll() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	stopEvery(w.byGVR)
	clear(w.reads)
}
