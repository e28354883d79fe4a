package celenv

import (
	"strings"
	"testing"

	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// A field whose name is no CEL identifier type-checks under the name the
// API server's CEL escapes it to, or its own in backticks, and either
// reads the field the object holds under its own name.
func TestFieldsNamedEscapedReadTheFieldTheObjectHolds(t *testing.T) {
	str := *spec.StringProperty()
	object := objectSchema(map[string]spec.Schema{
		"my-field":  str,
		"a.b":       str,
		"x/y":       str,
		"a__b":      str,
		"if":        str,
		"namespace": str,
		"plain":     str,
		"nested":    *objectSchema(map[string]spec.Schema{"in-depth": str}),
		"items":     *arrayOf(objectSchema(map[string]spec.Schema{"item-name": str})),
	})
	env, err := New(Var{Name: "o", Schema: object})
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"o": map[string]any{
		"my-field":  "dash",
		"a.b":       "dot",
		"x/y":       "slash",
		"a__b":      "underscores",
		"if":        "keyword",
		"namespace": "ns",
		"plain":     "plain",
		"nested":    map[string]any{"in-depth": "deep"},
		"items":     []any{map[string]any{"item-name": "first"}},
	}}
	for _, tc := range []struct{ src, want string }{
		{"o.my__dash__field", "dash"},
		{"o.`my-field`", "dash"},
		{"o.a__dot__b", "dot"},
		{"o.`a.b`", "dot"},
		{"o.x__slash__y", "slash"},
		{"o.a__underscores__b", "underscores"},
		{"o.`a__b`", "underscores"},
		{"o.a__b", "underscores"},
		{"o.__if__", "keyword"},
		{"o.if", "keyword"},
		{"o.namespace", "ns"},
		{"o.__namespace__", "ns"},
		{"o.plain", "plain"},
		{"o.nested.in__dash__depth", "deep"},
		{"o.items[0].item__dash__name", "first"},
		{"o.items.map(i, i.item__dash__name)[0]", "first"},
		{"o.?my__dash__field.orValue('absent')", "dash"},
		{"o.?`my-field`.orValue('absent')", "dash"},
		{"o.nested.?in__dash__depth.orValue('absent')", "deep"},
		{"o.?nested.?in__dash__depth.orValue('absent')", "deep"},
		{"o.?nested.in__dash__depth.orValue('absent')", "deep"},
		{"o.?items[0].item__dash__name.orValue('absent')", "first"},
		{"has(o.my__dash__field) ? 'set' : 'unset'", "set"},
		{"has(o.__if__) ? 'set' : 'unset'", "set"},
		{"has(o.`a.b`) ? 'set' : 'unset'", "set"},
	} {
		prg := program(t, env, tc.src)
		if prg == nil {
			continue
		}
		if got, ok := evalString(t, prg, tc.src, vars); ok && got != tc.want {
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
	}

	// Absent, such a field is absent under either name.
	empty := map[string]any{"o": map[string]any{"nested": map[string]any{}}}
	for _, src := range []string{"has(o.my__dash__field)", "has(o.`my-field`)", "has(o.nested.in__dash__depth)", "o.?a__dot__b.hasValue()"} {
		prg := program(t, env, src)
		if prg == nil {
			continue
		}
		if out, _, err := prg.Eval(empty); err != nil || out.Value() != false {
			t.Errorf("%s over an object without the field = %v, %v; want false", src, out, err)
		}
	}

	// The fields are listed as an expression writes them.
	_, err = env.Compile("o.zzzzz")
	want := "o has `a.b`, a__b, if, items, `my-field`, namespace, nested, plain, `x/y`"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Compile(o.zzzzz) = %v, want it to contain %q", err, want)
	}
}

// A field whose name is no identifier, written without backticks, is read
// as a shorter name and an operator; the error says how to write it.
func TestFieldNamesThatAreNoIdentifiersAreToldToBeQuoted(t *testing.T) {
	str := *spec.StringProperty()
	env, err := New(Var{Name: "o", Schema: objectSchema(map[string]spec.Schema{"my-field": str, "a.b": str, "other": str})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want string }{
		{"o.my-field", "undefined field 'my': did you mean o.`my-field`? A field name that is no identifier is written in backticks"},
		{"o.a.b", "undefined field 'a': did you mean o.`a.b`? A field name that is no identifier is written in backticks"},
		{"o.?my-field", "undefined field 'my': did you mean o.?`my-field`?"},
		{"o.my_field", "undefined field 'my_field': did you mean o.`my-field`?"},
	} {
		_, err := env.Compile(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
}

// Where an object does not fit the field it is written into, the field
// it has no place for is named as the object holds it.
func TestFitNamesFieldsAsHeld(t *testing.T) {
	str := *spec.StringProperty()
	env, err := New(Var{Name: "o", Schema: objectSchema(map[string]spec.Schema{"my-field": str, "if": str})})
	if err != nil {
		t.Fatal(err)
	}
	got := mustCompile(t, env, "o").OutputType()
	for into, want := range map[*spec.Schema]string{
		objectSchema(map[string]spec.Schema{"if": str}):                                    "which has no my-field",
		objectSchema(map[string]spec.Schema{"my-field": str}):                              "which has no if",
		objectSchema(map[string]spec.Schema{"my-field": *spec.Int64Property(), "if": str}): "whose my-field takes int, not string",
	} {
		if why, _ := env.Fit(FieldType(into), got); why != want {
			t.Errorf("Fit = %q, want %q", why, want)
		}
	}
	if why, ok := env.Fit(FieldType(objectSchema(map[string]spec.Schema{"my-field": str, "if": str})), got); !ok {
		t.Errorf("Fit into an object of the same fields = %q, want it to fit", why)
	}
}

// The provider that finds fields by their held names adapts values as the
// one it wraps does, so an environment extended from it keeps its adapter:
// the API server's environment set takes the provider for the adapter.
func TestFieldsByHeldNameAdaptsAsTheProviderItWraps(t *testing.T) {
	registry, err := celtypes.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	wrapped := adaptingProvider{Provider: registry}
	if v := (fieldsByHeldName{wrapped}).NativeToValue(marker{}); v != celtypes.String("adapted") {
		t.Errorf("NativeToValue = %v, want the wrapped provider's adaptation", v)
	}
	// A provider that is no adapter leaves Go's values to CEL's.
	providerOnly := struct{ celtypes.Provider }{registry}
	if v := (fieldsByHeldName{providerOnly}).NativeToValue("x"); v != celtypes.String("x") {
		t.Errorf("NativeToValue(x) = %v", v)
	}
}

// adaptingProvider adapts a marker its own way.
type adaptingProvider struct{ celtypes.Provider }

type marker struct{}

func (adaptingProvider) NativeToValue(v any) ref.Val {
	if _, ok := v.(marker); ok {
		return celtypes.String("adapted")
	}
	return celtypes.DefaultTypeAdapter.NativeToValue(v)
}
