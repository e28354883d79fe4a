package reconcile

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Each kind is counted once per graph that manages it, however often a
// graph is served again, and an informer that has not listed its kind's
// objects is never retired: what it would find is not known. (Retiring a
// listed, empty one is shown against a cluster: TestKindsNoGraphManagesAreNotWatched.)
func TestManagedKindsAreCountedByGraph(t *testing.T) {
	w := unreachableInformers(t)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cogs := schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "cogs"}
	counts := func(want map[schema.GroupVersionResource]int) {
		t.Helper()
		w.mu.Lock()
		defer w.mu.Unlock()
		if !maps.Equal(w.managed, want) {
			t.Errorf("kinds managed %v, want %v", w.managed, want)
		}
	}

	w.use("a", []schema.GroupVersionResource{configMaps, cogs})
	w.use("a", []schema.GroupVersionResource{configMaps, cogs})
	w.use("b", []schema.GroupVersionResource{configMaps})
	counts(map[schema.GroupVersionResource]int{configMaps: 2, cogs: 1})
	w.use("a", []schema.GroupVersionResource{configMaps})
	counts(map[schema.GroupVersionResource]int{configMaps: 2})
	w.forget("b")
	w.forget("b")
	counts(map[schema.GroupVersionResource]int{configMaps: 1})
	w.forget("a")
	counts(map[schema.GroupVersionResource]int{})
	for _, gvr := range []schema.GroupVersionResource{configMaps, cogs} {
		if _, running := w.informer(gvr); !running {
			t.Errorf("the informer of %s, which has not listed its objects, was stopped", gvr)
		}
	}
}

// unreachableInformers are managed informers of a cluster nothing listens
// for: they never list, and retry until the test ends and stops them.
func unreachableInformers(t *testing.T) *managedInformers {
	t.Helper()
	client, err := newHeldClient(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	w := newManagedInformers(client, func(schema.GroupVersionResource, any, any, bool) {})
	t.Cleanup(w.stopAll)
	return w
}
