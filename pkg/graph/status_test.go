package graph

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestDeclaredConditionTraits(t *testing.T) {
	status := runtime.RawExtension{Raw: []byte(`{
	  "name": "${cm.metadata.name}",
	  "conditions": [
	    {"type": "GateOpen", "status": "${true}"},
	    {"type": "AuditPending", "status": "${true}", "polarity": "Negative", "countsTowardReady": false},
	    {"type": "Pressure", "status": "${true}", "polarity": "Negative"},
	    "${runtime.newCondition({type: 'Computed', status: 'True', reason: 'R', message: ''})}",
	    {"type": "Sideways", "status": "${true}", "polarity": "Sideways"},
	    {"status": "${true}"}
	  ]}`)}
	want := map[string]ConditionTraits{
		"GateOpen":     {CountsTowardReady: true, Polarity: PolarityPositive},
		"AuditPending": {CountsTowardReady: false, Polarity: PolarityNegative},
		"Pressure":     {CountsTowardReady: true, Polarity: PolarityNegative},
	}
	if got := DeclaredConditionTraits(status); !reflect.DeepEqual(got, want) {
		t.Errorf("traits = %v\nwant %v", got, want)
	}
	for _, raw := range []string{"", "null", `{"conditions": "nope"}`} {
		if got := DeclaredConditionTraits(runtime.RawExtension{Raw: []byte(raw)}); got == nil || len(got) != 0 {
			t.Errorf("status %q: traits = %#v, want an empty map", raw, got)
		}
	}
}
