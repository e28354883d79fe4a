package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRecordApplyKeepsResultOnlyUntilTheInformerHasIt(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm"}
	out := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cm", "resourceVersion": "7"}}}
	notCached := func(objectRef) bool { return false }
	isCached := func(objectRef) bool { return true }

	for _, tc := range []struct {
		name        string
		created     bool
		cached      func(objectRef) bool
		eventAfter  bool
		wantPending bool
	}{
		{name: "created, informer not there yet", created: true, cached: notCached, wantPending: true},
		{name: "created, informer event after the record", created: true, cached: notCached, eventAfter: true},
		{name: "created, informer stored it before the record", created: true, cached: isCached},
		{name: "updated", created: false, cached: notCached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newAppliedCache()
			c.recordApply("inst", ref, [32]byte{1}, out, tc.created, tc.cached)
			if tc.eventAfter {
				c.observed(ref, false, "")
			}
			r, ok := c.get(ref)
			if !ok {
				t.Fatal("no record after a successful apply")
			}
			if r.resourceVersion != "7" {
				t.Errorf("resourceVersion = %q, want 7", r.resourceVersion)
			}
			if got := r.pending != nil; got != tc.wantPending {
				t.Errorf("pending kept = %v, want %v", got, tc.wantPending)
			}
		})
	}
}

func TestEchoesOnlyOurOwnVersion(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm"}
	other := objectRef{GVR: ref.GVR, Namespace: "ns", Name: "other"}
	out := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cm", "resourceVersion": "7"}}}
	c := newAppliedCache()
	if c.observed(ref, false, "7") {
		t.Error("an object never applied echoes")
	}
	c.recordApply("inst", ref, [32]byte{1}, out, true, func(objectRef) bool { return false })
	for _, tc := range []struct {
		ref  objectRef
		rv   string
		want bool
	}{
		{ref, "7", true},  // the informer catching up with our apply
		{ref, "8", false}, // someone else's write since (a status update, a hand edit)
		{ref, "", false},
		{other, "7", false},
	} {
		if got := c.observed(tc.ref, false, tc.rv); got != tc.want {
			t.Errorf("observed(%s, %q) echoes = %v, want %v", tc.ref.Name, tc.rv, got, tc.want)
		}
	}
	// A deletion is never an echo, and ends the record.
	if c.observed(ref, true, "7") {
		t.Error("a deletion was taken for an echo")
	}
	if _, ok := c.get(ref); ok {
		t.Error("the record outlived the object's deletion")
	}
}
