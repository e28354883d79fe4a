package graph

import (
	"slices"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func presentedCRD(shortNames, categories []string, columns ...extv1.CustomResourceColumnDefinition) *extv1.CustomResourceDefinition {
	return &extv1.CustomResourceDefinition{Spec: extv1.CustomResourceDefinitionSpec{
		Names:    extv1.CustomResourceDefinitionNames{Kind: "WebApp", ShortNames: shortNames, Categories: categories},
		Versions: []extv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", AdditionalPrinterColumns: columns}},
	}}
}

// What kubectl takes and prints of a kind is told apart from its schema:
// short names and categories added or removed, and printer columns added,
// removed, reading another field, typed or placed differently.
func TestPresentationChanges(t *testing.T) {
	state := extv1.CustomResourceColumnDefinition{Name: "State", Type: "string", JSONPath: ".status.state"}
	ready := extv1.CustomResourceColumnDefinition{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`}
	replicas := extv1.CustomResourceColumnDefinition{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"}
	prev := presentedCRD([]string{"wa", "web"}, []string{"all"}, state, ready, replicas)

	retyped := replicas
	retyped.JSONPath, retyped.Format = ".spec.count", "int32"
	wide := replicas
	wide.Priority = 1
	described := state
	described.Description = "where the instance is"

	for _, tc := range []struct {
		name string
		next *extv1.CustomResourceDefinition
		want []string
	}{
		{"nothing", presentedCRD([]string{"web", "wa"}, []string{"all"}, described, ready, replicas), nil},
		{"names", presentedCRD([]string{"web", "w"}, []string{"all", "platform"}, state, ready, replicas), []string{
			"short name wa removed", "short name w added", "category platform added"}},
		{"columns", presentedCRD([]string{"wa", "web"}, []string{"all"}, state, retyped, extv1.CustomResourceColumnDefinition{Name: "URL", Type: "string", JSONPath: ".status.url", Priority: 1}), []string{
			"printer column Ready removed",
			"printer column Replicas shows .spec.count instead of .spec.replicas",
			"printer column Replicas is integer (int32) instead of integer",
			"printer column URL added (.status.url, string, with -o wide)"}},
		{"order and priority", presentedCRD([]string{"wa", "web"}, []string{"all"}, wide, state, ready), []string{
			"printer column Replicas is shown only with -o wide (priority 1)",
			"printer columns State, Ready, Replicas now come in the order Replicas, State, Ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PresentationChanges(prev, tc.next); !slices.Equal(got, tc.want) {
				t.Errorf("changes:\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
	if got := PresentationChanges(prev, nil); got != nil {
		t.Errorf("changes against no CRD: %q", got)
	}
}
