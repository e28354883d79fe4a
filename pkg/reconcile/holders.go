package reconcile

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// holderWatches follow, each by name, the objects of other owners that
// hold names an instance's graph renders. The agent does not take them
// over, and tries the instance again as soon as the object is deleted
// (what kubectl kro why-not-ready advises), not at its next retry: after a
// few refusals the work queue's backoff waits minutes. Such an object is
// often not in the managed informers, which hold only objects with the
// agent's labels; the watch of one object by name costs one connection,
// kept while an instance waits for it.
type holderWatches struct {
	client metadata.Interface
	// retry is told the instances to try again.
	retry func(InstanceKey)
	// waiting are the objects each instance's last run was refused for.
	waiting waiters[objectRef]

	mu      sync.Mutex
	watches map[objectRef]context.CancelFunc
}

func newHolderWatches(client metadata.Interface, retry func(InstanceKey)) *holderWatches {
	return &holderWatches{client: client, retry: retry, watches: map[objectRef]context.CancelFunc{}}
}

// note records the objects of other owners an instance's run was refused
// for (none forgets the instance), and watches each object some instance
// waits for.
func (w *holderWatches) note(key InstanceKey, refs sets.Set[objectRef]) {
	if w == nil {
		return
	}
	w.waiting.note(key, refs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if refs.Len() == 0 && len(w.watches) == 0 {
		return
	}
	w.watchWaitedForLocked()
}

// forgetKind forgets the instances of a kind the agent no longer serves,
// and stops watching what they alone waited for.
func (w *holderWatches) forgetKind(gvk schema.GroupVersionKind) {
	if w == nil {
		return
	}
	w.waiting.forgetKind(gvk)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchWaitedForLocked()
}

// watchWaitedForLocked watches each object some instance waits for, and
// no other.
func (w *holderWatches) watchWaitedForLocked() {
	wanted := w.waiting.all()
	for ref := range wanted {
		if _, ok := w.watches[ref]; !ok {
			w.watches[ref] = w.watch(ref)
		}
	}
	for ref, stop := range w.watches {
		if !wanted.Has(ref) {
			stop()
			delete(w.watches, ref)
		}
	}
}

// watch follows one object by name until the returned function is called.
func (w *holderWatches) watch(ref objectRef) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	byName := fields.OneTermEqualSelector("metadata.name", ref.Name).String()
	inf := metadatainformer.NewFilteredMetadataInformer(w.client, ref.GVR, ref.Namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = byName }).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { w.gone(ref) }})
	go inf.RunWithContext(ctx)
	go func() {
		// Deleted between the refusal and the watch's first list.
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) && len(inf.GetStore().ListKeys()) == 0 {
			w.gone(ref)
		}
	}()
	return cancel
}

// gone tries again the instances waiting for an object that was deleted,
// and stops watching it unless an instance waits for it again.
func (w *holderWatches) gone(ref objectRef) {
	for _, key := range w.waiting.release(ref) {
		w.retry(key)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if stop, ok := w.watches[ref]; ok && !w.waiting.waitedFor(ref) {
		stop()
		delete(w.watches, ref)
	}
}

// stopAll ends every watch.
func (w *holderWatches) stopAll() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for ref, stop := range w.watches {
		stop()
		delete(w.watches, ref)
	}
}
