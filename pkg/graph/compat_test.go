package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// What names the generated API may not change; an unset group or scope is
// its default, as a file not yet defaulted by the API server leaves them.
func TestImmutableChanges(t *testing.T) {
	stored := &v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "WebApp", Group: "kro.run", Scope: v1alpha1.ScopeNamespaced}
	for _, tc := range []struct {
		name string
		next v1alpha1.Schema
		want []string
	}{
		{"defaults left unset", v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "WebApp"}, nil},
		{"another kind", v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "Site"},
			[]string{`spec.schema.kind: Forbidden: kind is immutable (was "WebApp"); create a new RGD instead`}},
		{"another version and group", v1alpha1.Schema{APIVersion: "v1", Kind: "WebApp", Group: "example.com"}, []string{
			`spec.schema.apiVersion: Forbidden: apiVersion is immutable (was "v1alpha1"); create a new RGD instead`,
			`spec.schema.group: Forbidden: group is immutable (was "kro.run"); create a new RGD instead`}},
		{"cluster-scoped", v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "WebApp", Scope: v1alpha1.ScopeCluster},
			[]string{`spec.schema.scope: Forbidden: scope is immutable (was "Namespaced"); create a new RGD instead`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := &v1alpha1.ResourceGraphDefinition{Spec: v1alpha1.ResourceGraphDefinitionSpec{Schema: stored}}
			rgd := &v1alpha1.ResourceGraphDefinition{Spec: v1alpha1.ResourceGraphDefinitionSpec{Schema: &tc.next}}
			errs := ImmutableChanges(old, rgd)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ImmutableChanges = %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("error %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// Every change to the instance API an RGD change makes is told, in path
// order; only those that would break stored instances are breaking.
func TestSchemaChanges(t *testing.T) {
	crd := func(spec, status string) *extv1.CustomResourceDefinition {
		t.Helper()
		g, err := Compile(parseRGD(t, `
metadata: {name: shop}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Shop
    spec: `+spec+`
    status: `+status+`
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}, data: {a: "x"}}
`), Options{Resolver: builtin(t)})
		if err != nil {
			t.Fatal(err)
		}
		return g.CRD
	}
	prev := crd(`{name: "string | required=true", replicas: "integer | default=1 maximum=5", size: "string | enum=s,m", old: string, extra: object, ports: {http: integer}, cfg: {a: string}}`,
		`{data: "${cm.data}", gone: "${cm.metadata.name}"}`)
	next := crd(`{name: "string | validation=\"self.size() < 10\"", replicas: "integer | default=2 maximum=5", size: "string | enum=s,m,l", owner: "string | required=true", tier: "string | default=gold", extra: "map[string]string", ports: {http: string, https: integer}, cfg: object}`,
		`{data: "${cm.data}", uid: "${cm.metadata.uid}"}`)
	want := []SchemaChange{
		{Path: "spec.cfg", Description: "spec.cfg now keeps fields its schema does not name"},
		{Path: "spec.cfg.a", Description: "spec.cfg.a was removed from the schema (its values are kept: spec.cfg is free-form)"},
		{Path: "spec.extra", Description: "spec.extra changed type from free-form object to map of string", Breaking: true},
		{Path: "spec.name", Description: `spec.name validation rule "self.size() < 10" added`},
		{Path: "spec.name", Description: "spec.name is no longer required"},
		{Path: "spec.old", Description: "spec.old was removed", Breaking: true},
		{Path: "spec.owner", Description: "spec.owner is newly required", Breaking: true},
		{Path: "spec.ports.http", Description: "spec.ports.http changed type from integer to string", Breaking: true},
		{Path: "spec.ports.https", Description: "spec.ports.https was added (integer)"},
		{Path: "spec.replicas", Description: "spec.replicas default changed from 1 to 2"},
		{Path: "spec.size", Description: `spec.size enum changed from ["s", "m"] to ["s", "m", "l"]`},
		{Path: "spec.tier", Description: `spec.tier was added (string, default "gold")`},
		{Path: "status.gone", Description: "status.gone was removed"},
		{Path: "status.uid", Description: "status.uid was added (string)"},
	}
	got := SchemaChanges(prev, next)
	if !slices.Equal(got, want) {
		t.Errorf("SchemaChanges =\n%s\nwant\n%s", changesText(got), changesText(want))
	}
	if got := BreakingChanges(prev, next); !slices.Equal(got, []string{"spec.extra changed type from free-form object to map of string", "spec.old was removed", "spec.owner is newly required", "spec.ports.http changed type from integer to string"}) {
		t.Errorf("BreakingChanges = %q", got)
	}
	if got := SchemaChanges(prev, prev); len(got) != 0 {
		t.Errorf("a schema against itself: %s", changesText(got))
	}
	if got := SchemaChanges(nil, next); len(got) != 0 {
		t.Errorf("no CRD yet: %s", changesText(got))
	}
}

func changesText(cs []SchemaChange) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s (breaking %v)\n", c.Description, c.Breaking)
	}
	return b.String()
}
