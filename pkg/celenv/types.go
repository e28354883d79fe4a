package celenv

import (
	"fmt"

	"github.com/google/cel-go/common/types"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// maxDepth bounds the structural comparison of object types, which can be
// recursive (JSONSchemaProps is).
const maxDepth = 16

// Assignable reports whether a value of type got may be written into a field
// of type want. dyn on either side defers the check to run time; an
// optional is judged by what it holds (an absent value omits the field); a
// map or an object is judged field by field, since two schemas describing
// the same shape have different type names.
func (e *Env) Assignable(want, got *types.Type) bool {
	return e.assignable(want, got, 0)
}

func (e *Env) assignable(want, got *types.Type, depth int) bool {
	if want == nil || got == nil || depth > maxDepth {
		return true
	}
	if isOptional(got) {
		return e.assignable(want, got.Parameters()[0], depth)
	}
	switch got.Kind() {
	case types.DynKind, types.AnyKind, types.NullTypeKind, types.TypeParamKind, types.ErrorKind:
		return true
	}
	switch want.Kind() {
	case types.DynKind, types.AnyKind:
		return true
	case types.IntKind:
		return got.Kind() == types.IntKind || got.Kind() == types.UintKind
	case types.UintKind:
		return got.Kind() == types.UintKind || got.Kind() == types.IntKind
	case types.DoubleKind:
		return got.Kind() == types.DoubleKind || got.Kind() == types.IntKind || got.Kind() == types.UintKind
	case types.StringKind, types.BytesKind, types.TimestampKind, types.DurationKind:
		// Bytes, timestamps and durations are strings on the wire.
		return got.Kind() == want.Kind() || got.Kind() == types.StringKind
	case types.BoolKind:
		return got.Kind() == types.BoolKind
	case types.ListKind:
		return got.Kind() == types.ListKind && e.assignable(want.Parameters()[0], got.Parameters()[0], depth+1)
	case types.MapKind:
		switch got.Kind() {
		case types.MapKind:
			return e.assignable(want.Parameters()[1], got.Parameters()[1], depth+1)
		case types.StructKind:
			return e.fieldsFit(func(string) (*types.Type, bool) { return want.Parameters()[1], true }, got, depth)
		}
		return false
	case types.StructKind:
		switch got.Kind() {
		case types.MapKind:
			// A map literal's keys are only known at run time.
			return got.Parameters()[0].Kind() == types.StringKind || got.Parameters()[0].Kind() == types.DynKind
		case types.StructKind:
			return e.fieldsFit(func(name string) (*types.Type, bool) {
				ft, ok := e.provider.FindStructFieldType(want.TypeName(), name)
				if !ok {
					return nil, false
				}
				return ft.Type, true
			}, got, depth)
		}
		return false
	}
	return want.IsAssignableType(got)
}

// fieldsFit checks that every field of the object type got has a place of a
// fitting type in the target, as told by fieldOf.
func (e *Env) fieldsFit(fieldOf func(string) (*types.Type, bool), got *types.Type, depth int) bool {
	names, ok := e.provider.FindStructFieldNames(got.TypeName())
	if !ok {
		return true
	}
	for _, n := range names {
		gf, ok := e.provider.FindStructFieldType(got.TypeName(), n)
		if !ok {
			continue
		}
		wf, ok := fieldOf(n)
		if !ok || !e.assignable(wf, gf.Type, depth+1) {
			return false
		}
	}
	return true
}

func isOptional(t *types.Type) bool {
	return t.Kind() == types.OpaqueKind && t.TypeName() == "optional_type" && len(t.Parameters()) == 1
}

// TypeString names a type for error messages, the way CEL writes it.
func TypeString(t *types.Type) string {
	if t == nil {
		return "dyn"
	}
	return t.String()
}

// SchemaOf returns the OpenAPI schema of values of type t, for status fields
// whose type is inferred from their expression. Objects and dyn become
// free-form: what they hold is only known at run time.
func SchemaOf(t *types.Type) (*extv1.JSONSchemaProps, error) {
	if isOptional(t) {
		return SchemaOf(t.Parameters()[0])
	}
	switch t.Kind() {
	case types.StringKind:
		return &extv1.JSONSchemaProps{Type: "string"}, nil
	case types.BytesKind:
		return &extv1.JSONSchemaProps{Type: "string", Format: "byte"}, nil
	case types.TimestampKind:
		return &extv1.JSONSchemaProps{Type: "string", Format: "date-time"}, nil
	case types.DurationKind:
		return &extv1.JSONSchemaProps{Type: "string", Format: "duration"}, nil
	case types.IntKind, types.UintKind:
		return &extv1.JSONSchemaProps{Type: "integer"}, nil
	case types.DoubleKind:
		return &extv1.JSONSchemaProps{Type: "number"}, nil
	case types.BoolKind:
		return &extv1.JSONSchemaProps{Type: "boolean"}, nil
	case types.ListKind:
		items, err := SchemaOf(t.Parameters()[0])
		if err != nil {
			return nil, err
		}
		return &extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: items}}, nil
	case types.MapKind:
		if k := t.Parameters()[0].Kind(); k != types.StringKind && k != types.DynKind {
			return nil, fmt.Errorf("a map with %s keys cannot be stored in status; keys must be strings", TypeString(t.Parameters()[0]))
		}
		values, err := SchemaOf(t.Parameters()[1])
		if err != nil {
			return nil, err
		}
		if values.XPreserveUnknownFields != nil && values.Type == "" {
			return &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, nil
		}
		return &extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: values}}, nil
	case types.StructKind:
		return &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, nil
	case types.DynKind, types.AnyKind, types.NullTypeKind:
		return &extv1.JSONSchemaProps{XPreserveUnknownFields: ptr(true)}, nil
	}
	return nil, fmt.Errorf("values of type %s cannot be stored in status", TypeString(t))
}

func ptr[T any](v T) *T { return &v }
