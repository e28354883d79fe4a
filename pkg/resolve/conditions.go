package resolve

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// ConditionValue is a custom condition as evaluated: Status nil when its
// expression cannot be evaluated, Pending when that is because an input is
// not there yet (Message says which, or how it failed).
type ConditionValue struct {
	Condition *graph.CustomCondition
	Status    *bool
	Pending   bool
	Message   string
	// Unobserved is, when it is pending for a resource not observed,
	// that resource.
	Unobserved string
}

// Conditions evaluates the RGD's custom instance conditions.
func Conditions(g *graph.Graph, s *Scope) []ConditionValue {
	out := make([]ConditionValue, 0, len(g.Conditions))
	for _, c := range g.Conditions {
		cv := ConditionValue{Condition: c}
		v, err := Eval(c.Status, s)
		if b, ok := v.(bool); err == nil && ok {
			cv.Status = &b
		} else if errors.Is(err, ErrPending) {
			cv.Message, cv.Pending = err.Error(), true
			if unobserved := (*NotObservedError)(nil); errors.As(err, &unobserved) {
				cv.Unobserved = unobserved.ID
			}
		} else if err != nil {
			cv.Message = fmt.Sprintf("status ${%s}: %v", c.Status.Source, s.explained(c.Status, err))
		} else {
			cv.Message = fmt.Sprintf("status ${%s} gave %v, not true or false", c.Status.Source, v)
		}
		if c.Message != nil && cv.Status != nil {
			if m, ok, err := FieldValue(c.Message, s); err == nil && ok {
				cv.Message, _ = m.(string)
			}
		}
		out = append(out, cv)
	}
	return out
}

// ComputedConditions evaluates the custom conditions written as upstream kro
// writes them (runtime.newCondition). current are the instance's conditions
// as this reconcile has set them so far; runtime.condition(schema, ...)
// reads the built-in ones among them. complete is false when some
// expression produced nothing (its input is not there yet, or it failed, as
// err says): the conditions it produced before should then stay as they are.
// A condition whose type is taken, or given twice, is left out with an error.
func ComputedConditions(g *graph.Graph, s *Scope, current []metav1.Condition) (out []metav1.Condition, complete bool, err error) {
	if len(g.ComputedConditions) == 0 {
		return nil, true, nil
	}
	s = s.With(graph.SchemaVar, withConditions(s.vars[graph.SchemaVar], current))
	complete = true
	var errs []error
	for _, e := range g.ComputedConditions {
		v, err := Eval(e, s)
		if err != nil {
			complete = false
			if !errors.Is(err, ErrPending) {
				errs = append(errs, fmt.Errorf("condition ${%s}: %w", e.Source, s.explained(e, err)))
			}
			continue
		}
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		for _, item := range list {
			var c metav1.Condition
			m, _ := item.(map[string]any)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
				complete = false
				errs = append(errs, fmt.Errorf("condition ${%s}: %w", e.Source, err))
				continue
			}
			msg := graph.CheckConditionType(c.Type)
			switch {
			case msg != "":
			case g.Declares(c.Type):
				msg = fmt.Sprintf("the condition type %s is declared more than once", c.Type)
			case slices.ContainsFunc(out, func(o metav1.Condition) bool { return o.Type == c.Type }):
				msg = fmt.Sprintf("the condition type %s is computed more than once", c.Type)
			}
			if msg != "" {
				complete = false
				errs = append(errs, fmt.Errorf("condition ${%s}: %s", e.Source, msg))
				continue
			}
			out = append(out, c)
		}
	}
	return out, complete, errors.Join(errs...)
}

// withConditions returns the instance as runtime.condition(schema, ...)
// reads it: with the built-in conditions in its status, and nothing else.
func withConditions(instance any, current []metav1.Condition) map[string]any {
	var list []any
	for _, c := range current {
		if graph.IsBuiltinCondition(c.Type) {
			list = append(list, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message})
		}
	}
	out := map[string]any{}
	if m, ok := instance.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	out["status"] = map[string]any{"conditions": list}
	return out
}
