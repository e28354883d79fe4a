package celenv

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/common/types"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// maxDepth bounds the structural comparison of object types, which can be
// recursive (JSONSchemaProps is).
const maxDepth = 16

// FieldType is the type of the values a field of the given schema holds, for
// comparing an expression's result with the field it is written into. nil
// means anything goes (no schema, or one CEL cannot type).
func FieldType(s *spec.Schema) *apiservercel.DeclType {
	if s == nil {
		return nil
	}
	return openapi.SchemaDeclType(s, false)
}

// TypeName names a field type for error messages.
func TypeName(t *apiservercel.DeclType) string {
	if t == nil {
		return "dyn"
	}
	return TypeString(t.CelType())
}

// Fit reports whether a value of type got may be written into a field of
// type want, and where inside the value it does not fit: which field of one
// of its objects the target has no place for ("which has no [*].args"), or
// takes another type in ("whose [*].port takes int, not string"); why is ""
// when the two differ at the top, where naming both types says it all. dyn
// on either side defers the check to run time; an optional is judged by what
// it holds (an absent value omits the field); objects and maps are compared
// field by field, since two schemas of the same shape have different type
// names.
func (e *Env) Fit(want *apiservercel.DeclType, got *types.Type) (why string, ok bool) {
	return e.fit(want, got, "", 0)
}

// fit is Fit; path is where inside the value got is, ""
// at the top.
func (e *Env) fit(want *apiservercel.DeclType, got *types.Type, path string, depth int) (string, bool) {
	if want == nil || got == nil || depth > maxDepth {
		return "", true
	}
	if isOptional(got) {
		return e.fit(want, got.Parameters()[0], path, depth)
	}
	switch got.Kind() {
	case types.DynKind, types.AnyKind, types.NullTypeKind, types.TypeParamKind, types.ErrorKind:
		return "", true
	}
	fits := func(ok bool) (string, bool) {
		if ok || path == "" {
			return "", ok
		}
		return fmt.Sprintf("whose %s takes %s, not %s", strings.TrimPrefix(path, "."), TypeName(want), TypeString(got)), false
	}
	wk := want.CelType().Kind()
	gk := got.Kind()
	switch wk {
	case types.DynKind, types.AnyKind:
		return "", true
	case types.IntKind, types.UintKind:
		return fits(gk == types.IntKind || gk == types.UintKind)
	case types.DoubleKind:
		return fits(gk == types.DoubleKind || gk == types.IntKind || gk == types.UintKind)
	case types.StringKind, types.BytesKind, types.TimestampKind, types.DurationKind:
		// Bytes, timestamps and durations are strings on the wire.
		return fits(gk == wk || gk == types.StringKind)
	case types.BoolKind:
		return fits(gk == types.BoolKind)
	case types.ListKind:
		if gk != types.ListKind {
			return fits(false)
		}
		return e.fit(want.ElemType, got.Parameters()[0], path+"[*]", depth+1)
	case types.MapKind:
		switch gk {
		case types.MapKind:
			return e.fit(want.ElemType, got.Parameters()[1], path+"[*]", depth+1)
		case types.StructKind:
			return e.fieldsFit(func(string) (*apiservercel.DeclType, bool) { return want.ElemType, true }, got, path, depth)
		}
		return fits(false)
	case types.StructKind:
		switch gk {
		case types.MapKind:
			// A map literal's keys are only known at run time.
			k := got.Parameters()[0].Kind()
			return fits(k == types.StringKind || k == types.DynKind)
		case types.StructKind:
			return e.fieldsFit(func(name string) (*apiservercel.DeclType, bool) {
				f, ok := want.Fields[name]
				if !ok {
					return nil, false
				}
				return f.Type, true
			}, got, path, depth)
		}
		return fits(false)
	}
	return fits(want.CelType().IsAssignableType(got))
}

// fieldsFit checks that every field of the object type got, at path, has a
// place of a fitting type in the target, as told by fieldOf, and says of the
// first that has not (in name order, so the message is stable) why. An
// object type this environment did not declare cannot be inspected and is
// let through.
func (e *Env) fieldsFit(fieldOf func(string) (*apiservercel.DeclType, bool), got *types.Type, path string, depth int) (string, bool) {
	decl, ok := e.provider.FindDeclType(got.TypeName())
	if !ok {
		return "", true
	}
	for _, name := range slices.Sorted(maps.Keys(decl.Fields)) {
		// Paths name fields as the objects hold them, not escaped.
		at := path + "." + name
		if held, unescaped := apiservercel.Unescape(name); unescaped {
			at = path + "." + held
		}
		want, ok := fieldOf(name)
		if !ok {
			return "which has no " + strings.TrimPrefix(at, "."), false
		}
		if why, ok := e.fit(want, decl.Fields[name].Type.CelType(), at, depth+1); !ok {
			return why, false
		}
	}
	return "", true
}

// ConversionHint says how to turn a value of type got into the scalar type
// want, when CEL has a conversion that does it: "" otherwise.
func ConversionHint(want *apiservercel.DeclType, got *types.Type) string {
	if want == nil || got == nil {
		return ""
	}
	if isOptional(got) {
		got = got.Parameters()[0]
	}
	gk := got.Kind()
	if cellib.IsNowType(got) {
		switch want.CelType().Kind() {
		case types.StringKind, types.TimestampKind, types.DurationKind:
			return "a value computed from time.now() is written with string(...)"
		}
	}
	switch want.CelType().Kind() {
	case types.StringKind:
		switch gk {
		case types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.TimestampKind, types.DurationKind:
			return "convert it with string(...)"
		case types.BytesKind:
			// string(...) takes UTF-8 text alone, which a Secret's data
			// holds and a digest does not.
			return `convert it with string(...) where it holds text (a Secret's data), or write it with base64.encode(...) or "%x".format([...]) (a hash)`
		case types.ListKind:
			if elem := got.Parameters(); len(elem) == 1 && elem[0].Kind() == types.StringKind {
				return `join its items with .join(", ") (or another separator), or write it as JSON text with json.marshal(...)`
			}
			return "write it as JSON text with json.marshal(...)"
		case types.MapKind, types.StructKind:
			return "write it as JSON text with json.marshal(...)"
		}
	case types.IntKind:
		if gk == types.StringKind || gk == types.DoubleKind {
			return "convert it with int(...)"
		}
	case types.DoubleKind:
		if gk == types.StringKind {
			return "convert it with double(...)"
		}
	case types.BoolKind:
		if gk == types.StringKind {
			return `compare it instead (... == "true")`
		}
	}
	return ""
}

// zeroLiterals are the zero values of CEL's scalar types, as an expression
// writes them, by the types' names as cel-go writes them.
var zeroLiterals = map[string]string{"string": `""`, "int": "0", "uint": "0u", "double": "0.0", "bool": "false"}

// ZeroLiteral is the zero value of type t as an expression writes it, to
// stand for a value that is not there (x.?f.orValue(zero)): a scalar's, or
// an empty list or map; false for another type.
func ZeroLiteral(t *types.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	switch t.Kind() {
	case types.ListKind:
		return "[]", true
	case types.MapKind:
		return "{}", true
	}
	zero, ok := zeroLiterals[t.String()]
	return zero, ok
}

// TruthTest is src, of type t, made the boolean a condition wants: src
// compared with its zero value (` != ""` for a string), or for a list or a
// map its size; "" for a type that has no obvious test. A string named
// status is taken for a condition's, which is "True", "False" or "Unknown":
// one that is not empty may be "False".
func TruthTest(src string, t *types.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case types.StringKind:
		if strings.HasSuffix(src, ".status") {
			return src + ` == "True"`
		}
		return src + ` != ""`
	case types.IntKind, types.UintKind, types.DoubleKind:
		return src + " > 0"
	case types.ListKind, types.MapKind:
		return "size(" + src + ") > 0"
	}
	return ""
}

func isOptional(t *types.Type) bool {
	return t.Kind() == types.OpaqueKind && t.TypeName() == "optional_type" && len(t.Parameters()) == 1
}

// heldByOptional is the type of what an optional of type t holds, through
// optionals of optionals: x.?a.b selects b of it. t is returned when it is
// no optional.
func heldByOptional(t *types.Type) *types.Type {
	for t != nil && isOptional(t) {
		t = t.Parameters()[0]
	}
	return t
}

// IsBool reports whether t is bool, or may be at run time.
func IsBool(t *types.Type) bool {
	return t.Kind() == types.BoolKind || t.Kind() == types.DynKind || t.Kind() == types.AnyKind
}

// IsString reports whether t is string, or may be at run time.
func IsString(t *types.Type) bool {
	return t.Kind() == types.StringKind || t.Kind() == types.DynKind || t.Kind() == types.AnyKind
}

// ListElem returns the element type of a list type, dyn for dyn, and false
// for anything that is not a list.
func ListElem(t *types.Type) (*types.Type, bool) {
	switch t.Kind() {
	case types.ListKind:
		return t.Parameters()[0], true
	case types.DynKind, types.AnyKind:
		return types.DynType, true
	}
	return nil, false
}

// internalTypeName matches the name the environment gives the object type
// of a variable, or of one of its fields: __deploy__.spec.selector.
var internalTypeName = regexp.MustCompile(`__(\w+)__((?:\.[\w@-]+)*)`)

// UserTypeNames rewrites, in a type name or a message of CEL's, the object
// types of variables as the user knows them: object (deploy.spec.selector).
// CEL's own __result__, the accumulator of macros, is left alone.
func UserTypeNames(s string) string {
	return internalTypeName.ReplaceAllStringFunc(s, func(name string) string {
		m := internalTypeName.FindStringSubmatch(name)
		if m[1] == "result" {
			return name
		}
		return "object (" + m[1] + itemPath.Replace(m[2]) + ")"
	})
}

// itemPath writes the steps a type name takes into the items of a list or
// the values of a map as an expression would select them.
var itemPath = strings.NewReplacer(".@idx", "[*]", ".@elem", "[*]")

// TypeString names a type for error messages, the way CEL writes it, but
// for the object types of variables, named by where they come from.
func TypeString(t *types.Type) string {
	if t == nil {
		return "dyn"
	}
	params := t.Parameters()
	switch {
	// The types that keep how a value depends on the time are kro-agent's
	// bookkeeping: to the user they are timestamps and durations.
	case t.IsExactType(cellib.NowTimestampType):
		return "timestamp"
	case t.IsExactType(cellib.NowDurationType):
		return "duration"
	}
	switch t.Kind() {
	case types.StructKind:
		return UserTypeNames(t.TypeName())
	case types.ListKind:
		if len(params) == 1 {
			return "list(" + TypeString(params[0]) + ")"
		}
	case types.MapKind:
		if len(params) == 2 {
			return "map(" + TypeString(params[0]) + ", " + TypeString(params[1]) + ")"
		}
	case types.OpaqueKind:
		if isOptional(t) {
			return "optional_type(" + TypeString(params[0]) + ")"
		}
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
		if items.Type == "" {
			// A list of anything: the structural schema rules want a type
			// on the items, so keep the list itself free-form.
			return &extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}}, nil
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
		if values.Type == "" {
			return &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, nil
		}
		return &extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: values}}, nil
	case types.StructKind:
		if cellib.IsNowType(t) {
			return nil, fmt.Errorf("a value computed from time.now() is stored with string(...)")
		}
		return &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, nil
	case types.DynKind, types.AnyKind, types.NullTypeKind:
		return &extv1.JSONSchemaProps{XPreserveUnknownFields: ptr(true)}, nil
	}
	return nil, fmt.Errorf("values of type %s cannot be stored in status", TypeString(t))
}

func ptr[T any](v T) *T { return &v }

// HoldsDyn reports whether values of type t are typed only at run time, in
// whole or in part: dyn, or a list, map or optional holding dyn.
func HoldsDyn(t *types.Type) bool {
	if t == nil || t.Kind() == types.DynKind || t.Kind() == types.AnyKind {
		return true
	}
	return slices.ContainsFunc(t.Parameters(), HoldsDyn)
}

// ValueFits checks a value computed at run time (JSON-like, as
// cellib.Native makes it) against the type of the field it is written
// into, for expressions whose type was left to run time (dyn): a string
// where a number goes, an object where a list goes, is refused here with
// the value and the types, rather than by the API server in the words of
// its decoder. Integers and doubles both pass for a number (the API server
// judges fractions), and null passes (it unsets the field). Object fields
// the type does not declare are left to the API server too.
func ValueFits(want *apiservercel.DeclType, v any) error {
	all := Misfits(want, v)
	if len(all) == 0 {
		return nil
	}
	first := all[0]
	if len(first.At) == 0 {
		return fmt.Errorf("is %s, but the field expects %s", describeValue(first.Value), first.Expects)
	}
	return fmt.Errorf("holds %s at %s, where %s is expected", describeValue(first.Value), first.At, first.Expects)
}

// Misfit is a part of a value whose type is not the one its place in the
// value declares.
type Misfit struct {
	// At is where in the value the part is.
	At expr.Path
	// Value is the part.
	Value any
	// Expects names the type declared there.
	Expects string
}

// Describe says what the misfit holds and what is expected instead.
func (m Misfit) Describe() string {
	return fmt.Sprintf("holds %s, where %s is expected", describeValue(m.Value), m.Expects)
}

// Misfits returns every part of v that does not fit want, by the rules of
// ValueFits, in the order of their paths; nil when all of it fits. A part
// that does not fit is not looked into. Checking a value that fits
// allocates nothing: every reconcile checks its instance.
func Misfits(want *apiservercel.DeclType, v any) []Misfit {
	out := misfits(want, v, 0)
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b Misfit) int { return a.At.Compare(b.At) })
	}
	return out
}

// misfits is Misfits unsorted, with paths from v.
func misfits(want *apiservercel.DeclType, v any, depth int) []Misfit {
	if want == nil || v == nil || depth > maxDepth {
		return nil
	}
	var out []Misfit
	fits := true
	switch want.CelType().Kind() {
	case types.IntKind, types.UintKind, types.DoubleKind:
		switch v.(type) {
		case int64, float64:
		default:
			fits = false
		}
	case types.BytesKind:
		if s, ok := v.(string); ok && !IsBase64(s) {
			return []Misfit{{Value: notBase64{}, Expects: "base64 text (bytes)"}}
		}
		_, fits = v.(string)
	case types.StringKind, types.TimestampKind, types.DurationKind:
		_, fits = v.(string)
	case types.BoolKind:
		_, fits = v.(bool)
	case types.ListKind:
		list, ok := v.([]any)
		fits = ok
		for i, item := range list {
			for _, m := range misfits(want.ElemType, item, depth+1) {
				m.At = append(expr.Path{{Index: i, IsIndex: true}}, m.At...)
				out = append(out, m)
			}
		}
	case types.MapKind, types.StructKind:
		obj, ok := v.(map[string]any)
		fits = ok
		for k, item := range obj {
			elem := want.ElemType
			if want.IsObject() {
				f, declared := fieldHeldAs(want, k)
				if !declared {
					continue
				}
				elem = f.Type
			}
			for _, m := range misfits(elem, item, depth+1) {
				m.At = append(expr.Path{{Key: k}}, m.At...)
				out = append(out, m)
			}
		}
	}
	if fits {
		return out
	}
	expects := TypeName(want)
	if want.IsObject() {
		expects = "an object"
	}
	return []Misfit{{Value: v, Expects: expects}}
}

// fieldHeldAs is the field of object type t that objects hold under the
// name held, which t names escaped when it is no CEL identifier.
func fieldHeldAs(t *apiservercel.DeclType, held string) (*apiservercel.DeclField, bool) {
	if f, ok := t.Fields[held]; ok {
		return f, true // most names need no escaping, and finding them so costs nothing
	}
	escaped, ok := apiservercel.Escape(held)
	if !ok || escaped == held {
		return nil, false
	}
	f, ok := t.Fields[escaped]
	return f, ok
}

// describeValue says what a JSON-like value is, for errors: a scalar with
// its type, a list or an object by what it is.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		if r := []rune(v); len(r) > 40 {
			v = string(r[:37]) + "..."
		}
		return fmt.Sprintf("%q (a string)", v)
	case int64:
		return fmt.Sprintf("%d (an int)", v)
	case float64:
		return fmt.Sprintf("%v (a double)", v)
	case bool:
		return fmt.Sprintf("%t (a bool)", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case notBase64:
		return "text that is not base64 (not shown: it may be a secret)"
	}
	return fmt.Sprintf("%v", v)
}
