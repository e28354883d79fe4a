package reconcile

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestKindNotServedRechecksAnRGDAtMostOnceAMinute(t *testing.T) {
	r := &RGDReconciler{
		compiled:  map[string]compiledGraph{"gizmoapps": {generation: 1}, "webapps": {generation: 3}},
		rechecked: map[string]time.Time{},
		recheck:   make(chan event.GenericEvent, 4),
	}
	queued := func() []string {
		var names []string
		for len(r.recheck) > 0 {
			names = append(names, (<-r.recheck).Object.GetName())
		}
		return names
	}

	r.kindNotServed("gizmoapps")
	if got := queued(); len(got) != 1 || got[0] != "gizmoapps" {
		t.Fatalf("queued %v, want gizmoapps", got)
	}
	if _, ok := r.compiled["gizmoapps"]; ok {
		t.Error("the compiled graph of gizmoapps was kept: the recheck would find it and change nothing")
	}
	if _, ok := r.compiled["webapps"]; !ok {
		t.Error("the compiled graph of another RGD was dropped")
	}

	// Every instance of the kind fails the same way: one recheck is enough,
	// and if the kind is served after all, the failures are no compile loop.
	r.compiled["gizmoapps"] = compiledGraph{generation: 1}
	r.kindNotServed("gizmoapps")
	if got := queued(); len(got) != 0 {
		t.Errorf("queued %v again within a minute", got)
	}
	if _, ok := r.compiled["gizmoapps"]; !ok {
		t.Error("the compiled graph was dropped again within a minute")
	}

	r.rechecked["gizmoapps"] = time.Now().Add(-recheckEvery)
	r.kindNotServed("gizmoapps")
	if got := queued(); len(got) != 1 {
		t.Errorf("queued %v a minute later, want gizmoapps", got)
	}
}
