package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// columnWarnings are the printer columns the RGD gives whose jsonPath
// names a field the generated schema does not declare (.status.ipp for
// .status.ip): the API server takes any path, and kubectl get shows the
// column empty for every instance. Paths are followed up to the first
// bracket (a filter, an index), and not into metadata, whose schema the
// CRD leaves to the API server, a map, a list, or a field that keeps
// unknown fields.
func columnWarnings(columns []extv1.CustomResourceColumnDefinition, root *extv1.JSONSchemaProps, kind string) []string {
	var out []string
	for i, col := range columns {
		path, _, _ := strings.Cut(col.JSONPath, "[")
		if !strings.HasPrefix(path, ".") {
			continue // refused by the API server's own check
		}
		s := root
		walked := ""
		for _, step := range strings.Split(path[1:], ".") {
			if step == "" || walked == ".metadata" || s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields || s.AdditionalProperties != nil || s.Items != nil {
				break
			}
			next, ok := s.Properties[step]
			if !ok {
				names := slices.Sorted(maps.Keys(s.Properties))
				hint := fmt.Sprintf("%s has %s", strings.TrimPrefix(walked, "."), strings.Join(names, ", "))
				if walked == "" {
					hint = kind + " has " + strings.Join(names, ", ")
				}
				if meant, ok := spelling.Closest(step, names); ok {
					hint = "did you mean " + walked + "." + meant + "?"
				}
				out = append(out, fmt.Sprintf("%s: %s names no field of the schema of %s, so kubectl get shows the column %s empty: %s",
					schemaPath.Child("additionalPrinterColumns").Index(i).Child("jsonPath"), col.JSONPath, kind, col.Name, hint))
				break
			}
			s = &next
			walked += "." + step
		}
	}
	return out
}
