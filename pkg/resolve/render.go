package resolve

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

var stringType = reflect.TypeOf("")

// FieldValue evaluates one field: a standalone expression's value, or the
// text of an embedded one. ok is false when an optional standalone
// expression holds nothing, which leaves the field out.
func FieldValue(f *graph.Field, s *Scope) (v any, ok bool, err error) {
	if f.Standalone() {
		v, err := Eval(f.Exprs[0], s)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", f.Path, err)
		}
		return v, v != absent, nil
	}
	var b strings.Builder
	i := 0
	for _, seg := range f.Segments {
		if !seg.IsExpr {
			b.WriteString(seg.Literal)
			continue
		}
		v, err := Eval(f.Exprs[i], s)
		i++
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", f.Path, err)
		}
		str, isString := v.(string)
		if !isString {
			return nil, false, fmt.Errorf("%s: ${%s} gave %T, not a string", f.Path, seg.Expr, v)
		}
		b.WriteString(str)
	}
	return b.String(), true, nil
}

// Render returns the node's template with every field evaluated in s. The
// template is deep-copied; the graph stays untouched.
func Render(n *graph.Node, s *Scope) (map[string]any, error) {
	obj := runtime.DeepCopyJSON(n.Template)
	for _, f := range n.Fields {
		v, ok, err := FieldValue(f, s)
		if err != nil {
			return nil, err
		}
		if err := setPath(obj, f.Path, v, ok); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// RenderOr renders like Render, but a field that cannot be evaluated is
// given fallback(f, err) instead of failing the whole object, for previews
// of objects whose inputs do not all exist yet.
func RenderOr(n *graph.Node, s *Scope, fallback func(f *graph.Field, err error) any) map[string]any {
	obj := runtime.DeepCopyJSON(n.Template)
	for _, f := range n.Fields {
		v, ok, err := FieldValue(f, s)
		if err != nil {
			v, ok = fallback(f, err), true
		}
		// The paths come from the template itself, so they always fit it.
		_ = setPath(obj, f.Path, v, ok)
	}
	return obj
}

// ExternalTarget evaluates an externalRef's metadata.name and
// metadata.namespace; literal values stand as written.
func ExternalTarget(n *graph.Node, s *Scope) (name, namespace string, err error) {
	name, namespace = n.External.Metadata.Name, n.External.Metadata.Namespace
	for _, f := range n.Fields {
		v, _, err := FieldValue(f, s)
		if err != nil {
			return "", "", err
		}
		switch f.Path.String() {
		case "metadata.name":
			name, _ = v.(string)
		case "metadata.namespace":
			namespace, _ = v.(string)
		}
	}
	return name, namespace, nil
}

// setPath writes v at p in obj, or removes the field when keep is false.
func setPath(obj map[string]any, p expr.Path, v any, keep bool) error {
	var cur any = obj
	for i, step := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if step.IsIndex {
				return fmt.Errorf("%s: expected a list", p)
			}
			if last {
				if keep {
					c[step.Key] = v
				} else {
					delete(c, step.Key)
				}
				return nil
			}
			cur = c[step.Key]
		case []any:
			if !step.IsIndex || step.Index >= len(c) {
				return fmt.Errorf("%s: expected a map", p)
			}
			if last {
				// An absent list item is written as null, keeping indexes.
				if keep {
					c[step.Index] = v
				} else {
					c[step.Index] = nil
				}
				return nil
			}
			cur = c[step.Index]
		default:
			return fmt.Errorf("%s: the template has no value there", p)
		}
	}
	return errors.New("empty path")
}
