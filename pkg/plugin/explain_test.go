package plugin

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

func TestExplainSaysHowCustomConditionsBearOnReady(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "g", "generation": int64(2)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "NotReady", "observedGeneration": int64(2)},
			map[string]any{"type": "Placed", "status": "True", "reason": "StaysPlaced", "observedGeneration": int64(2)},
			map[string]any{"type": "GateOpen", "status": "False", "reason": "Deleting", "observedGeneration": int64(2)},
			map[string]any{"type": "AuditPending", "status": "True", "reason": "", "observedGeneration": int64(2)},
			map[string]any{"type": "Pressure", "status": "False", "reason": "", "observedGeneration": int64(1)},
			map[string]any{"type": "Serving", "status": "True", "reason": "ResourcesTrue", "observedGeneration": int64(2)},
			map[string]any{"type": "Crowded", "status": "Unknown", "reason": "EvaluationFailed", "observedGeneration": int64(2)},
			map[string]any{"type": "Later", "status": "Unknown", "reason": "WaitingForDependency", "observedGeneration": int64(2)},
		}},
	}}
	custom := map[string]graph.ConditionTraits{
		"GateOpen":     {CountsTowardReady: true, Polarity: graph.PolarityPositive},
		"AuditPending": {CountsTowardReady: false, Polarity: graph.PolarityNegative},
		"Pressure":     {CountsTowardReady: true, Polarity: graph.PolarityNegative},
		"Crowded":      {CountsTowardReady: true, Polarity: graph.PolarityNegative},
	}
	want := map[string]string{
		"Ready":        "the only condition automation needs to watch",
		"Placed":       "a Ready cluster of its region",
		"GateOpen":     "declared by the RGD; counts toward Ready",
		"AuditPending": "declared by the RGD with negative polarity: True is bad; does not count toward Ready",
		"Pressure":     "declared by the RGD with negative polarity: True is bad; counts toward Ready: while it is True, Ready is not True",
		"Serving":      "computed by an expression of the RGD (runtime.newCondition); does not count toward Ready",
		"Crowded":      "declared by the RGD with negative polarity",
		"Later":        "computed by an expression of the RGD",
	}
	got := explainConditions("Gated/g", inst, custom, lagOf(inst, notCaughtUp), time.Now())
	if len(got) != len(want) {
		t.Fatalf("%d conditions explained, want %d: %+v", len(got), len(want), got)
	}
	for _, c := range got {
		if !strings.Contains(c.Meaning, want[c.Type]) {
			t.Errorf("%s means %q; want it to say %q", c.Type, c.Meaning, want[c.Type])
		}
		// Built-in reasons are explained on built-in conditions, True
		// ones too; a custom condition's reason is its author's, but for
		// the one kro-agent gives a declared condition it could not
		// evaluate.
		if hasMeaning := c.ReasonMeaning != ""; hasMeaning != (c.Type == "Placed" || c.Type == "Crowded") {
			t.Errorf("%s (reason %s) has the reason meaning %q", c.Type, c.Reason, c.ReasonMeaning)
		}
		if c.Stale != (c.Type == "Pressure") {
			t.Errorf("%s: stale = %v", c.Type, c.Stale)
		}
		if c.Stale && c.StaleReason != notCaughtUp {
			t.Errorf("%s is stale because %q", c.Type, c.StaleReason)
		}
	}
	// The RGD's own conditions have no custom ones.
	if m := meaningOf("Serving", nil); m != "not a condition kro-agent sets" {
		t.Errorf("an RGD's unknown condition means %q", m)
	}
}

func TestConditionsOfASuspendedInstanceAreStaleBecauseItIsSuspended(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "demo", "generation": int64(3),
			"annotations": map[string]any{"kro.run/reconcile": "suspended"}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "GraphResolved", "status": "True", "reason": "Resolved", "observedGeneration": int64(2)},
			map[string]any{"type": "Ready", "status": "Unknown", "reason": "Suspended", "observedGeneration": int64(3)},
		}},
	}}
	var out strings.Builder
	printExplained(&out, explainConditions("WebApp/demo", inst, nil, lagOf(inst, notCaughtUp), time.Now()), palette{})
	for _, want := range []string{
		"GraphResolved=True  reason Resolved, since -" +
			" (STALE: observed generation 2, object is at 3; the instance is suspended (kro.run/reconcile=suspended): kro-agent leaves its conditions as they were until the annotation is removed)",
		"Ready=Unknown  reason Suspended, since -\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain-conditions printed\n%s\nwant it to say %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), notCaughtUp) {
		t.Errorf("explain-conditions says of a suspended instance that %s:\n%s", notCaughtUp, out.String())
	}
}

// Marking an instance deleted moves its generation on; once Ready tells
// of the deletion, the conditions a deletion leaves as they were lag for
// that, not because the agent is behind. Before that, it is behind.
func TestConditionsOfAnInstanceBeingDeletedLagForTheDeletion(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "demo", "generation": int64(2), "deletionTimestamp": "2026-12-03T10:00:00Z"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "GraphResolved", "status": "True", "reason": "Resolved", "observedGeneration": int64(1)},
			map[string]any{"type": "Ready", "status": "Unknown", "reason": "Deleting", "observedGeneration": int64(2)},
		}},
	}}
	var out strings.Builder
	printExplained(&out, explainConditions("WebApp/demo", inst, nil, lagOf(inst, notCaughtUp), time.Now()), palette{})
	if want := "GraphResolved=True  reason Resolved, since - (STALE: observed generation 1, object is at 2; " + deleting + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("explain-conditions printed\n%s\nwant it to say %q", out.String(), want)
	}
	if strings.Contains(out.String(), notCaughtUp) {
		t.Errorf("explain-conditions says of an instance being deleted that %s:\n%s", notCaughtUp, out.String())
	}
	// The deletion not processed yet: the agent is behind.
	conds, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	conds[1].(map[string]any)["observedGeneration"] = int64(1)
	_ = unstructured.SetNestedSlice(inst.Object, conds, "status", "conditions")
	if lag := lagOf(inst, notCaughtUp); lag != notCaughtUp {
		t.Errorf("a deletion the agent has not processed lags because %q", lag)
	}
}

// For programs, -o json|yaml gives when a condition last changed as a time,
// beside how long ago it was for people; a condition with none has neither.
func TestExplainedConditionsCarryTheirTransitionTime(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "demo", "generation": int64(1)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "lastTransitionTime": "2026-11-29T02:00:00Z"},
			map[string]any{"type": "GraphResolved", "status": "True", "reason": "Resolved"},
		}},
	}}
	now := time.Date(2026, 11, 29, 2, 5, 0, 0, time.UTC)
	got := explainConditions("WebApp/demo", inst, nil, "", now)
	if len(got) != 2 || got[0].LastTransitionTime != "2026-11-29T02:00:00Z" || got[0].Since != "5m" ||
		got[1].LastTransitionTime != "" || got[1].Since != "" {
		t.Errorf("explained %+v", got)
	}
}
