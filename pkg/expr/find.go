package expr

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Field is a string value of a template that holds at least one expression.
type Field struct {
	Path     Path
	Segments []Segment
}

// Standalone reports whether the field's whole value is one expression.
func (f Field) Standalone() bool { return IsStandalone(f.Segments) }

// Find walks obj (as decoded from JSON or YAML) and returns every string that
// holds an expression, in a stable order (map keys sorted). base is where obj
// sits in the RGD, for errors. Expressions in map keys are refused: a key is
// part of the object's shape, which must be known before any instance exists.
func Find(obj any, base *field.Path) ([]Field, field.ErrorList) {
	var fields []Field
	var errs field.ErrorList
	var walk func(v any, p Path)
	walk = func(v any, p Path) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if segs, err := Parse(k); err != nil || HasExpr(segs) {
					errs = append(errs, field.Invalid(p.Child(k).FieldPath(base), k, "expressions are not allowed in map keys"))
					continue
				}
				walk(t[k], p.Child(k))
			}
		case []any:
			for i, item := range t {
				walk(item, p.Index(i))
			}
		case string:
			segs, err := Parse(t)
			if err != nil {
				errs = append(errs, field.Invalid(p.FieldPath(base), t, err.Error()))
				return
			}
			if HasExpr(segs) {
				fields = append(fields, Field{Path: p, Segments: segs})
			}
		case nil, bool, int64, float64, int, int32, float32:
		default:
			errs = append(errs, field.Invalid(p.FieldPath(base), fmt.Sprintf("%T", v), "unsupported value type"))
		}
	}
	walk(obj, nil)
	return fields, errs
}
