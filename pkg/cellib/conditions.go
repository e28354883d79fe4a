package cellib

import (
	"fmt"
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Names of the condition functions, as expressions call them. Upstream kro
// (v0.9) declares an RGD's custom conditions with them:
//
//	${runtime.newCondition({type: 'AppReady', status: ready ? 'True' : 'False', reason: 'Replicas', message: ''})}
//	${runtime.condition(deployment, 'Available').status == 'True'}
const (
	NewConditionFunction = "runtime.newCondition"
	ConditionFunction    = "runtime.condition"
)

// The fields of a condition value: those of a status condition an author
// sets. observedGeneration and lastTransitionTime are the agent's to stamp.
var conditionFields = []string{"type", "status", "reason", "message"}

// ConditionStatuses are the statuses a condition may have.
var ConditionStatuses = []string{"True", "False", "Unknown"}

// ConditionType is the CEL type of a condition value: an object whose
// fields are strings, so that runtime.condition(x, 'T').status type-checks.
// At run time a condition is a map of those fields, as objects read from
// the API server are.
var ConditionType = func() *apiservercel.DeclType {
	fields := map[string]*apiservercel.DeclField{}
	for _, f := range conditionFields {
		fields[f] = apiservercel.NewDeclField(f, apiservercel.StringType, true, nil, nil)
	}
	return apiservercel.NewObjectType("kro.Condition", fields)
}()

// conditionFunctions: runtime.newCondition({type, status, reason, message})
// makes a condition, and runtime.condition(object, type) reads one from an
// object's status.conditions (every field empty when it has none of that
// type). The map given to newCondition is written as upstream kro writes
// it, with bare field names as keys; a macro quotes them.
func conditionFunctions() []cel.EnvOption {
	condition := ConditionType.CelType()
	return []cel.EnvOption{
		cel.Macros(parser.NewReceiverMacro("newCondition", 1, expandNewCondition)),
		cel.Function(NewConditionFunction,
			cel.Overload("runtime_new_condition_map", []*cel.Type{cel.MapType(cel.StringType, cel.StringType)}, condition,
				cel.UnaryBinding(newCondition))),
		cel.Function(ConditionFunction,
			cel.Overload("runtime_condition_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, condition,
				cel.BinaryBinding(conditionOf))),
	}
}

// expandNewCondition turns runtime.newCondition({type: t, status: s}) into
// a call of the function with a map whose keys are strings, and refuses a
// literal that lacks type or status or has a field a condition does not.
// Other receivers of a method named newCondition are left alone.
func expandNewCondition(eh parser.ExprHelper, target ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	if target == nil || target.Kind() != ast.IdentKind || target.AsIdent() != "runtime" {
		return nil, nil
	}
	arg := args[0]
	if arg.Kind() != ast.MapKind {
		// A map built elsewhere is checked when the condition is made.
		return eh.NewCall(NewConditionFunction, arg), nil
	}
	var entries []ast.EntryExpr
	seen := map[string]bool{}
	for _, e := range arg.AsMap().Entries() {
		entry := e.AsMapEntry()
		key := entry.Key()
		var name string
		switch {
		case key.Kind() == ast.IdentKind:
			name = key.AsIdent()
		case key.Kind() == ast.LiteralKind && key.AsLiteral().Type() == types.StringType:
			name = string(key.AsLiteral().(types.String))
		default:
			return nil, eh.NewError(key.ID(), "runtime.newCondition: the keys of the map are the condition's fields: type, status, reason, message")
		}
		if !slices.Contains(conditionFields, name) {
			return nil, eh.NewError(key.ID(), fmt.Sprintf("runtime.newCondition: a condition has no field %q (it has type, status, reason, message)", name))
		}
		if seen[name] {
			return nil, eh.NewError(key.ID(), fmt.Sprintf("runtime.newCondition: %s is given twice", name))
		}
		seen[name] = true
		value := entry.Value()
		if value.Kind() == ast.LiteralKind && value.AsLiteral().Type() != types.StringType {
			return nil, eh.NewError(value.ID(), fmt.Sprintf("runtime.newCondition: %s must be a string, not %v", name, value.AsLiteral()))
		}
		if name == "status" && value.Kind() == ast.LiteralKind {
			if s, ok := value.AsLiteral().(types.String); !ok || !slices.Contains(ConditionStatuses, string(s)) {
				return nil, eh.NewError(value.ID(), fmt.Sprintf("runtime.newCondition: status must be 'True', 'False' or 'Unknown', not %v", value.AsLiteral()))
			}
		}
		entries = append(entries, eh.NewMapEntry(eh.NewLiteral(types.String(name)), value, false))
	}
	for _, required := range []string{"type", "status"} {
		if !seen[required] {
			return nil, eh.NewError(arg.ID(), fmt.Sprintf("runtime.newCondition: the condition's %s is required", required))
		}
	}
	return eh.NewCall(NewConditionFunction, eh.NewMap(entries...)), nil
}

// newCondition checks what the macro could not: values computed at run time.
func newCondition(arg ref.Val) ref.Val {
	m, ok := arg.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	// Map order is random; the first of the keys in sorted order is
	// reported, so the same map always gives the same error.
	var keys []string
	for it := m.Iterator(); it.HasNext() == types.True; {
		name, _ := it.Next().(types.String)
		keys = append(keys, string(name))
	}
	slices.Sort(keys)
	out := map[string]string{}
	for _, name := range keys {
		if !slices.Contains(conditionFields, name) {
			return types.NewErr("runtime.newCondition: a condition has no field %q (it has type, status, reason, message)", name)
		}
		v, ok := m.Get(types.String(name)).(types.String)
		if !ok {
			return types.NewErr("runtime.newCondition: %s must be a string", name)
		}
		out[name] = string(v)
	}
	switch {
	case out["type"] == "":
		return types.NewErr("runtime.newCondition: the condition's type is required")
	case !slices.Contains(ConditionStatuses, out["status"]):
		return types.NewErr("runtime.newCondition: status must be 'True', 'False' or 'Unknown', not %q", out["status"])
	}
	return conditionValue(out)
}

// conditionOf finds the condition of type t in object's status.conditions.
func conditionOf(object, t ref.Val) ref.Val {
	want, ok := t.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(t)
	}
	found := map[string]string{}
	if list, ok := field(field(object, "status"), "conditions").(traits.Lister); ok {
		for it := list.Iterator(); it.HasNext() == types.True; {
			c := it.Next()
			if field(c, "type") != want {
				continue
			}
			for _, f := range conditionFields {
				if s, ok := field(c, f).(types.String); ok {
					found[f] = string(s)
				}
			}
			break
		}
	}
	return conditionValue(found)
}

// field returns m[name], or nil when m is not a map or has no such key.
func field(m ref.Val, name string) ref.Val {
	mapper, ok := m.(traits.Mapper)
	if !ok {
		return nil
	}
	v, found := mapper.Find(types.String(name))
	if !found {
		return nil
	}
	return v
}

// conditionValue is a condition with every field present, empty where
// unset, so that reading a field never fails.
func conditionValue(fields map[string]string) ref.Val {
	full := make(map[string]string, len(conditionFields))
	for _, f := range conditionFields {
		full[f] = fields[f]
	}
	return types.NewStringStringMap(types.DefaultTypeAdapter, full)
}
