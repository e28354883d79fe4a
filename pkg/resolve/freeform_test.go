package resolve

import (
	"reflect"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// allowUnknownCRD has free-form fields: an object that preserves unknown
// fields, and maps of such values (kro's unknown-fields scenario).
const allowUnknownCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: allowunknowns.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: allowunknowns, kind: AllowUnknown}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
              anyMap: {type: object, additionalProperties: {x-kubernetes-preserve-unknown-fields: true}}
              size: {type: string}
          status:
            type: object
            properties:
              additional: {type: object, additionalProperties: {x-kubernetes-preserve-unknown-fields: true}}
`

// Fields whose content the schema leaves open are dyn in expressions, as
// in kro: their keys are read, optionally or not, and they are written
// whole into other free-form fields; typed fields stay checked.
func TestFreeFormFieldsAreDyn(t *testing.T) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(allowUnknownCRD), crd); err != nil {
		t.Fatal(err)
	}
	builtin, _ := kinds.Builtin()
	declared := kinds.NewDeclared(builtin)
	declared.Add(crd)
	compile := func(doc string) (*graph.Graph, error) {
		rgd := &v1alpha1.ResourceGraphDefinition{}
		if err := yaml.Unmarshal([]byte(doc), rgd); err != nil {
			t.Fatal(err)
		}
		return graph.Compile(rgd, graph.Options{Resolver: declared})
	}
	g, err := compile(`
spec:
  schema:
    apiVersion: v1alpha1
    kind: Reader
    spec: {name: string, nested: object}
  resources:
  - id: external
    externalRef: {apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing}}
  - id: copy
    template:
      apiVersion: example.com/v1
      kind: AllowUnknown
      metadata: {name: "${schema.spec.name}"}
      spec:
        config: ${external.spec.config}
        anyMap: {key: "${external.status.additional.?key.orValue('none')}"}
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}"}
      data:
        foo: ${external.spec.config.foo}
        nested: ${schema.spec.nested.field}
        missing: ${external.status.additional.?abc.orValue("default")}
`)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScope(g, obj(t, `{metadata: {name: r, namespace: default}, spec: {name: r, nested: {field: value}}}`))
	s.Observe(g.Node("external"), obj(t, `{apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing},
  spec: {config: {foo: bar, deep: {a: 1}}}, status: {additional: {key: value}}}`))
	copied, err := Render(g.Node("copy"), s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"config": map[string]any{"foo": "bar", "deep": map[string]any{"a": int64(1)}}, "anyMap": map[string]any{"key": "value"}}; !reflect.DeepEqual(copied["spec"], want) {
		t.Errorf("copy spec = %v, want %v", copied["spec"], want)
	}
	cm, err := Render(g.Node("cm"), s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"foo": "bar", "nested": "value", "missing": "default"}; !reflect.DeepEqual(cm["data"], want) {
		t.Errorf("data = %v, want %v", cm["data"], want)
	}

	// A typed field of the same kind is still checked.
	_, err = compile(`
spec:
  schema: {apiVersion: v1alpha1, kind: Reader, spec: {name: string}}
  resources:
  - id: external
    externalRef: {apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing}}
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {size: "${external.spec.size.foo}"}}
`)
	if err == nil {
		t.Error("a field of a string was read without error")
	}
}
