package graph

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	crdSchemaRoot = regexp.MustCompile(`^spec\.(versions\[0\]\.schema|validation)\.openAPIV3Schema\.properties\[(spec|status)\]`)
	crdProperty   = regexp.MustCompile(`\.properties\[([^\]]+)\]`)
)

// inRGD maps the errors of Options.ValidateCRD, whose paths are paths into
// the generated CRD, back to the RGD fields they came from.
func inRGD(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		mapped := *e
		mapped.Field = rgdPathOf(e.Field)
		out = append(out, &mapped)
	}
	return out
}

// rgdPathOf turns a path into the generated CRD's schema into the path of
// the SimpleSchema field it came from.
func rgdPathOf(p string) string {
	m := crdSchemaRoot.FindStringSubmatchIndex(p)
	if m == nil {
		return schemaPath.String() + " (generated CRD: " + p + ")"
	}
	section := p[m[4]:m[5]]
	rest := crdProperty.ReplaceAllString(p[m[1]:], ".$1")
	// The API server's check of a default value joins the value's own
	// path to the schema's with a dot: default.[0].
	rest = strings.NewReplacer(".items", "[*]", ".additionalProperties", "[*]", ".[", "[").Replace(rest)
	return schemaPath.Child(section).String() + rest
}
