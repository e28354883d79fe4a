package reconcile

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watchNames follows the names of a resource's objects by metadata until
// ctx ends: changed is told the namespace and name of each object created
// (after the first list, unless initial), updated or deleted. Nothing but
// the namespace and name is kept. Without list and watch on the resource,
// or on a cluster that does not serve it, the watch stops and says so in
// the log: what it was for then waits for the backoff alone (lost, for
// what).
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

func watchNamesOf(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, tweak metadatainformer.TweakListOptionsFunc, initial bool, changed func(cache.ObjectName), log logr.Logger, lost string) {
	inf := metadatainformer.NewFilteredMetadataInformer(client, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, tweak).Informer()
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
	ctx, stopThis := context.WithCancel(ctx)
	stopWhenRefused(inf, gvr, stopThis, log, lost)
	go inf.RunWithContext(ctx)
}

// stopWhenRefused makes an informer of gvr stop (stop) when the API server
// refuses to let the agent list and watch it, or does not serve it, and
// say so in the log: asking again would only fail again, and what it was
// for then waits for the backoff alone (lost, for what).
func stopWhenRefused(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, stop context.CancelFunc, log logr.Logger, lost string) {
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		switch {
		case apierrors.IsForbidden(err):
			log.Info("not following "+gvr.GroupResource().String()+", which the agent may not list and watch: "+lost,
				"error", err.Error())
			stop()
			return
		case apierrors.IsNotFound(err):
			// An older cluster does not serve every resource.
			log.V(1).Info("the cluster does not serve this resource", "resource", gvr.String())
			stop()
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
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
