package v1alpha1

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kubectl kro finds the resource a GraphResolved message names by reading
// back what ResourceError wrote.
func TestResourceNamedReadsBackAResourceError(t *testing.T) {
	err := &ResourceError{ID: "deploy", Err: errors.New("spec.replicas: ${schema.spec.n} is \"3\" (a string), but the field expects int")}
	if id, ok := ResourceNamed(err.Error()); !ok || id != "deploy" {
		t.Errorf("ResourceNamed(%q) = %q, %v; want deploy", err.Error(), id, ok)
	}
	if !errors.Is(err, err.Err) {
		t.Error("a ResourceError does not unwrap to its cause")
	}
	for _, message := range []string{"projecting status: port: no such key", "resource : x", "resources not ready", ""} {
		if id, ok := ResourceNamed(message); ok {
			t.Errorf("ResourceNamed(%q) = %q, want none", message, id)
		}
	}
}

// An instance whose graph is applied and ready has the conditions seed 001
// shows for kro, reasons and messages included: scripts and tests written
// against kro's instances read the same status here.
func TestReadyInstanceConditionsReadAsKros(t *testing.T) {
	var s InstanceStatus
	s.Manage(InstanceConditions, 1)
	s.MarkManaged()
	s.MarkGraphResolved()
	s.MarkResourcesReady()
	s.ComputeState(false, false)
	want := map[string][3]string{
		ConditionInstanceManaged: {"True", "Managed", "instance is properly managed with finalizers and labels"},
		ConditionGraphResolved:   {"True", "Resolved", "runtime graph created and all resources resolved"},
		ConditionResourcesReady:  {"True", "AllResourcesReady", "all resources are created and ready"},
		ConditionReady:           {"True", "Ready", ""},
	}
	if len(s.Conditions) != len(want) {
		t.Fatalf("conditions = %+v, want %d", s.Conditions, len(want))
	}
	for _, c := range s.Conditions {
		if got := [3]string{string(c.Status), c.Reason, c.Message}; got != want[c.Type] || c.ObservedGeneration != 1 {
			t.Errorf("%s = %q (generation %d), want %q (generation 1)", c.Type, got, c.ObservedGeneration, want[c.Type])
		}
	}
	if s.State != InstanceActive {
		t.Errorf("state = %s, want %s", s.State, InstanceActive)
	}
}

// A declared condition carries the RGD's reason only with the status its
// expression gave; one that could not be evaluated says why in its own.
func TestCustomConditionReasons(t *testing.T) {
	var s InstanceStatus
	s.Manage(InstanceConditions, 1)
	reasonOf := func(condType string) string {
		for _, c := range s.Conditions {
			if c.Type == condType {
				return string(c.Status) + " " + c.Reason
			}
		}
		return "none"
	}
	s.MarkCustomConditionUnknown("Crowded", true, "cm is not observed: input not available yet")
	if got := reasonOf("Crowded"); got != "Unknown WaitingForDependency" {
		t.Errorf("waiting for its input: %s", got)
	}
	s.MarkCustomConditionUnknown("Crowded", false, "status ${int(cm.data.count) > 3}: type conversion error")
	if got := reasonOf("Crowded"); got != "Unknown EvaluationFailed" {
		t.Errorf("failed: %s", got)
	}
	s.PropagateCustomCondition("Crowded", true, "TooMany", "count is 5")
	if got := reasonOf("Crowded"); got != "True TooMany" {
		t.Errorf("evaluated: %s", got)
	}
}

// A released instance's conditions no longer claim what nobody observes:
// everything kro-agent evaluated becomes Unknown and says why, while
// Ready is False over InstanceManaged and Placed keeps where the
// resources are.
func TestReleasedInstanceClaimsNothingOfItsResources(t *testing.T) {
	var s InstanceStatus
	s.Manage(InstanceConditions, 1)
	s.MarkManaged()
	s.MarkGraphResolved()
	s.MarkResourcesReady()
	s.MarkPlaced("east-1", "us-east")
	s.PropagateCustomCondition("DatabaseReady", true, "Up", "accepting connections")
	s.ComputeState(false, false)

	// As release does: the status read back, under the built-in set.
	released := DecodeInstanceStatus(map[string]any{"conditions": toUnstructured(t, s.Conditions)})
	released.Manage(InstanceConditions, 1)
	released.MarkReleased("databases")
	released.ComputeState(false, false)
	want := map[string][2]string{
		ConditionInstanceManaged: {"False", ReasonReleased},
		ConditionGraphResolved:   {"Unknown", ReasonReleased},
		ConditionResourcesReady:  {"Unknown", ReasonReleased},
		ConditionPlaced:          {"True", ReasonPlaced},
		"DatabaseReady":          {"Unknown", ReasonReleased},
		ConditionReady:           {"False", ReasonReleased},
	}
	if len(released.Conditions) != len(want) {
		t.Fatalf("conditions = %+v, want %d", released.Conditions, len(want))
	}
	for _, c := range released.Conditions {
		if got := [2]string{string(c.Status), c.Reason}; got != want[c.Type] {
			t.Errorf("%s = %q (%s), want %q", c.Type, got, c.Message, want[c.Type])
		}
		if c.Reason == ReasonReleased && !strings.Contains(c.Message, "ResourceGraphDefinition databases was deleted") {
			t.Errorf("%s does not say why: %s", c.Type, c.Message)
		}
	}
	if released.State != InstanceFailed {
		t.Errorf("state = %s, want %s", released.State, InstanceFailed)
	}
}

func toUnstructured(t *testing.T, conds []metav1.Condition) []any {
	t.Helper()
	out := make([]any, len(conds))
	for i := range conds {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = u
	}
	return out
}
