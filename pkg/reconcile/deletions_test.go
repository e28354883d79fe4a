package reconcile

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestDeletionsArePendingUntilSeen(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	d := &deletions{clock: clock}
	if d.pending("a") {
		t.Fatal("an object never deleted is pending")
	}
	d.deleted("a")
	d.deleted("b")
	if !d.pending("a") || !d.pending("b") {
		t.Fatal("deleted objects are not pending")
	}
	d.seen("a")
	if d.pending("a") {
		t.Error("an object the informer saw go is still pending")
	}
	if !d.pending("b") {
		t.Error("seeing one object go forgot another")
	}
}

func TestDeletionsNeverSeenAreForgotten(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	d := &deletions{clock: clock}
	d.deleted("stopped")
	clock.SetTime(clock.Now().Add(deletionTTL + time.Second))
	if d.pending("stopped") {
		t.Error("a deletion no informer showed is pending past its time")
	}
	// The next deletion sweeps what is past its time, so the record of
	// an informer stopped before it delivered does not stay.
	d.deleted("next")
	if _, ok := d.at[types.UID("stopped")]; ok || len(d.at) != 1 {
		t.Errorf("after a sweep the record holds %v", d.at)
	}
}
