// Package takeover hands kro-agent the fields that upstream kro's field
// manager holds on an object kro applied, when kro-agent serves an instance
// kro served before. Server-side apply removes a field its applier stops
// sending only when no other manager holds it: without the hand-over, every
// field kro applied (its own labels, a key a template no longer sets) would
// stay on the object for good.
package takeover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// KroFieldManager is the field manager of upstream kro's applies of the
// resources an instance manages, the same in every release since kro
// applies them server-side.
const KroFieldManager = "kro.run/applyset"

// Held reports whether KroFieldManager holds fields of obj, an object as
// JSON decodes it, reading its managedFields without converting them: the
// agent asks it of every apply's result, and nearly every answer is no.
func Held(obj map[string]any) bool {
	metadata, _ := obj["metadata"].(map[string]any)
	entries, _ := metadata["managedFields"].([]any)
	return slices.ContainsFunc(entries, func(e any) bool {
		entry, _ := e.(map[string]any)
		return entry["manager"] == KroFieldManager
	})
}

// Patch returns a JSON patch that moves the fields KroFieldManager applied
// to obj into manager's apply entry (which it becomes when manager has
// none), leaving every other manager's entry as it is. It replaces the
// resourceVersion too, so that the write fails with a conflict if obj
// changed since it was read. It returns nil when obj holds no field of
// kro's to take, or when kro applied another version of the kind than
// manager did.
func Patch(obj metav1.Object, manager string) ([]byte, error) {
	entries := obj.GetManagedFields()
	kro := slices.IndexFunc(entries, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == KroFieldManager && isApply(e) })
	if kro < 0 {
		return nil, nil
	}
	ours := slices.IndexFunc(entries, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == manager && isApply(e) })
	if ours >= 0 && entries[ours].APIVersion != entries[kro].APIVersion {
		// Field paths of two versions of a kind need not name the same
		// fields, and a manager has one apply entry: left to kro.
		return nil, nil
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for i, e := range entries {
		switch i {
		case kro:
			if ours >= 0 {
				continue // merged into ours
			}
			e.Manager = manager
		case ours:
			merged, err := union(e, entries[kro])
			if err != nil {
				return nil, err
			}
			e.FieldsV1 = merged
		}
		out = append(out, e)
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": out},
		// "replace", not "test": a changed object then fails in etcd with a
		// conflict, which is retried, rather than as an invalid patch.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// isApply reports whether e records server-side applies to the object
// itself (not to a subresource such as status).
func isApply(e metav1.ManagedFieldsEntry) bool {
	return e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
}

// union is the set of fields either entry holds.
func union(a, b metav1.ManagedFieldsEntry) (*metav1.FieldsV1, error) {
	sa, err := fieldSet(a)
	if err != nil {
		return nil, err
	}
	sb, err := fieldSet(b)
	if err != nil {
		return nil, err
	}
	raw, err := sa.Union(sb).ToJSON()
	if err != nil {
		return nil, err
	}
	return metav1.NewFieldsV1(string(raw)), nil
}

func fieldSet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
		return nil, fmt.Errorf("reading the fields %s holds: %w", e.Manager, err)
	}
	return s, nil
}
