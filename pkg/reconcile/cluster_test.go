package reconcile

import (
	"testing"
	"time"
)

// A Cluster found not Ready is checked again after 5 s, then twice as long
// each time, never later than the interval; Ready, after the interval.
func TestNotReadyClustersAreCheckedSoonerBackingOff(t *testing.T) {
	r := &ClusterReconciler{Interval: time.Minute}
	var got []time.Duration
	for range 6 {
		got = append(got, r.nextCheck("down", false))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("checks of a cluster that stays down spaced %v, want %v", got, want)
		}
	}
	if d := r.nextCheck("down", true); d != time.Minute {
		t.Errorf("once Ready: next check after %v, want the interval", d)
	}
	if d := r.nextCheck("down", false); d != 5*time.Second {
		t.Errorf("down again after being Ready: next check after %v, want 5s", d)
	}
	if d := (&ClusterReconciler{Interval: 2 * time.Second}).nextCheck("c", false); d != 2*time.Second {
		t.Errorf("with an interval shorter than the first recheck: %v, want the interval", d)
	}
}
