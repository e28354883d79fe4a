package kinds

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// crdEvents plays events to a CRDs as its informer would: the store first,
// then the handler.
type crdEvents struct {
	crds    *CRDs
	handler cache.ResourceEventHandler
	heard   []CRDChange
}

func newCRDEvents() *crdEvents {
	e := &crdEvents{crds: &CRDs{store: cache.NewStore(cache.MetaNamespaceKeyFunc), deleted: sets.New[string]()}}
	e.handler = e.crds.handler(func(_ string, c CRDChange) { e.heard = append(e.heard, c) })
	return e
}

func (e *crdEvents) created(name string) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_ = e.crds.store.Add(m)
	e.handler.OnAdd(m, false)
}

func (e *crdEvents) terminating(name string) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, DeletionTimestamp: &metav1.Time{}}}
	_ = e.crds.store.Update(m)
	e.handler.OnUpdate(m, m)
}

// updated changes a CRD's generation to gen, as a change of its spec does,
// or leaves it as it was (a change of its status) when gen is 0.
func (e *crdEvents) updated(name string, gen int64) {
	before, _, _ := e.crds.store.GetByKey(name)
	m := before.(*metav1.PartialObjectMetadata).DeepCopy()
	if gen != 0 {
		m.Generation = gen
	}
	_ = e.crds.store.Update(m)
	e.handler.OnUpdate(before, m)
}

// deleted is told with a tombstone, as after a missed watch event.
func (e *crdEvents) deleted(name string) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_ = e.crds.store.Delete(m)
	e.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: name, Obj: m})
}

// served resolves every kind, as discovery does for a while after its CRD
// went.
type served struct{}

func (served) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	return &Info{GVK: gvk, Resource: "gizmos", Namespaced: true}, nil
}

// A kind whose CRD is terminating or deleted is refused, naming the CRD,
// whatever discovery says, until a CRD of the name is created again; a
// kind with no CRD at all (built in, or served by an aggregated API) is
// not.
func TestKindsOfRemovedCRDsDoNotResolve(t *testing.T) {
	e := newCRDEvents()
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	gizmos := schema.GroupResource{Group: "example.net", Resource: "gizmos"}
	r := e.crds.Resolver(served{})
	resolves := func(when string, want bool) {
		t.Helper()
		_, err := r.Resolve(gizmo)
		if (err == nil) != want {
			t.Errorf("%s: Resolve(Gizmo) = %v, want it resolved: %v", when, err, want)
		}
		var u *UninstalledError
		if err != nil && (!errors.As(err, &u) || !errors.Is(err, ErrNotFound) ||
			err.Error() != "example.net/v1/Gizmo: its CustomResourceDefinition gizmos.example.net is deleted or being deleted") {
			t.Errorf("%s: the error %q does not name the CRD or is not a kind not found", when, err)
		}
	}

	resolves("never seen a CRD of it", true)
	e.created("gizmos.example.net")
	resolves("installed", true)
	e.terminating("gizmos.example.net")
	resolves("its CRD terminating", false)
	if !e.crds.Removed(gizmos) || e.crds.Gone(gizmos) {
		t.Errorf("terminating: Removed, Gone = %v, %v; want true, false (its objects are still there)", e.crds.Removed(gizmos), e.crds.Gone(gizmos))
	}
	e.deleted("gizmos.example.net")
	resolves("its CRD deleted", false)
	if !e.crds.Gone(gizmos) {
		t.Error("deleted: not Gone")
	}
	// Another CRD of the group is no reason to refuse Gizmo.
	e.created("gizmos.example.net")
	e.created("widgets.example.net")
	e.deleted("widgets.example.net")
	resolves("installed again, another kind of its group deleted", true)
	if e.crds.Gone(gizmos) || e.crds.Removed(gizmos) {
		t.Error("installed again: still Removed or Gone")
	}
	want := []CRDChange{CRDInstalled, CRDTerminating, CRDDeleted, CRDInstalled, CRDInstalled, CRDDeleted}
	if !slices.Equal(e.heard, want) {
		t.Errorf("heard %v, want %v", e.heard, want)
	}
}

// A kind a CRD serves is marked custom, without changing what the resolver
// below shares; one no CRD serves is not.
func TestKindsOfCRDsAreCustom(t *testing.T) {
	e := newCRDEvents()
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	shared := &Info{GVK: gizmo, Resource: "gizmos", Namespaced: true}
	r := e.crds.Resolver(fixed{shared})
	if info, err := r.Resolve(gizmo); err != nil || info.Custom {
		t.Errorf("no CRD: %+v, %v; want a built-in or aggregated kind", info, err)
	}
	e.created("gizmos.example.net")
	if info, err := r.Resolve(gizmo); err != nil || !info.Custom || shared.Custom {
		t.Errorf("a CRD of it: %+v, %v (shared Custom %v); want it custom, the shared Info untouched", info, err, shared.Custom)
	}
}

// fixed resolves every kind to one Info.
type fixed struct{ info *Info }

func (f fixed) Resolve(schema.GroupVersionKind) (*Info, error) { return f.info, nil }

// A change of a CRD's spec is told apart from one of its status: only the
// first may change the schemas of its kinds.
func TestCRDSpecChangesAreToldApart(t *testing.T) {
	e := newCRDEvents()
	e.created("gizmos.example.net")
	e.updated("gizmos.example.net", 0)
	e.updated("gizmos.example.net", 2)
	e.updated("gizmos.example.net", 0)
	e.terminating("gizmos.example.net")
	want := []CRDChange{CRDInstalled, CRDInstalled, CRDChanged, CRDInstalled, CRDTerminating}
	if !slices.Equal(e.heard, want) {
		t.Errorf("heard %v, want %v", e.heard, want)
	}
}
