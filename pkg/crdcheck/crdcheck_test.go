package crdcheck

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFieldErrorsPrintAsTheAPIServerPrintedThem(t *testing.T) {
	rule := field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema", "properties[spec]", "x-kubernetes-validations").Index(0).Child("rule")
	sent := field.ErrorList{
		field.Invalid(rule, "self >", "compilation failed: ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>'"),
		field.Required(field.NewPath("spec", "names", "plural"), ""),
		field.Forbidden(field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema", "type"), "must be object at the root"),
		field.NotSupported(field.NewPath("spec", "scope"), "Galaxy", []string{"Cluster", "Namespaced"}),
	}
	err := apierrors.NewInvalid(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, "apps.kro.run", sent)

	got := fieldErrors(fmt.Errorf("wrapped: %w", err))
	if len(got) != len(sent) {
		t.Fatalf("got %d errors, want %d: %v", len(got), len(sent), got)
	}
	for i := range sent {
		if got[i].Error() != sent[i].Error() {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i].Error(), sent[i].Error())
		}
		if got[i].Field != sent[i].Field || got[i].Type != sent[i].Type {
			t.Errorf("error %d: field %s type %s, want %s %s", i, got[i].Field, got[i].Type, sent[i].Field, sent[i].Type)
		}
	}
}

// An error about a rule's expression, which the API server prints with the
// whole rule as a Go struct, names the expression.
func TestFieldErrorsQuoteTheExpressionOfARule(t *testing.T) {
	rules := field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema", "properties[spec]", "x-kubernetes-validations")
	rule := apiextensions.ValidationRule{Rule: "self.size() > 'x'", MessageExpression: "'too ' + 1"}
	sent := field.ErrorList{
		field.Invalid(rules.Index(0).Child("rule"), rule, "compilation failed: ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(int, string)'"),
		field.Invalid(rules.Index(0).Child("messageExpression"), rule, "messageExpression compilation failed: ERROR: <input>:1:8: found no matching overload"),
	}
	want := []string{
		`spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "self.size() > 'x'": compilation failed: ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(int, string)'`,
		`spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: "'too ' + 1": messageExpression compilation failed: ERROR: <input>:1:8: found no matching overload`,
	}
	got := fieldErrors(apierrors.NewInvalid(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, "apps.kro.run", sent))
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Error() != want[i] {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i].Error(), want[i])
		}
	}
}

func TestFieldErrorsOnlyForInvalid(t *testing.T) {
	gr := schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
	for _, err := range []error{
		apierrors.NewForbidden(gr, "apps.kro.run", errors.New("no")),
		apierrors.NewServiceUnavailable("etcd is down"),
		errors.New("connection refused"),
	} {
		if got := fieldErrors(err); got != nil {
			t.Errorf("%v: got field errors %v; it says nothing about the CRD", err, got)
		}
	}
}
