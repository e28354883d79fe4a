package reconcile

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
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

// A check that turns Ready records one Event saying so, and what may be
// placed there: nothing new on a paused Cluster. One that leaves Ready as
// it was records none.
func TestReadinessEventsSayWhatMayBePlaced(t *testing.T) {
	ready := agentv1.ClusterStatus{ServerVersion: "v1.36.3",
		Conditions: []metav1.Condition{{Type: agentv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}}}
	notReady := agentv1.ClusterStatus{
		Conditions: []metav1.Condition{{Type: agentv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Unreachable", Message: "connection refused"}}}
	for _, tc := range []struct {
		paused bool
		want   string
	}{
		{false, `Normal Ready the API server (version v1.36.3) answers, and instances of region "eu-west" can be placed here`},
		{true, "Normal Ready the API server (version v1.36.3) answers, and it is paused (spec.paused), so no new instance is placed here"},
	} {
		recorder := events.NewFakeRecorder(2)
		r := &ClusterReconciler{Recorder: recorder}
		c := &agentv1.Cluster{Spec: agentv1.ClusterSpec{Region: "eu-west", Paused: tc.paused}, Status: ready}
		r.reportReadiness(c, &notReady)
		r.reportReadiness(c, &ready)
		close(recorder.Events)
		var got []string
		for e := range recorder.Events {
			got = append(got, e)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("paused %v: Events %q, want [%q]", tc.paused, got, tc.want)
		}
	}
}
