package graph

import (
	"context"
	"regexp"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkCRD runs the API server's own CRD validation on the generated CRD:
// structural schema rules, defaults against their schemas, and compilation
// and cost of every x-kubernetes-validations rule. What it finds would
// otherwise surface only when the agent applies the CRD. Its paths are
// mapped back to the RGD field the author wrote.
func checkCRD(crd *extv1.CustomResourceDefinition) field.ErrorList {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(schemaPath, err)}
	}
	// Status is filled in by the API server on create; validation wants it
	// to name the stored version.
	internal.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	var out field.ErrorList
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), internal) {
		mapped := *e
		mapped.Field = rgdPathOf(e.Field)
		out = append(out, &mapped)
	}
	return out
}

var (
	crdSchemaRoot = regexp.MustCompile(`^spec\.(versions\[0\]\.schema|validation)\.openAPIV3Schema\.properties\[(spec|status)\]`)
	crdProperty   = regexp.MustCompile(`\.properties\[([^\]]+)\]`)
)

// rgdPathOf turns a path into the generated CRD's schema into the path of
// the SimpleSchema field it came from.
func rgdPathOf(p string) string {
	m := crdSchemaRoot.FindStringSubmatchIndex(p)
	if m == nil {
		return schemaPath.String() + " (generated CRD: " + p + ")"
	}
	section := p[m[4]:m[5]]
	rest := crdProperty.ReplaceAllString(p[m[1]:], ".$1")
	rest = strings.NewReplacer(".items", "[*]", ".additionalProperties", "[*]").Replace(rest)
	return schemaPath.Child(section).String() + rest
}
