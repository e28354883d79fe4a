package graph

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// defaultedRGD has defaults at every depth: in nested structs, in a
// custom type used in a list and in a map, and a struct whose own default
// brings its fields' defaults.
const defaultedRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: defaulted}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Defaulted
    types:
      Port: {name: string, port: "integer | default=80"}
    spec:
      name: string | required=true
      tier: string | default=gold
      replicas: integer | default=2
      ratio: float | default=0.5
      tags: "[]string | default=[\"a\",\"b\"]"
      ports: "[]Port"
      byName: "map[string]Port"
      ingress:
        enabled: boolean | default=false
        host: string | default=example.local
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}"}
      data: {tier: "${schema.spec.tier}"}
`

// The defaults the agent fills into an instance read from its cache are
// those the API server's own structural defaulting fills in, and the
// instance read is left as it was.
func TestDefaultsMatchTheAPIServers(t *testing.T) {
	g, err := Compile(parseRGD(t, defaultedRGD), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	crd := structural(t, g)
	for _, tc := range []struct {
		name string
		spec map[string]any
	}{
		{"nothing set", map[string]any{"name": "x"}},
		{"everything set", map[string]any{"name": "x", "tier": "silver", "replicas": int64(3), "ratio": 1.5, "tags": []any{},
			"ingress": map[string]any{"enabled": true, "host": "h"}, "ports": []any{}, "byName": map[string]any{}}},
		{"a struct partly set", map[string]any{"name": "x", "ingress": map[string]any{"enabled": true}}},
		{"items of a list and values of a map", map[string]any{"name": "x",
			"ports":  []any{map[string]any{"name": "http"}, map[string]any{"name": "admin", "port": int64(9090)}},
			"byName": map[string]any{"metrics": map[string]any{"name": "m"}}}},
		{"a null where a default is", map[string]any{"name": "x", "tier": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// With a status kro-agent wrote: the defaults a status-less
			// instance reads with are the API server's alone.
			instance := map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "Defaulted", "metadata": map[string]any{"name": "d"}, "spec": tc.spec,
				"status": map[string]any{"observedGeneration": int64(1)}}
			before := runtime.DeepCopyJSON(instance)
			want := runtime.DeepCopyJSON(instance)
			structuraldefaulting.Default(want, crd)

			got := g.InstanceDefaults.Apply(instance)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("defaulted:\n got %v\nwant %v", got, want)
			}
			if filled := !reflect.DeepEqual(want, before); filled != (tc.name != "everything set") {
				t.Errorf("the API server filled in defaults: %v; the case is wrong", filled)
			}
			if !reflect.DeepEqual(instance, before) {
				t.Errorf("the instance read was changed: %v, was %v", instance, before)
			}
		})
	}
}

// structural is the generated CRD's schema as the API server's defaulting
// reads it.
func structural(t *testing.T, g *Graph) *structuralschema.Structural {
	t.Helper()
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An instance with nothing to default is returned as it is, not copied:
// the agent applies the defaults on every reconcile.
func TestDefaultsCopyNothingWhenNothingIsMissing(t *testing.T) {
	g, err := Compile(parseRGD(t, defaultedRGD), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	full := map[string]any{"spec": map[string]any{"name": "x", "tier": "t", "replicas": int64(1), "ratio": 1.0, "tags": []any{},
		"ingress": map[string]any{"enabled": true, "host": "h"}}} // and no status: the agent has not written it yet
	if got := g.InstanceDefaults.Apply(full); reflect.ValueOf(got).Pointer() != reflect.ValueOf(full).Pointer() {
		t.Error("an instance with every default set was copied")
	}
	if allocs := testing.AllocsPerRun(100, func() { g.InstanceDefaults.Apply(full) }); allocs > 0 {
		t.Errorf("Apply of a complete instance allocates %v times", allocs)
	}
}

// The defaults read from a custom kind's published OpenAPI schema are those
// of the CRD's own: an RGD composing another fills the inner instances it
// reads from its cache as the API server fills them, status and all.
func TestDefaultsOfPublishedSchemaAreTheCRDs(t *testing.T) {
	g, err := Compile(parseRGD(t, defaultedRGD), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	published := &spec.Schema{}
	if err := json.Unmarshal(raw, published); err != nil {
		t.Fatal(err)
	}
	d := DefaultsOfPublished(published)
	instance := map[string]any{"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"name": "x",
		"ports": []any{map[string]any{"name": "http"}}, "ingress": map[string]any{"enabled": true}}}
	want := runtime.DeepCopyJSON(instance)
	structuraldefaulting.Default(want, structural(t, g))
	if got := d.Apply(instance); !reflect.DeepEqual(got, want) {
		t.Errorf("defaulted from the published schema:\n got %v\nwant %v", got, want)
	}
	if DefaultsOfPublished(nil) != nil {
		t.Error("defaults of no schema")
	}
}
