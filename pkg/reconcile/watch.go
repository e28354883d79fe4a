package reconcile

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// indexInstance indexes managed objects by the UID of their instance.
const indexInstance = "kro.run/instance-id"

// watched is one running informer.
type watched struct {
	informer cache.SharedIndexInformer
	stop     chan struct{}
}

// watchers owns the shared informers: one per instance kind, and one per
// managed kind shared by every graph that uses it, restricted by label to
// the objects the agent manages so the cache holds nothing else.
type watchers struct {
	client  dynamic.Interface
	onEvent func(gvr schema.GroupVersionResource, obj any, deleted bool)

	mu      sync.Mutex
	managed map[schema.GroupVersionResource]*watched
	inst    map[schema.GroupVersionResource]*watched
}

func newWatchers(client dynamic.Interface, onManagedEvent func(schema.GroupVersionResource, any, bool)) *watchers {
	return &watchers{
		client:  client,
		onEvent: onManagedEvent,
		managed: map[schema.GroupVersionResource]*watched{},
		inst:    map[schema.GroupVersionResource]*watched{},
	}
}

var managedSelector = labels.SelectorFromSet(labels.Set{v1alpha1.LabelOwned: "true"}).String()

// watchManaged starts (once) the informer of a managed kind.
func (w *watchers) watchManaged(gvr schema.GroupVersionResource) *watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.managed[gvr]; ok {
		return x
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(w.client, gvr, metav1.NamespaceAll, 0,
		cache.Indexers{indexInstance: byInstanceID},
		func(o *metav1.ListOptions) { o.LabelSelector = managedSelector }).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onEvent(gvr, obj, false) },
		UpdateFunc: func(_, obj any) { w.onEvent(gvr, obj, false) },
		DeleteFunc: func(obj any) { w.onEvent(gvr, obj, true) },
	})
	x := &watched{informer: inf, stop: make(chan struct{})}
	go inf.Run(x.stop)
	w.managed[gvr] = x
	return x
}

// managedInformer returns the informer of a managed kind, if running.
func (w *watchers) managedInformer(gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.managed[gvr]
	if !ok {
		return nil, false
	}
	return x.informer, true
}

// watchInstances starts the informer of an instance kind.
func (w *watchers) watchInstances(gvr schema.GroupVersionResource, onEvent func(any)) *watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.inst[gvr]; ok {
		close(x.stop)
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(w.client, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	_, _ = inf.AddEventHandler(handlerFunc(onEvent))
	x := &watched{informer: inf, stop: make(chan struct{})}
	go inf.Run(x.stop)
	w.inst[gvr] = x
	return x
}

func (w *watchers) stop(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x, ok := w.inst[gvr]; ok {
		close(x.stop)
		delete(w.inst, gvr)
	}
}

func (w *watchers) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, x := range w.inst {
		close(x.stop)
		delete(w.inst, gvr)
	}
	for gvr, x := range w.managed {
		close(x.stop)
		delete(w.managed, gvr)
	}
}

func byInstanceID(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	if id := u.GetLabels()[v1alpha1.LabelInstanceID]; id != "" {
		return []string{id}, nil
	}
	return nil, nil
}

func handlerFunc(f func(any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    f,
		UpdateFunc: func(_, obj any) { f(obj) },
		DeleteFunc: f,
	}
}
