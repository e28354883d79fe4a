package reconcile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/jsonscan"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// heldObject is how the agent's informers (of instances and of managed
// objects) hold an object: its JSON as the API server sent it, less
// managedFields, and beside it only what the informer's store, the event
// routing and the prune read on every pass: name, namespace, uid,
// resourceVersion, deletionTimestamp and, for a managed object, the labels
// that name its instance and its node.
//
// An object decoded into maps takes several times the memory of its JSON,
// and the agent holds every instance and every object they manage while
// one reconcile reads an instance and a few of its objects. Those are
// decoded on demand, so every reader also gets a copy of its own.
type heldObject struct {
	meta metav1.ObjectMeta
	raw  []byte
	// applied tells an object kro-agent applied (ownership.Applied) from
	// one that only carries its labels: only the first are the instance's
	// to prune and delete.
	applied bool
}

// heldLabels are the labels kept decoded: the instance index and the
// routing of events to the owning instance read them on every event, and
// the prune after every apply reads which node an object stands for.
var heldLabels = []string{
	v1alpha1.LabelInstanceID,
	v1alpha1.LabelInstanceName,
	v1alpha1.LabelInstanceNamespace,
	v1alpha1.LabelRGDName,
	v1alpha1.LabelNodeID,
}

// holdJSON makes a held object of one object's JSON as the API server
// sent it. Its bytes are only scanned: the top level and the metadata are
// split into their members, managedFields is cut out, and only the few
// strings the informer and the routing read are decoded. A watch event
// thus costs a scan of its JSON, not a tree of maps built and encoded again.
func holdJSON(data []byte) (*heldObject, error) {
	top, err := jsonscan.Members(data)
	if err != nil {
		return nil, fmt.Errorf("decoding an object: %w", err)
	}
	return holdMembers(data, top)
}

// holdMembers is holdJSON for an object already split into its members.
func holdMembers(data []byte, top []jsonscan.Member) (*heldObject, error) {
	h := &heldObject{}
	md, ok := last(top, "metadata")
	if !ok {
		h.raw = bytes.Clone(data)
		return h, nil
	}
	mdData := data[md.ValueStart:md.End]
	members, err := jsonscan.Members(mdData)
	if err != nil {
		return nil, fmt.Errorf("decoding the metadata of an object: %w", err)
	}
	managedFields := false
	for _, m := range members {
		v := mdData[m.ValueStart:m.End]
		switch m.Name {
		case "name":
			err = decodeString(v, &h.meta.Name)
		case "namespace":
			err = decodeString(v, &h.meta.Namespace)
		case "uid":
			err = decodeString(v, (*string)(&h.meta.UID))
		case "resourceVersion":
			err = decodeString(v, &h.meta.ResourceVersion)
		case "deletionTimestamp":
			h.meta.DeletionTimestamp, err = decodeTime(v)
		case "labels":
			err = keepOnly(v, heldLabels, &h.meta.Labels)
		case "annotations":
			// The informer reads one annotation: the bookmark that ends a
			// watch's initial events carries it.
			err = keepOnly(v, []string{metav1.InitialEventsAnnotationKey}, &h.meta.Annotations)
		case "managedFields":
			managedFields = true
			h.applied, err = appliedByAgent(v)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding metadata.%s: %w", m.Name, err)
		}
	}
	if !managedFields {
		h.raw = bytes.Clone(data)
		return h, nil
	}
	stripped := jsonscan.Without(mdData, members, func(m jsonscan.Member) bool { return m.Name == "managedFields" })
	raw := make([]byte, 0, md.ValueStart+len(stripped)+len(data)-md.End)
	raw = append(raw, data[:md.ValueStart]...)
	raw = append(raw, stripped...)
	h.raw = append(raw, data[md.End:]...)
	return h, nil
}

// appliedByAgent tells whether managedFields (their JSON) hold an entry of
// kro-agent's server-side apply. Only the manager and operation of the
// entries up to that one are read, not the fields they own: the API server
// lists applies first, and writes each entry's manager and operation first.
func appliedByAgent(managedFields []byte) (applied bool, err error) {
	if string(managedFields) == "null" {
		return false, nil
	}
	scanErr := jsonscan.EachElement(managedFields, func(entry []byte) bool {
		var manager, operation string
		if manager, operation, err = managerAndOperation(entry); err != nil {
			return false
		}
		applied = ownership.Applied(manager, operation)
		return !applied
	})
	return applied, errors.Join(scanErr, err)
}

// managerAndOperation decodes the manager and operation of one
// managedFields entry, reading the rest of it only when they are not its
// first two members.
func managerAndOperation(entry []byte) (manager, operation string, err error) {
	members, err := jsonscan.Leading(entry, 2)
	if err == nil && (len(members) < 2 || members[0].Name != "manager" || members[1].Name != "operation") {
		members, err = jsonscan.Members(entry)
	}
	for _, m := range members {
		switch {
		case err != nil:
			return "", "", err
		case m.Name == "manager":
			err = decodeString(entry[m.ValueStart:m.End], &manager)
		case m.Name == "operation":
			err = decodeString(entry[m.ValueStart:m.End], &operation)
		}
	}
	return manager, operation, err
}

// last returns the last member of that name, the one a decoder keeps.
func last(members []jsonscan.Member, name string) (jsonscan.Member, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].Name == name {
			return members[i], true
		}
	}
	return jsonscan.Member{}, false
}

func decodeString(v []byte, into *string) error {
	s, err := jsonscan.String(v)
	*into = s
	return err
}

// decodeTime decodes a timestamp of the API server's metadata; null is nil.
func decodeTime(v []byte) (*metav1.Time, error) {
	if string(v) == "null" {
		return nil, nil
	}
	var t metav1.Time
	if err := t.UnmarshalJSON(v); err != nil {
		return nil, err
	}
	return &t, nil
}

// keepOnly decodes the given members of a JSON object of strings into
// *out; *out stays nil when none of them is there.
func keepOnly(data []byte, keys []string, out *map[string]string) error {
	members, err := jsonscan.Members(data)
	if err != nil {
		return err
	}
	for _, m := range members {
		if !slices.Contains(keys, m.Name) {
			continue
		}
		v, err := jsonscan.String(data[m.ValueStart:m.End])
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if *out == nil {
			*out = make(map[string]string, len(keys))
		}
		(*out)[m.Name] = v
	}
	return nil
}

// heldAt returns the object an informer's store holds at key, or nil.
func heldAt(store cache.Store, key string) (*heldObject, error) {
	obj, exists, err := store.GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	return obj.(*heldObject), nil
}

// state is the instance's status.state, "" when it has none (or its JSON
// does not hold one as a string). Only the top level and the status are
// scanned: the metrics count every instance on each scrape.
func (h *heldObject) state() string {
	top, err := jsonscan.Members(h.raw)
	if err != nil {
		return ""
	}
	st, ok := last(top, "status")
	if !ok {
		return ""
	}
	status := h.raw[st.ValueStart:st.End]
	members, err := jsonscan.Members(status)
	if err != nil {
		return ""
	}
	v, ok := last(members, "state")
	if !ok {
		return ""
	}
	var state string
	if decodeString(status[v.ValueStart:v.End], &state) != nil {
		return ""
	}
	return state
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
	return &heldObject{meta: *h.meta.DeepCopy(), raw: h.raw, applied: h.applied}
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
