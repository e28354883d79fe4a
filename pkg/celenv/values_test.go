package celenv

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

func schemaOf(t *testing.T, doc string) *spec.Schema {
	t.Helper()
	s := &spec.Schema{}
	if err := yaml.Unmarshal([]byte(doc), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Apply converts the strings of typed formats wherever the schema puts
// them (properties, map values, list items), leaves text that does not
// parse as it is, and copies only what it changes.
func TestFormatsApply(t *testing.T) {
	f := FormatsOf(schemaOf(t, `
type: object
properties:
  name: {type: string}
  due: {type: string, format: date}
  timeout: {type: string, format: duration}
  port: {x-kubernetes-int-or-string: true, format: byte}
  blobs: {type: object, additionalProperties: {type: string, format: byte}}
  events:
    type: array
    items: {type: object, properties: {at: {type: string, format: date-time}, note: {type: string}}}
  plain: {type: object, properties: {a: {type: string}}}
  ratio: {type: number}
  weights: {type: array, items: {type: number}}
  count: {type: integer}
`))
	plain := map[string]any{"a": "x"}
	in := map[string]any{
		"name": "n", "due": "2026-11-24", "timeout": "1m30s", "port": "8080",
		"blobs":  map[string]any{"k": "aGk=", "bad": "not base64!"},
		"events": []any{map[string]any{"at": "2026-11-24T10:00:00.25Z", "note": "a"}, map[string]any{"at": "yesterday"}},
		"plain":  plain,
		// JSON decoding gives a whole number as an integer.
		"ratio": int64(2), "weights": []any{int64(1), 0.5}, "count": int64(3),
	}
	got := f.Apply(in).(map[string]any)
	want := map[string]any{
		"name": "n", "due": time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), "timeout": 90 * time.Second, "port": "8080",
		"blobs":  map[string]any{"k": []byte("hi"), "bad": "not base64!"},
		"events": []any{map[string]any{"at": time.Date(2026, 11, 24, 10, 0, 0, 250e6, time.UTC), "note": "a"}, map[string]any{"at": "yesterday"}},
		"plain":  plain,
		"ratio":  float64(2), "weights": []any{float64(1), 0.5}, "count": int64(3),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Apply = %#v\nwant %#v", got, want)
	}
	if in["due"] != "2026-11-24" || in["blobs"].(map[string]any)["k"] != "aGk=" {
		t.Error("Apply changed its input")
	}
	if reflect.ValueOf(got["plain"]).Pointer() != reflect.ValueOf(plain).Pointer() {
		t.Error("a map without typed strings was copied")
	}
	// Converted values, and text that does not parse, are left as they
	// are: a second pass copies nothing.
	if again := f.Apply(got).(map[string]any); reflect.ValueOf(again).Pointer() != reflect.ValueOf(got).Pointer() {
		t.Error("applying to converted values copied the object")
	}
}

// A schema without typed strings needs no conversion at all.
func TestFormatsOfPlainSchemaIsNil(t *testing.T) {
	f := FormatsOf(schemaOf(t, `{type: object, properties: {data: {type: object, additionalProperties: {type: string}}, n: {type: integer}}}`))
	if f != nil {
		t.Errorf("FormatsOf = %+v, want nil", f)
	}
	in := map[string]any{"n": int64(1)}
	if got := f.Apply(in); !reflect.DeepEqual(got, in) {
		t.Errorf("nil Formats changed %v to %v", in, got)
	}
}
