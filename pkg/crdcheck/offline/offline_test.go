package offline

import (
	"reflect"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const tieredCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: apps.example.com}
spec:
  group: example.com
  names: {kind: App, plural: apps}
  scope: Namespaced
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
            default: {}
            properties:
              tier: {type: string, default: gold}
              replicas: {type: integer, default: 2}
`

// A stored object read under a changed CRD gets the new fields' defaults,
// and keeps the values it has.
func TestDefault(t *testing.T) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(tieredCRD), crd); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "App", "spec": map[string]any{"replicas": int64(5)}}
	if err := Default(crd, obj); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"replicas": int64(5), "tier": "gold"}; !reflect.DeepEqual(obj["spec"], want) {
		t.Errorf("spec = %v, want %v", obj["spec"], want)
	}
	empty := map[string]any{"apiVersion": "example.com/v1", "kind": "App"}
	if err := Default(crd, empty); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"replicas": int64(2), "tier": "gold"}; !reflect.DeepEqual(empty["spec"], want) {
		t.Errorf("spec of an object without one = %v, want %v", empty["spec"], want)
	}
}
