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

// validationRule is the path of a rule a validation marker (or immutable)
// put into the generated CRD's schema.
var validationRule = regexp.MustCompile(`\.x-kubernetes-validations\[\d+\]\.rule$`)

// inRGD maps the errors of Options.ValidateCRD, whose paths are paths into
// the generated CRD, back to the RGD fields they came from. A rule the API
// server refuses is named as the marker that gave it, at its field, as the
// errors of the other markers are (spec.schema.spec.a: "validation=...").
func inRGD(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		mapped := *e
		if loc := validationRule.FindStringIndex(e.Field); loc != nil && crdSchemaRoot.MatchString(e.Field) {
			if rule, ok := e.BadValue.(string); ok {
				mapped.Field, mapped.BadValue = e.Field[:loc[0]], "validation="+rule
			}
		}
		mapped.Field = rgdPathOf(mapped.Field)
		if p, ok := mapped.BadValue.(string); ok && strings.HasSuffix(mapped.Field, ".jsonPath") && strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			// A path as kubectl get -o jsonpath takes it.
			mapped.Detail += ": write " + strings.TrimSpace(p[1:len(p)-1]) + ", without the braces kubectl get -o jsonpath wants"
		}
		out = append(out, &mapped)
	}
	return out
}

// crdCopied are the fields of the generated CRD copied from the RGD's
// schema as they are, item for item, and where they came from. (Printer
// columns given replace the defaults, so their indices are the RGD's; the
// API server's check names them at the top of the spec or in the version.
// The CRD's own labels are checked with the RGD's name before, so an error
// in its labels or annotations is in those the RGD gives, or, as the
// approval annotation of a protected group, one it should give.)
var crdCopied = []struct{ crd, rgd string }{
	{"spec.additionalPrinterColumns", "additionalPrinterColumns"},
	{"spec.versions[0].additionalPrinterColumns", "additionalPrinterColumns"},
	{"spec.names.shortNames", "shortNames"},
	{"spec.names.categories", "categories"},
	{"spec.names.kind", "kind"},
	{"spec.group", "group"},
	{"spec.scope", "scope"},
	{"spec.versions[0].name", "apiVersion"},
	{"metadata.labels", "metadata.labels"},
	{"metadata.annotations", "metadata.annotations"},
}

// rgdPathOf turns a path into the generated CRD into the path of the RGD
// field it came from: a SimpleSchema field, or a field copied from the
// schema.
func rgdPathOf(p string) string {
	for _, c := range crdCopied {
		if rest, ok := strings.CutPrefix(p, c.crd); ok && (rest == "" || strings.HasPrefix(rest, "[")) {
			// The API server's check names a column's jsonPath by its
			// Go field.
			return schemaPath.Child(c.rgd).String() + strings.Replace(rest, ".JSONPath", ".jsonPath", 1)
		}
	}
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
