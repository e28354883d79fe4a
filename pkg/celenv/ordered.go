package celenv

import (
	"cmp"
	"slices"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// orderedRanges makes every comprehension of ast that ranges over a map
// range over its keys in sorted order. CEL leaves the order unspecified,
// and a Go map's changes from one evaluation to the next: the items of a
// forEach over m.map(k, k), or a string joined from m.filter(...), would
// come out in another order at each reconcile, and every one would write
// the objects again. A comprehension is the only place an expression sees
// that order, so ordering its range covers every map, whatever made it: an
// object read, a literal, merge(), json.unmarshal(), transformMap(). Ranges
// the checker knows to be lists are left as they are, and nothing else is
// touched, so that expressions without such a range pay nothing.
func orderedRanges(ast *cel.Ast) []cel.ProgramOption {
	native := ast.NativeRep()
	ranges := map[int64]bool{}
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.ComprehensionKind {
			return
		}
		r := e.AsComprehension().IterRange()
		if t, ok := native.TypeMap()[r.ID()]; !ok || t.Kind() != types.ListKind {
			ranges[r.ID()] = true
		}
	}))
	if len(ranges) == 0 {
		return nil
	}
	return []cel.ProgramOption{cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if ranges[i.ID()] {
			return orderedRange{i}, nil
		}
		return i, nil
	})}
}

// orderedRange is the range of a comprehension, evaluated to a map that
// iterates in the order of its keys when it is a map.
type orderedRange struct {
	interpreter.InterpretableV2
}

func (r orderedRange) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return ordered(r.InterpretableV2.Exec(frame))
}

func (r orderedRange) Eval(vars interpreter.Activation) ref.Val {
	return ordered(r.InterpretableV2.Eval(vars))
}

func ordered(v ref.Val) ref.Val {
	if m, ok := v.(traits.Mapper); ok {
		return orderedMap{m}
	}
	return v
}

// orderedMap is a CEL map whose iteration follows the order of its keys.
type orderedMap struct {
	traits.Mapper
}

// Iterator ranges over the keys in sorted order.
func (m orderedMap) Iterator() traits.Iterator {
	var keys []ref.Val
	for it := m.Mapper.Iterator(); it.HasNext() == types.True; {
		keys = append(keys, it.Next())
	}
	slices.SortFunc(keys, compareKeys)
	return types.NewRefValList(types.DefaultTypeAdapter, keys).Iterator()
}

// compareKeys orders map keys, which CEL allows to be strings, integers
// and booleans: numbers by value (an int and a uint alike), the rest by
// their own order, and keys of different kinds by kind.
func compareKeys(a, b ref.Val) int {
	if c, ok := a.(traits.Comparer); ok {
		if n, ok := c.Compare(b).(types.Int); ok {
			return int(n)
		}
	}
	return cmp.Compare(keyKind(a), keyKind(b))
}

// keyKind ranks the kinds of map keys: false before true before numbers
// before strings.
func keyKind(v ref.Val) int {
	switch v.(type) {
	case types.Bool:
		return 0
	case types.Int, types.Uint, types.Double:
		return 1
	default:
		return 2
	}
}
