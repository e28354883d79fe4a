package reconcile

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// publishing resolves kinds to the schemas it holds now.
type publishing map[schema.GroupVersionKind]*kinds.Info

func (p publishing) Resolve(gvk schema.GroupVersionKind) (*kinds.Info, error) {
	if info, ok := p[gvk]; ok {
		return info, nil
	}
	return nil, kinds.ErrNotFound
}

// A graph whose CRD changed is compiled again once the CRD's new schema is
// published, or after schemaPublishWait if none comes; a change to a CRD
// of kinds it does not use leaves it be.
func TestSchemaChangesWaitForTheNewSchema(t *testing.T) {
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	old := &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: &spec.Schema{}}
	cluster := publishing{gizmo: old, configMap: {GVK: configMap, Resource: "configmaps", Schema: &spec.Schema{}}}
	s := newSchemaChanges()
	t0 := time.Now()
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old, configMap: cluster[configMap]}, t0)
	s.compiled("other", map[schema.GroupVersionKind]*kinds.Info{configMap: cluster[configMap]}, t0)

	if stale, _ := s.pending("app", cluster, t0); stale {
		t.Fatal("stale before any CRD changed")
	}
	if rgds := s.crdChanged(schema.GroupResource{Group: "example.net", Resource: "widgets"}, t0); len(rgds) != 0 {
		t.Errorf("a CRD no graph uses changed, and %v are told", rgds)
	}
	if rgds := s.crdChanged(schema.GroupResource{Group: "example.net", Resource: "gizmos"}, t0); !slices.Equal(rgds, []string{"app"}) {
		t.Errorf("gizmos changed, and %v are told, want [app]", rgds)
	}
	if stale, wait := s.pending("app", cluster, t0.Add(time.Second)); !stale || wait == 0 {
		t.Errorf("before the new schema is published: stale %v, wait %v; want to wait", stale, wait)
	}
	if stale, wait := s.pending("app", cluster, t0.Add(schemaPublishWait)); !stale || wait != 0 {
		t.Errorf("after schemaPublishWait without a new schema: stale %v, wait %v; want to compile now", stale, wait)
	}
	// A compile before the new schema is published (another change of
	// the RGD's) leaves the graph waiting for it; a resolver that forgot
	// its cache reads the old schema again as a new one.
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: {GVK: gizmo, Resource: "gizmos", Schema: &spec.Schema{}}}, t0.Add(time.Second))
	if stale, wait := s.pending("app", cluster, t0.Add(time.Second)); !stale || wait == 0 {
		t.Errorf("compiled again before the new schema is published: stale %v, wait %v; want to wait", stale, wait)
	}
	published := &spec.Schema{}
	published.Type = spec.StringOrArray{"object"}
	cluster[gizmo] = &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: published}
	if stale, wait := s.pending("app", cluster, t0.Add(time.Second)); !stale || wait != 0 {
		t.Errorf("with the new schema published: stale %v, wait %v; want to compile now", stale, wait)
	}
	if stale, _ := s.pending("other", cluster, t0.Add(time.Second)); stale {
		t.Error("a graph not using gizmos is stale")
	}

	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: cluster[gizmo]}, t0.Add(2*time.Second))
	if stale, _ := s.pending("app", cluster, t0.Add(2*time.Second)); stale {
		t.Error("stale after being compiled against the new schema")
	}
	s.forget("app")
	if rgds := s.crdChanged(schema.GroupResource{Group: "example.net", Resource: "gizmos"}, t0); len(rgds) != 0 {
		t.Errorf("a forgotten RGD is told of a change: %v", rgds)
	}
}

// A graph compiled after schemaPublishWait against the schema of before
// (an API server slow to publish) is compiled again when the new schema
// comes, until schemaPublishGiveUp.
func TestSchemaPublishedLateIsCompiledAgainst(t *testing.T) {
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	gizmos := schema.GroupResource{Group: "example.net", Resource: "gizmos"}
	old := &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: &spec.Schema{}}
	cluster := publishing{gizmo: old}
	s := newSchemaChanges()
	t0 := time.Now()
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old}, t0)
	s.crdChanged(gizmos, t0)

	late := t0.Add(schemaPublishWait)
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old}, late)
	if stale, wait := s.pending("app", cluster, late.Add(time.Second)); stale || wait != 0 {
		t.Errorf("compiled after the wait, the new schema not published: stale %v, wait %v; want neither", stale, wait)
	}
	if !s.awaiting("app", late.Add(time.Second)) {
		t.Error("the new schema is no longer looked for after a compile against the old one")
	}
	published := &spec.Schema{}
	published.Type = spec.StringOrArray{"object"}
	cluster[gizmo] = &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: published}
	if stale, wait := s.pending("app", cluster, late.Add(time.Minute)); !stale || wait != 0 {
		t.Errorf("the new schema published late: stale %v, wait %v; want to compile now", stale, wait)
	}
	if stale, _ := s.pending("app", cluster, t0.Add(schemaPublishGiveUp)); stale {
		t.Error("still stale after schemaPublishGiveUp")
	}
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: cluster[gizmo]}, late.Add(time.Minute))
	if s.awaiting("app", late.Add(time.Minute)) {
		t.Error("awaiting after being compiled against the new schema")
	}
}

// awaitPublish tells of a schema published after the graph was compiled
// against the one of before, and stops once it is compiled against it.
func TestAwaitPublishTellsOfALateSchema(t *testing.T) {
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	old := &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: &spec.Schema{}}
	var mu sync.Mutex
	cluster := publishing{gizmo: old}
	resolver := func() kinds.Resolver {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(cluster)
	}
	s := newSchemaChanges()
	long := time.Now().Add(-schemaPublishWait) // the change is older than the wait
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old}, long.Add(-time.Second))
	s.crdChanged(schema.GroupResource{Group: "example.net", Resource: "gizmos"}, long)
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old}, time.Now())

	told := make(chan struct{}, 4)
	s.awaitPublish("app", resolver, func() { told <- struct{}{} })
	select {
	case <-told:
		t.Fatal("told before the new schema was published")
	case <-time.After(2 * schemaPollEvery):
	}
	published := &spec.Schema{}
	published.Type = spec.StringOrArray{"object"}
	mu.Lock()
	cluster[gizmo] = &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: published}
	mu.Unlock()
	select {
	case <-told:
	case <-time.After(5 * schemaPollEvery):
		t.Fatal("not told of the new schema")
	}
	s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: cluster[gizmo]}, time.Now())
	deadline := time.Now().Add(5 * schemaPollEvery)
	for {
		s.mu.Lock()
		polling := s.polling["app"]
		s.mu.Unlock()
		if !polling {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still polling after the graph was compiled against the new schema")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The poller reads an RGD's changes (pending) while a worker's compile
// (compiled) drops the ones it compiled against, each in its own
// goroutine: the race detector, which make unit runs under, reports it
// unless pending reads a copy. Found in an e2e run of TestPlacement.
func TestPendingReadsTheChangesWhileACompileDropsThem(t *testing.T) {
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	old := &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: &spec.Schema{}}
	published := &spec.Schema{}
	published.Type = spec.StringOrArray{"object"}
	current := &kinds.Info{GVK: gizmo, Resource: "gizmos", Schema: published}
	t0 := time.Now()
	for range 20 {
		s := newSchemaChanges()
		s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: old}, t0)
		s.crdChanged(schema.GroupResource{Group: "example.net", Resource: "gizmos"}, t0)
		var wg sync.WaitGroup
		wg.Go(func() { s.pending("app", publishing{gizmo: current}, t0.Add(time.Second)) })
		wg.Go(func() {
			s.compiled("app", map[schema.GroupVersionKind]*kinds.Info{gizmo: current}, t0.Add(time.Second))
		})
		wg.Wait()
	}
}
