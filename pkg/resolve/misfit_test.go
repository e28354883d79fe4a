package resolve

import (
	"errors"
	"strings"
	"testing"
)

// An instance stored before its schema changed a field's type (an RGD
// change allowed to break it) holds a value of the old type. An
// expression that reads it fails naming the field, its value and the type
// the schema declares, in whatever way it reads it; one that reads other
// fields goes on.
func TestInstanceFieldsOfAnEarlierSchemaAreNamed(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: misfit}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Misfit
    spec:
      key: string
      count: string
      ports: "[]integer"
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}
      data:
        key: ${schema.spec.key}
        count: ${schema.spec.count}
        embedded: n-${schema.spec.count}
        optional: ${schema.spec.?count.orValue("none")}
        whole: ${json.marshal(schema.spec)}
        ports: ${json.marshal(schema.spec.ports.map(p, p + 1))}
        present: '${has(schema.spec.key) ? "yes" : "no"}'
`)
	cm := g.Node("cm")
	s := NewScope(g, obj(t, `{metadata: {name: i}, spec: {key: k, count: 3, ports: [80, "81"]}}`))

	for path, field := range map[string]string{
		"data.count":    "spec.count",
		"data.embedded": "spec.count",
		"data.optional": "spec.count",
		"data.whole":    "spec.count",
		"data.ports":    "spec.ports[1]",
	} {
		_, _, err := FieldValue(fieldAt(t, cm, path), s)
		var misfit *MisfitError
		if !errors.As(err, &misfit) {
			t.Errorf("%s = %v, want a MisfitError", path, err)
			continue
		}
		if misfit.At.String() != field {
			t.Errorf("%s: the field named is %s, want %s (%v)", path, misfit.At, field, err)
		}
		if errors.Is(err, ErrPending) {
			t.Errorf("%s: %v is pending; only a change to the instance resolves it", path, err)
		}
	}
	_, _, err := FieldValue(fieldAt(t, cm, "data.count"), s)
	want := "data.count: ${schema.spec.count} reads spec.count, which holds 3 (an int), where string is expected by the instance's schema"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("data.count: %v, want it to start with %q", err, want)
	}

	for path, value := range map[string]string{"data.key": "k", "metadata.name": "i", "data.present": "yes"} {
		if v, _, err := FieldValue(fieldAt(t, cm, path), s); err != nil || v != value {
			t.Errorf("%s = %v, %v; want %q: it does not read what does not fit", path, v, err, value)
		}
	}
	if _, err := Render(cm, NewScope(g, obj(t, `{metadata: {name: i}, spec: {key: k, count: "3", ports: [80]}}`))); err != nil {
		t.Errorf("Render of an instance that fits: %v", err)
	}
}
