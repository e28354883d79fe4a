package kinds

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// CRDResource is the CustomResourceDefinitions' own resource, which the
// agent and kubectl kro read by metadata.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDChange is what an event says of a CustomResourceDefinition.
type CRDChange int

const (
	// CRDInstalled: created (or first listed), or its status changed, as
	// when it becomes established.
	CRDInstalled CRDChange = iota
	// CRDChanged: its spec changed (its generation moved on), so the
	// schemas of its kinds may differ; the API server publishes them anew
	// a moment later.
	CRDChanged
	// CRDTerminating: being deleted; its objects are still served while
	// the API server deletes them, but none can be created.
	CRDTerminating
	// CRDDeleted: gone, and every object of its kinds with it.
	CRDDeleted
)

// CRDs follows every CustomResourceDefinition of a cluster by its metadata
// alone (its name, plural.group, says what it serves; a few hundred bytes
// each however large its schema), so that what resolves kinds learns at
// once that one was uninstalled: discovery goes on listing its kinds for a
// moment after the deletion, and throughout a termination.
//
// CRDs is a manager runnable that runs on every replica, as the admission
// webhooks that read it do.
type CRDs struct {
	informer cache.SharedIndexInformer
	// store is the informer's: what it holds of a CRD is the truth, and is
	// updated before any handler hears of the change.
	store cache.Store

	mu sync.Mutex
	// deleted are the names of the CRDs seen deleted, for as long as the
	// store has none of the name. It is only ever added to, so handlers
	// running in any order agree.
	deleted sets.Set[string]
}

// NewCRDs makes the watch, which keeps of each CRD's labels only those
// named; Start runs it.
func NewCRDs(client metadata.Interface, keepLabels ...string) *CRDs {
	inf := metadatainformer.NewFilteredMetadataInformer(client, CRDResource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	// The name, the generation, the deletion timestamp and the labels
	// asked for are all that is read; a CRD applied by kubectl carries its
	// whole self in an annotation.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			var kept map[string]string
			for _, k := range keepLabels {
				if v, ok := m.Labels[k]; ok {
					if kept == nil {
						kept = map[string]string{}
					}
					kept[k] = v
				}
			}
			m.ManagedFields, m.Annotations, m.Labels, m.OwnerReferences = nil, nil, kept, nil
		}
		return obj, nil
	})
	c := &CRDs{informer: inf, store: inf.GetStore(), deleted: sets.New[string]()}
	// Recorded also when no one is notified (a replica that only serves
	// the webhooks).
	_, _ = inf.AddEventHandler(c.handler(nil))
	return c
}

// Start implements manager.Runnable: it runs the watch until ctx ends.
func (c *CRDs) Start(ctx context.Context) error {
	c.informer.RunWithContext(ctx)
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica serves admission reviews.
func (c *CRDs) NeedLeaderElection() bool { return false }

// Notify calls f with every change from now on, and with every CRD already
// listed as CRDInstalled (or CRDTerminating); f must not block.
func (c *CRDs) Notify(f func(crd string, change CRDChange)) error {
	if _, err := c.informer.AddEventHandler(c.handler(f)); err != nil {
		return fmt.Errorf("watching CustomResourceDefinitions: %w", err)
	}
	return nil
}

func (c *CRDs) handler(f func(string, CRDChange)) cache.ResourceEventHandler {
	// before is the CRD as it was, for an update.
	event := func(before, obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		change := CRDInstalled
		switch {
		case deleted:
			c.mu.Lock()
			c.deleted.Insert(m.GetName())
			c.mu.Unlock()
			change = CRDDeleted
		case m.GetDeletionTimestamp() != nil:
			change = CRDTerminating
		case specChanged(before, m):
			change = CRDChanged
		}
		if f != nil {
			f(m.GetName(), change)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { event(nil, obj, false) },
		UpdateFunc: func(before, obj any) { event(before, obj, false) },
		DeleteFunc: func(obj any) { event(nil, obj, true) },
	}
}

// specChanged tells whether a CRD's spec changed since before: the API
// server moves its generation on for nothing else.
func specChanged(before any, now metav1.Object) bool {
	b, ok := before.(metav1.Object)
	return ok && b.GetGeneration() != now.GetGeneration()
}

// Removed reports whether the CRD serving resource is being deleted, or
// was deleted and not created again.
func (c *CRDs) Removed(resource schema.GroupResource) bool {
	m, exists := c.get(resource)
	if exists {
		return m.GetDeletionTimestamp() != nil
	}
	return c.wasDeleted(resource)
}

// Gone reports whether the CRD serving resource was deleted and not
// created again: no object of its kinds is left.
func (c *CRDs) Gone(resource schema.GroupResource) bool {
	if _, exists := c.get(resource); exists {
		return false
	}
	return c.wasDeleted(resource)
}

// Labels returns the labels kept of the CRD named name (plural.group), and
// whether it exists, as last seen.
func (c *CRDs) Labels(name string) (map[string]string, bool) {
	m, exists := c.get(schema.ParseGroupResource(name))
	if !exists {
		return nil, false
	}
	return m.GetLabels(), true
}

func (c *CRDs) get(resource schema.GroupResource) (metav1.Object, bool) {
	obj, exists, err := c.store.GetByKey(resource.String())
	if err != nil || !exists {
		return nil, false
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}

func (c *CRDs) wasDeleted(resource schema.GroupResource) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deleted.Has(resource.String())
}

// Resolver resolves kinds with next, except those whose CRD was seen
// deleted or being deleted: they are refused with an UninstalledError.
func (c *CRDs) Resolver(next Resolver) Resolver { return installed{next: next, crds: c} }

type installed struct {
	next Resolver
	crds *CRDs
}

// Suggest implements Suggester.
func (k installed) Suggest(gvk schema.GroupVersionKind) string { return Suggest(k.next, gvk) }

// Resolve implements Resolver.
func (k installed) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	info, err := k.next.Resolve(gvk)
	if err != nil {
		return nil, err
	}
	gr := schema.GroupResource{Group: gvk.Group, Resource: info.Resource}
	if k.crds.Removed(gr) {
		return nil, &UninstalledError{GVK: gvk, CRD: gr.String()}
	}
	if _, exists := k.crds.get(gr); exists && !info.Custom {
		custom := *info // shared by the resolver's cache
		custom.Custom = true
		return &custom, nil
	}
	return info, nil
}
