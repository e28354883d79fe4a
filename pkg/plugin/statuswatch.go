package plugin

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watchedList is one list a status table was read from, and the objects
// the read saw in it.
type watchedList struct {
	gvr schema.GroupVersionResource
	// namespace is "" for every namespace and for a cluster-scoped kind.
	namespace string
	// selector is the label query the instances matched.
	selector string
	// name is the one object read, "" for the whole list.
	name string
	// seen is the resourceVersion of each object read, by its
	// namespace/name key.
	seen map[string]string
}

// key tells lists apart: the same list read again is watched once.
func (l watchedList) key() string {
	return fmt.Sprintf("%s|%s|%s|%s", l.gvr, l.namespace, l.selector, l.name)
}

// seenOf is what a read saw of objs, to compare the watch's first list
// with.
func seenOf[T any, P interface {
	*T
	metav1.Object
}](objs []T) map[string]string {
	seen := make(map[string]string, len(objs))
	for i := range objs {
		o := P(&objs[i])
		seen[cache.NewObjectName(o.GetNamespace(), o.GetName()).String()] = o.GetResourceVersion()
	}
	return seen
}

// statusWatch follows, by their metadata, the lists a status table was
// read from, and says on changed when any of them changes. --watch reads
// again only then: a cluster where nothing changes costs it no request,
// where reading at every tick would list every kind once a second.
type statusWatch struct {
	client  metadata.Interface
	changed chan struct{}
	// polling is set once a list could not be watched (the user may list
	// it but not watch it): --watch then reads at its interval instead.
	polling atomic.Bool
	errOut  io.Writer
	warned  sync.Once

	running map[string]context.CancelFunc
}

func newStatusWatch(client metadata.Interface, errOut io.Writer) *statusWatch {
	return &statusWatch{
		client:  client,
		changed: make(chan struct{}, 1),
		errOut:  errOut,
		running: map[string]context.CancelFunc{},
	}
}

func (w *statusWatch) signal() {
	select {
	case w.changed <- struct{}{}:
	default: // one pending signal stands for any number of changes
	}
}

// follow watches exactly lists: those new start, and those the last read
// no longer came from stop.
func (w *statusWatch) follow(ctx context.Context, lists []watchedList) {
	want := map[string]bool{}
	for _, l := range lists {
		k := l.key()
		want[k] = true
		if _, ok := w.running[k]; !ok {
			w.running[k] = w.start(ctx, l)
		}
	}
	for k, stop := range w.running {
		if !want[k] {
			stop()
			delete(w.running, k)
		}
	}
}

// stop ends every watch.
func (w *statusWatch) stop() {
	for k, stop := range w.running {
		stop()
		delete(w.running, k)
	}
}

// start watches l until the returned function is called. Only each
// object's name and resourceVersion are kept. A change is anything after
// the watch's first list, and that first list itself where it differs
// from what the read saw: what changed between the read and the watch's
// start is not lost.
func (w *statusWatch) start(ctx context.Context, l watchedList) context.CancelFunc {
	ctx, stop := context.WithCancel(ctx)
	inf := metadatainformer.NewFilteredMetadataInformer(w.client, l.gvr, l.namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.LabelSelector = l.selector
		if l.name != "" {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", l.name).String()
		}
	}).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ObjectMeta = metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, ResourceVersion: m.ResourceVersion}
		}
		return obj, nil
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			stop()
			w.polling.Store(true)
			w.warned.Do(func() {
				fmt.Fprintf(w.errOut, "kubectl kro: cannot watch %s, reading again at --watch-interval instead: %v\n", l.gvr.GroupResource(), err)
			})
		}
		// Anything else (a kind no longer served, a lost connection) the
		// next read shows, or finds gone; the informer retries meanwhile.
		w.signal()
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				w.signal()
			}
		},
		UpdateFunc: func(old, cur any) {
			// A relist hands every object over again, unchanged.
			if resourceVersion(old) != resourceVersion(cur) {
				w.signal()
			}
		},
		DeleteFunc: func(any) { w.signal() },
	})
	go inf.RunWithContext(ctx)
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return
		}
		if differs(l.seen, inf.GetStore().List()) {
			w.signal()
		}
	}()
	return stop
}

func resourceVersion(obj any) string {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return m.ResourceVersion
	}
	return ""
}

// differs tells whether the objects a watch listed first are not the ones
// a read saw, in the same versions.
func differs(seen map[string]string, listed []any) bool {
	if len(listed) != len(seen) {
		return true
	}
	for _, obj := range listed {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return true
		}
		rv, ok := seen[cache.NewObjectName(m.Namespace, m.Name).String()]
		if !ok || rv != m.ResourceVersion {
			return true
		}
	}
	return false
}
