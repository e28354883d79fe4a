package reconcile

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestContestWaitsLongerEachRestoration(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var c contest
	var waits []time.Duration
	for range 10 {
		wait := c.wait(now)
		waits = append(waits, wait)
		now = now.Add(wait) // the restoration happens when its turn comes
		c.repaired(now)
		now = now.Add(100 * time.Millisecond) // and is undone at once
	}
	want := []time.Duration{0, 0, 0, 5*time.Second - 100*time.Millisecond, 10*time.Second - 100*time.Millisecond,
		20*time.Second - 100*time.Millisecond, 40*time.Second - 100*time.Millisecond, 80*time.Second - 100*time.Millisecond,
		160*time.Second - 100*time.Millisecond, 5*time.Minute - 100*time.Millisecond}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("restoration %d waits %s, want %s (all: %v)", i+1, waits[i], want[i], waits)
		}
	}
	if got := contestWait(1000); got != maxContestWait {
		t.Errorf("contestWait(1000) = %s, want the cap %s", got, maxContestWait)
	}
}

func TestContestStartsOverWhenLeftAlone(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var c contest
	for range 4 {
		c.repaired(now)
	}
	if wait := c.wait(now.Add(time.Second)); wait != 9*time.Second {
		t.Fatalf("wait after 4 restorations in a row = %s, want 9s", wait)
	}
	// Left alone for its wait and a quiet minute: a hand edit now is
	// reverted at once again.
	if wait := c.wait(now.Add(10*time.Second + contestQuiet + time.Second)); wait != 0 || c.repairs != 0 {
		t.Errorf("after a quiet spell: wait %s, repairs %d; want 0, 0", wait, c.repairs)
	}
}

// An object restored after waiting its turn stays contested until it has
// been left alone for a while, so the instance does not turn ACTIVE and
// back at every round; the free restorations never make it so.
func TestContestSettlesOnlyAfterAQuietSpell(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := newAppliedCache()
	c.put("inst", testRef, [32]byte{1}, "1", nil, nil)
	for range freeRepairs {
		c.repaired(testRef, now)
		if err := c.unsettled(testRef, now.Add(time.Second)); err != nil {
			t.Fatalf("contested after free restorations only: %v", err)
		}
	}
	c.repaired(testRef, now) // the first one that waited
	err := c.unsettled(testRef, now.Add(10*time.Second))
	var contested *contestedError
	if !errors.As(err, &contested) || !contested.restored || contested.retryAfter != contestQuiet-10*time.Second {
		t.Fatalf("10s after a restoration that waited: %v; want contested, settling in %s", err, contestQuiet-10*time.Second)
	}
	for _, part := range []string{"last 3 restorations", "restored it again", "stayed so for 1m0s"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("message %q lacks %q", err, part)
		}
	}
	if err := c.unsettled(testRef, now.Add(contestQuiet)); err != nil {
		t.Errorf("still contested after a quiet minute: %v", err)
	}
}

var testRef = objectRef{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "ns", Name: "d"}

// The object as the deployment controller leaves it when an RGD sets the
// revision annotation that controller keeps: its status update owns it.
func TestContestedNamesTheFieldAndItsWriter(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "f1", "annotations": map[string]any{"deployment.kubernetes.io/revision": "1"}},
		"spec":     map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
	}
	desired := map[string]any{
		"metadata": map[string]any{"name": "f1", "annotations": map[string]any{"deployment.kubernetes.io/revision": "x"}},
		"spec":     map[string]any{"replicas": 1, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
	}
	path, ok := firstDifference(live, desired, nil)
	if !ok || pathString(path) != "metadata.annotations[deployment.kubernetes.io/revision]" {
		t.Fatalf("firstDifference = %v, %v", path, ok)
	}
	ts := func(s int) *metav1.Time { v := metav1.NewTime(time.Unix(int64(s), 0)); return &v }
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "kro-agent", Operation: metav1.ManagedFieldsOperationApply, Time: ts(30),
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: ts(10),
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:x":{}}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: ts(20),
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}},"f:status":{}}`)},
	}
	if by := ownerOf(entries, path); by != "kube-controller-manager (status)" {
		t.Errorf("ownerOf = %q, want the deployment controller's status writes", by)
	}
	msg := (&contestedError{repairs: 4, field: pathString(path), by: ownerOf(entries, path), retryAfter: 10 * time.Second}).Error()
	for _, part := range []string{`metadata.annotations[deployment.kubernetes.io/revision] was changed by field manager "kube-controller-manager (status)"`, "last 4 restorations", "again in 10s"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	if _, ok := firstDifference(live, live, nil); ok {
		t.Errorf("an object differs from itself")
	}
}

// A restoration counts only when it changed a field the RGD sets: applying
// a quantity the API server keeps in its own form changes nothing.
func TestSameWhereComparesOnlyTheFieldsSet(t *testing.T) {
	desired := map[string]any{"spec": map[string]any{"limits": map[string]any{"cpu": "1000m"}}, "metadata": map[string]any{"name": "d"}}
	before := map[string]any{"spec": map[string]any{"limits": map[string]any{"cpu": "1"}}, "metadata": map[string]any{"name": "d", "resourceVersion": "7"}, "status": map[string]any{"ready": int64(1)}}
	after := map[string]any{"spec": map[string]any{"limits": map[string]any{"cpu": "1"}}, "metadata": map[string]any{"name": "d", "resourceVersion": "9"}, "status": map[string]any{"ready": int64(2)}}
	if !sameWhere(before, after, desired) {
		t.Errorf("an apply that left every field the RGD sets as it was counts as a restoration")
	}
	restored := map[string]any{"spec": map[string]any{"limits": map[string]any{"cpu": "2"}}, "metadata": map[string]any{"name": "d"}}
	if sameWhere(before, restored, desired) {
		t.Errorf("an apply that changed a field the RGD sets does not count")
	}
}
