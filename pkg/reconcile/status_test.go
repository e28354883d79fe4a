package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStatusMemoEchoOfOwnWrite(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": "u-1", "resourceVersion": "10"}}}
	var memo statusMemo
	memo.wrote(inst, map[string]any{"state": "IN_PROGRESS"}, "11")

	if memo.echoed("u-1", "12") {
		t.Error("an update past our write was taken for its echo")
	}
	if memo.echoed("u-2", "11") {
		t.Error("another instance's update was taken for the echo")
	}
	// A cache still at the version the write was based on reads the status written.
	stale := inst.DeepCopy()
	memo.catchUp(stale)
	if got, _, _ := unstructured.NestedString(stale.Object, "status", "state"); got != "IN_PROGRESS" {
		t.Errorf("stale cache reads state %q, want the written IN_PROGRESS", got)
	}
	if !memo.echoed("u-1", "11") {
		t.Fatal("the update at the version our write produced is not its echo")
	}
	// Once echoed, the write is forgotten: the memo holds writes in flight only.
	if memo.echoed("u-1", "11") {
		t.Error("an echo was recognised twice")
	}
	again := inst.DeepCopy()
	memo.catchUp(again)
	if _, found := again.Object["status"]; found {
		t.Error("a forgotten write still replaces the cached status")
	}
}
