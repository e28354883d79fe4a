package reconcile

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// objectWatches follow, each by name (or as selectFor says), objects that
// instances wait on and whose changes no event of the instances' own
// brings: the agent tries an instance again as soon as what it waits for
// happens, not at its next retry, since after a few refusals the work
// queue's backoff waits minutes. Such an object is often not in the
// managed informers, which hold only objects with the agent's labels; the
// watch of one object costs one connection, kept while an instance waits
// on it.
type objectWatches struct {
	client metadata.Interface
	// retry is told the instances to try again.
	retry func(InstanceKey)
	log   logr.Logger
	// lost says, for the log, what waits for the backoff alone when the
	// agent may not watch such objects.
	lost string
	// onChange tries the instances again whenever the object changes (or
	// one is created); otherwise only once it is deleted, or when
	// changedEnough says an update matters.
	onChange      bool
	changedEnough func(old, updated metav1.Object) bool
	// selectFor narrows the watch of ref to the objects it follows; nil
	// for the object named ref.Name.
	selectFor func(ref objectRef, o *metav1.ListOptions)
	// waiting are the objects each instance's last run waited on.
	waiting waiters[objectRef]

	mu      sync.Mutex
	watches map[objectRef]context.CancelFunc
}

// newHolderWatches follows the objects of other owners that hold names an
// instance's graph renders. The agent does not take them over, and tries
// the instance again when one is deleted, or handed over with
// kro.run/adopt-by (what kubectl kro why-not-ready advises).
func newHolderWatches(client metadata.Interface, retry func(InstanceKey), log logr.Logger) *objectWatches {
	return &objectWatches{client: client, retry: retry, log: log, watches: map[objectRef]context.CancelFunc{},
		changedEnough: func(old, updated metav1.Object) bool {
			return old.GetAnnotations()[v1alpha1.AnnotationAdoptBy] != updated.GetAnnotations()[v1alpha1.AnnotationAdoptBy]
		},
		lost: "instances waiting for another owner's object to be deleted, or handed over, are retried with backoff only"}
}

// newQuotaWatches follows the ResourceQuotas that refused an instance's
// writes, and tries the instance again whenever one changes: its limits
// raised, its usage lowered (the quota controller writes it to the
// quota's status), or the quota deleted.
func newQuotaWatches(client metadata.Interface, retry func(InstanceKey), log logr.Logger) *objectWatches {
	return &objectWatches{client: client, retry: retry, log: log, onChange: true, watches: map[objectRef]context.CancelFunc{},
		lost: "instances waiting for room in a ResourceQuota are retried with backoff only"}
}

// newWebhookServiceWatches follows the endpoints of the Services serving
// admission webhooks the API server could not call, and tries the
// instance again whenever they change: the webhook's pods ready again,
// or its Service created. The objectRef names the Service; what is
// watched is its EndpointSlices, by the label the EndpointSlice
// controller gives them.
func newWebhookServiceWatches(client metadata.Interface, retry func(InstanceKey), log logr.Logger) *objectWatches {
	return &objectWatches{client: client, retry: retry, log: log, onChange: true, watches: map[objectRef]context.CancelFunc{},
		selectFor: func(ref objectRef, o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: ref.Name}).String()
		},
		lost: "instances waiting for an admission webhook to answer are retried with backoff only"}
}

// note records the objects an instance's run waited on (none forgets the
// instance), and watches each object some instance waits on.
func (w *objectWatches) note(key InstanceKey, refs sets.Set[objectRef]) {
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
// and stops watching what they alone waited on.
func (w *objectWatches) forgetKind(gvk schema.GroupVersionKind) {
	if w == nil {
		return
	}
	w.waiting.forgetKind(gvk)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchWaitedForLocked()
}

// watchWaitedForLocked watches each object some instance waits on, and
// no other.
func (w *objectWatches) watchWaitedForLocked() {
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

// watch follows what ref names, one object by name unless selectFor says
// otherwise, until the returned function is called.
func (w *objectWatches) watch(ref objectRef) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	selectFor := w.selectFor
	if selectFor == nil {
		selectFor = func(ref objectRef, o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
		}
	}
	inf := metadataInformer(w.client, ref.GVR, ref.Namespace, func(o *metav1.ListOptions) { selectFor(ref, o) },
		&refusals{gvr: ref.GVR, log: w.log, lost: w.lost})
	handler := cache.ResourceEventHandlerDetailedFuncs{DeleteFunc: func(any) { w.changed(ref) }}
	if w.onChange {
		handler.AddFunc = func(_ any, isInitial bool) {
			if !isInitial {
				w.changed(ref)
			}
		}
		handler.UpdateFunc = func(any, any) { w.changed(ref) }
	} else if w.changedEnough != nil {
		handler.UpdateFunc = func(old, updated any) {
			o, okOld := old.(metav1.Object)
			u, okUpdated := updated.(metav1.Object)
			if okOld && okUpdated && w.changedEnough(o, u) {
				w.changed(ref)
			}
		}
	}
	_, _ = inf.AddEventHandler(handler)
	go inf.RunWithContext(ctx)
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return
		}
		// Deleted between the refusal and the watch's first list, or,
		// where any change counts, perhaps changed: one more try tells,
		// and the watch, already there, does not start this again.
		if len(inf.GetStore().ListKeys()) == 0 || w.onChange {
			w.changed(ref)
		}
	}()
	return cancel
}

// changed tries again the instances waiting on an object that changed.
// The watch stays until their next runs say they wait on it no more: one
// refused again waits on the next change.
func (w *objectWatches) changed(ref objectRef) {
	for _, key := range w.waiting.waitingFor(ref) {
		w.retry(key)
	}
}

// stopAll ends every watch.
func (w *objectWatches) stopAll() {
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
