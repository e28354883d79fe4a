package crdcheck

import (
	"errors"
	"fmt"
	"testing"

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
