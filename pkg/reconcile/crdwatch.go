package reconcile

import (
	"context"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// crdResource is the CustomResourceDefinitions' own resource.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdWatch follows every CustomResourceDefinition of the cluster by its
// metadata alone (its name, plural.group, says what it serves; a few
// hundred bytes each however large its schema), so that an RGD learns at
// once that a kind it uses was uninstalled, even with no instance to fail
// applying it, and that a kind it waits for was installed. The agent's
// manager caches only the CRDs it generated, in full.
type crdWatch struct {
	informer cache.SharedIndexInformer

	mu sync.Mutex
	// removed are the CRDs seen deleted or being deleted, until one of
	// the name is created again: discovery may still list their kinds for
	// a moment after the deletion, and does throughout a termination.
	removed sets.Set[string]
}

func newCRDWatch(client metadata.Interface) *crdWatch {
	inf := metadatainformer.NewFilteredMetadataInformer(client, crdResource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	// The name and the deletion timestamp are all that is read; a CRD
	// applied by kubectl carries its whole self in an annotation.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ManagedFields, m.Annotations, m.Labels, m.OwnerReferences = nil, nil, nil, nil
		}
		return obj, nil
	})
	return &crdWatch{informer: inf, removed: sets.New[string]()}
}

// isRemoved reports whether the CRD serving resource in group was seen
// deleted or being deleted.
func (w *crdWatch) isRemoved(resource schema.GroupResource) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.removed.Has(resource.String())
}

// seen records what an event says of a CRD, and reports whether it is
// deleted or being deleted.
func (w *crdWatch) seen(m metav1.Object, deleted bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted || m.GetDeletionTimestamp() != nil {
		w.removed.Insert(m.GetName())
		return true
	}
	w.removed.Delete(m.GetName())
	return false
}

// source runs the informer with the controller and hands its events to
// the RGD reconciler, which says which RGDs they concern.
func (w *crdWatch) source(r *RGDReconciler) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		event := func(obj any, deleted bool) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj, deleted = d.Obj, true
			}
			m, ok := obj.(metav1.Object)
			if !ok {
				return
			}
			// Created (also as first listed: an RGD compiled before the
			// list may have missed it), or its status changed
			// (established, names accepted): what waited for its group
			// may resolve now.
			rgds := r.kindsInstalled
			if w.seen(m, deleted) {
				rgds = r.kindsRemoved
			}
			for _, name := range rgds(m.GetName()) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
		}
		_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { event(obj, false) },
			UpdateFunc: func(_, obj any) { event(obj, false) },
			DeleteFunc: func(obj any) { event(obj, true) },
		})
		if err != nil {
			return fmt.Errorf("watching CustomResourceDefinitions: %w", err)
		}
		go w.informer.Run(ctx.Done())
		return nil
	})
}

// crdGroup is the API group of the CRD named name (plural.group).
func crdGroup(name string) string {
	_, group, _ := strings.Cut(name, ".")
	return group
}

// installedKinds resolves kinds as next does, except those whose CRD the
// watch saw deleted or being deleted, and records what the RGD being
// compiled waits for: the groups of the kinds it could not resolve, and
// whether one of them is served but its schema not published yet.
type installedKinds struct {
	next         kinds.Resolver
	crds         *crdWatch
	missing      sets.Set[string]
	notPublished bool
}

// Resolve implements kinds.Resolver.
func (k *installedKinds) Resolve(gvk schema.GroupVersionKind) (*kinds.Info, error) {
	info, err := k.next.Resolve(gvk)
	if err == nil && k.crds != nil {
		gr := schema.GroupResource{Group: gvk.Group, Resource: info.Resource}
		if k.crds.isRemoved(gr) {
			info, err = nil, &kinds.UninstalledError{GVK: gvk, CRD: gr.String()}
		}
	}
	if err != nil {
		k.missing.Insert(gvk.Group)
		k.notPublished = k.notPublished || kinds.NotPublished(err)
	}
	return info, err
}
