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
				c.observed(ref, false)
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
