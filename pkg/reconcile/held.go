package reconcile

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// heldObject is how the agent's informers (of instances and of managed
// objects) hold an object: its JSON as the API server sent it, less
// managedFields, and beside it only what the informer's store and the
// event routing need: name, namespace, uid, resourceVersion and, for a
// managed object, the labels that name its instance.
//
// An object decoded into maps takes several times the memory of its JSON,
// and the agent holds every instance and every object they manage while
// one reconcile reads an instance and a few of its objects. Those are
// decoded on demand, so every reader also gets a copy of its own.
type heldObject struct {
	meta metav1.ObjectMeta
	raw  []byte
}

// routingLabels are the labels kept decoded: the instance index and the
// routing of events to the owning instance read them on every event.
var routingLabels = []string{
	v1alpha1.LabelInstanceID,
	v1alpha1.LabelInstanceName,
	v1alpha1.LabelInstanceNamespace,
	v1alpha1.LabelRGDName,
}

// hold is the transform of the agent's informers. The informer may hand it an
// object it already transformed (a tombstone's, or one replayed on a
// relist), which it returns as it is.
func hold(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("holding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	all := u.GetLabels()
	labels := make(map[string]string, len(routingLabels))
	for _, k := range routingLabels {
		if v, ok := all[k]; ok {
			labels[k] = v
		}
	}
	return &heldObject{
		meta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(), Labels: labels},
		raw:  raw,
	}, nil
}

// heldAt returns the object an informer's store holds at key, or nil.
func heldAt(store cache.Store, key string) (*heldObject, error) {
	obj, exists, err := store.GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	return obj.(*heldObject), nil
}

// object decodes the held object into a copy of its own.
func (h *heldObject) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(h.raw); err != nil {
		return nil, fmt.Errorf("decoding the cached %s/%s: %w", h.meta.Namespace, h.meta.Name, err)
	}
	return u, nil
}

// GetObjectMeta lets the informer's key and index functions read the name,
// namespace and routing labels (meta.Accessor).
func (h *heldObject) GetObjectMeta() metav1.Object { return &h.meta }

// GetObjectKind and DeepCopyObject make a held object a runtime.Object;
// raw is never written after hold, so copies share it.
func (h *heldObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (h *heldObject) DeepCopyObject() runtime.Object {
	return &heldObject{meta: *h.meta.DeepCopy(), raw: h.raw}
}

// heldMeta returns the metadata of an object one of the agent's informers
// reported, tombstones included.
func heldMeta(obj any) (*metav1.ObjectMeta, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h, ok := obj.(*heldObject)
	if !ok {
		return nil, false
	}
	return &h.meta, true
}
