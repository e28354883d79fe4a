package resolve

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// An RGD written for upstream kro v0.9, with its conditions as
// expressions: one per collection item, one composed with a built-in.
const computedConditionsRGD = `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Queues
    spec: {names: "[]string", dynamicType: string}
    status:
      conditions:
      - >-
        ${queues.map(q, runtime.newCondition({
          type: 'Queue-' + q.metadata.name + '-Ready',
          status: q.data.?ready.orValue('') == 'yes' ? 'True' : 'False',
          reason: 'QueueState',
          message: ''
        }))}
      - |
        ${runtime.newCondition({
          type: 'Serving',
          status: runtime.condition(schema, 'ResourcesReady').status == 'True' && queues.size() > 0 ? 'True' : 'False',
          reason: runtime.condition(schema, 'ResourcesReady').reason,
          message: 'queues: ' + string(queues.size())
        })}
      - "${runtime.newCondition({type: schema.spec.dynamicType, status: 'Unknown'})}"
  resources:
  - id: queues
    forEach: [{name: "${schema.spec.names}"}]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${name}"}
`

func TestComputedConditions(t *testing.T) {
	g := compileRGD(t, computedConditionsRGD)
	current := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Pending"},
		{Type: "ResourcesReady", Status: metav1.ConditionTrue, Reason: "AllResourcesReady"},
		// A computed condition is not what runtime.condition(schema, ...) reads.
		{Type: "Serving", Status: metav1.ConditionFalse},
	}
	instance := func(dynamicType string) *Scope {
		return NewScope(g, obj(t, `{metadata: {name: q}, spec: {names: [a, b], dynamicType: `+dynamicType+`}}`))
	}

	// Before the collection is observed, only the entry that does not read
	// it gives its condition; the others wait, and are not errors.
	got, complete, err := ComputedConditions(g, instance("Later"), current)
	if err != nil || complete || len(got) != 1 || got[0].Type != "Later" || got[0].Status != metav1.ConditionUnknown {
		t.Fatalf("before the queues exist: %+v, complete %v, %v", got, complete, err)
	}

	s := instance("Later")
	s.Observe(g.Node("queues"), []any{obj(t, `{metadata: {name: a}, data: {ready: "yes"}}`), obj(t, `{metadata: {name: b}, data: {}}`)})
	got, complete, err = ComputedConditions(g, s, current)
	if err != nil || !complete {
		t.Fatalf("complete %v, %v", complete, err)
	}
	want := []metav1.Condition{
		{Type: "Queue-a-Ready", Status: metav1.ConditionTrue, Reason: "QueueState"},
		{Type: "Queue-b-Ready", Status: metav1.ConditionFalse, Reason: "QueueState"},
		{Type: "Serving", Status: metav1.ConditionTrue, Reason: "AllResourcesReady", Message: "queues: 2"},
		{Type: "Later", Status: metav1.ConditionUnknown},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("condition %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// A computed type that is taken is left out, with an error naming the
	// expression, and the evaluation is not complete.
	for typ, msg := range map[string]string{
		"Ready":         "Ready is a built-in condition type",
		"Serving":       "the condition type Serving is computed more than once",
		`"not a type"`:  `"not a type" is not a condition type`,
		"Queue-a-Ready": "the condition type Queue-a-Ready is computed more than once",
	} {
		s := instance(typ)
		s.Observe(g.Node("queues"), []any{obj(t, `{metadata: {name: a}, data: {}}`)})
		got, complete, err := ComputedConditions(g, s, current)
		if complete || err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "schema.spec.dynamicType") {
			t.Errorf("type %s: complete %v, error %v; want one containing %q", typ, complete, err, msg)
		}
		if errors.Is(err, ErrPending) || len(got) != 2 {
			t.Errorf("type %s: the other conditions must still be given: %+v", typ, got)
		}
	}
}

// A declared condition whose expression cannot be evaluated tells whether
// it waits for its input (a resource not observed, a field not set yet) or
// failed on it: the two are reported with different reasons.
func TestDeclaredConditionsTellWaitingFromFailing(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Crowd
    spec: {}
    status:
      conditions:
      - type: Crowded
        status: "${int(cm.data.count) > 3}"
        reason: TooMany
        message: "${'count is ' + cm.data.count}"
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
`)
	for _, tc := range []struct {
		name    string
		data    string // the ConfigMap's data; "" for none observed
		status  *bool
		pending bool
		message string
		// unobserved is the resource it waits to observe.
		unobserved string
	}{
		{name: "not observed", pending: true, message: "cm is not observed", unobserved: "cm"},
		{name: "count not set", data: `{}`, pending: true, message: "no such key: count"},
		{name: "count not a number", data: `{count: many}`, message: "status ${int(cm.data.count) > 3}: type conversion error"},
		{name: "count set", data: `{count: "5"}`, status: ptr.To(true), message: "count is 5"},
	} {
		s := NewScope(g, obj(t, `{metadata: {name: c}, spec: {}}`))
		if tc.data != "" {
			s.Observe(g.Node("cm"), obj(t, `{metadata: {name: c}, data: `+tc.data+`}`))
		}
		got := Conditions(g, s)
		if len(got) != 1 || !reflect.DeepEqual(got[0].Status, tc.status) || got[0].Pending != tc.pending || !strings.Contains(got[0].Message, tc.message) || got[0].Unobserved != tc.unobserved {
			t.Errorf("%s: %+v, want status %v, pending %v, a message containing %q, unobserved %q", tc.name, got, ptr.Deref(tc.status, false), tc.pending, tc.message, tc.unobserved)
		}
	}
}
