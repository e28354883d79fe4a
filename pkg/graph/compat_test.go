package graph

import (
	"testing"

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
