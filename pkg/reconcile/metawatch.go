package reconcile

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// watchNames follows the names of a resource's objects by metadata until
// ctx ends: changed is told the namespace and name of each object created
// (after the first list, unless initial), updated or deleted. Nothing but
// the namespace and name is kept. While the agent may not list and watch
// the resource, or the cluster does not serve it, the log says so once
// (lost, for what waits for the backoff alone meanwhile) and the watch
// keeps trying.
func watchNames(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, initial bool, changed func(cache.ObjectName), log logr.Logger, lost string) {
	watchNamesOf(ctx, client, gvr, nil, initial, changed, log, lost)
}

// watchName follows one cluster-scoped object, as watchNames follows every
// object of a resource: the agent may be allowed that one alone.
func watchName(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, name string, changed func(cache.ObjectName), log logr.Logger, lost string) {
	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	watchNamesOf(ctx, client, gvr, byName, false, changed, log, lost)
}

func watchNamesOf(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions), initial bool, changed func(cache.ObjectName), log logr.Logger, lost string) {
	inf := metadataInformer(client, gvr, metav1.NamespaceAll, tweak, &refusals{gvr: gvr, log: log, lost: lost})
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ObjectMeta = metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, ResourceVersion: m.ResourceVersion}
		}
		return obj, nil
	})
	name := func(obj any) cache.ObjectName {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return cache.NewObjectName(m.Namespace, m.Name)
		}
		return cache.ObjectName{}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInitial bool) {
			if initial || !isInitial {
				changed(name(obj))
			}
		},
		UpdateFunc: func(_, obj any) { changed(name(obj)) },
		DeleteFunc: func(obj any) { changed(name(obj)) },
	})
	go inf.RunWithContext(ctx)
}

// metadataInformer is an informer of the metadata of gvr's objects in
// namespace (every namespace for ""), as metadatainformer makes one, whose
// every list and watch tells refused how the API server answered.
func metadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, tweak func(*metav1.ListOptions), refused *refusals) cache.SharedIndexInformer {
	resource := client.Resource(gvr).Namespace(namespace)
	options := func(o metav1.ListOptions) metav1.ListOptions {
		if tweak != nil {
			tweak(&o)
		}
		return o
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list, err := resource.List(ctx, options(o))
			refused.answered(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := resource.Watch(ctx, options(o))
			refused.answered(err)
			return w, err
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if !isRefusal(err) { // a refusal is in the log once already
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}
	})
	return inf
}

// refusals keeps the log of one watch true to the API server's answers:
// it says once that the agent may not list and watch the resource, or
// that the cluster does not serve it, and once that it may again. The
// watch goes on trying, 30 to 60 seconds apart once its backoff has grown:
// a refusal often passes (an API server that has just started authorizes
// nothing until its RBAC caches fill, and serves a custom resource only
// once it has read its CRD; a role is being rewritten), and a watch
// stopped at the first one would be lost for as long as the agent runs.
type refusals struct {
	gvr schema.GroupVersionResource
	log logr.Logger
	// lost says what waits for the backoff alone while refused.
	lost string

	mu sync.Mutex
	// refused is the refusal the log told of last; nil while allowed.
	refused error
}

func isRefusal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsNotFound(err)
}

// allowed tells whether the last list or watch was not refused; nil (a
// kind not watched) is not.
func (r *refusals) allowed() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused == nil
}

// answered notes how the API server answered a list or watch: err is nil,
// a refusal, or another error (a connection lost), which changes nothing.
func (r *refusals) answered(err error) {
	if err != nil && !isRefusal(err) {
		return
	}
	r.mu.Lock()
	was := r.refused
	r.refused = err
	r.mu.Unlock()
	resource := r.gvr.GroupResource().String()
	switch {
	case was == nil && apierrors.IsForbidden(err):
		r.log.Info("not following "+resource+" while the agent may not list and watch it: "+r.lost, "error", err.Error())
	case was == nil && err != nil:
		// An older cluster does not serve every resource.
		r.log.V(1).Info("the cluster does not serve this resource", "resource", r.gvr.String())
	case was != nil && err == nil && apierrors.IsForbidden(was):
		r.log.Info("following " + resource + " again: the agent may list and watch it now")
	case was != nil && err == nil:
		r.log.V(1).Info("the cluster serves this resource now", "resource", r.gvr.String())
	}
}

// watching holds what ends the watches a follower of the cluster started.
type watching struct {
	mu   sync.Mutex
	stop context.CancelFunc
}

// begin returns the context the watches run in until end.
func (w *watching) begin() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop = cancel
	return ctx
}

// end stops the watches.
func (w *watching) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		w.stop()
	}
}
