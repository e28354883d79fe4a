package graph

import "testing"

// Paths into the generated CRD are told as the RGD fields they came from.
func TestRGDPathOf(t *testing.T) {
	for crd, want := range map[string]string{
		"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[ports].items.default": "spec.schema.spec.ports[*].default",
		"spec.names.shortNames[1]":                          "spec.schema.shortNames[1]",
		"spec.names.shortNames":                             "spec.schema.shortNames",
		"spec.names.categories[0]":                          "spec.schema.categories[0]",
		"spec.additionalPrinterColumns[2].JSONPath":         "spec.schema.additionalPrinterColumns[2].jsonPath",
		"spec.versions[0].additionalPrinterColumns[0].type": "spec.schema.additionalPrinterColumns[0].type",
		"spec.names.plural":                                 "spec.schema (generated CRD: spec.names.plural)",
		"spec.group":                                        "spec.schema.group",
		"spec.names.kind":                                   "spec.schema.kind",
		"spec.versions[0].name":                             "spec.schema.apiVersion",
		"spec.scope":                                        "spec.schema.scope",
		"metadata.annotations[api-approved.kubernetes.io]":  "spec.schema.metadata.annotations[api-approved.kubernetes.io]",
		"metadata.labels":                                   "spec.schema.metadata.labels",
		"metadata.name":                                     "spec.schema (generated CRD: metadata.name)",
	} {
		if got := rgdPathOf(crd); got != want {
			t.Errorf("rgdPathOf(%s) = %s, want %s", crd, got, want)
		}
	}
}
