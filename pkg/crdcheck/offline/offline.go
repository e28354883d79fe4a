// Package offline runs the API server's own code for CustomResourceDefinitions,
// linked in, where kubectl kro needs it without asking a cluster: validation
// of a generated CRD (kubectl kro validate), and defaulting of an object
// under a CRD's schema (kubectl kro dry-run of an RGD change). It links much of the API server, which
// costs a long-running process about 14 MB of resident memory for code; the
// agent validates on its API server instead (package crdcheck).
package offline

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate runs the API server's validation of a new CRD: structural
// schema rules, defaults against their schemas, and compilation and cost
// of every x-kubernetes-validations rule. Paths are paths into the CRD.
func Validate(crd *extv1.CustomResourceDefinition) (field.ErrorList, error) {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return nil, err
	}
	// Status is filled in by the API server on create; validation wants it
	// to name the stored version.
	if len(crd.Spec.Versions) > 0 {
		internal.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	}
	return validation.ValidateCustomResourceDefinition(context.Background(), internal), nil
}

// Default fills in obj, an object of the kind crd serves, the defaults of
// the schema of crd's first version, as the API server does when it reads
// a stored object after its CRD changed.
func Default(crd *extv1.CustomResourceDefinition, obj map[string]any) error {
	if len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return fmt.Errorf("reading the schema of CustomResourceDefinition %s for its defaults: %w", crd.Name, err)
	}
	structuraldefaulting.Default(obj, s)
	return nil
}
