package graph

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// RenderedFrom tells which of the template's strings with expressions gave
// the fields the API server refused in an object of n (fields as its
// causes name them: metadata.name, spec.template.spec.containers[0].image,
// data[key]), so that the instance's author, who never wrote the object,
// sees which of the instance's values to change: "metadata.name is
// rendered from ${schema.spec.name}-app", a clause for each field at or
// below a string with expressions. "" when no expression wrote any.
func (n *Node) RenderedFrom(fields []string) string {
	var clauses []string
	for _, f := range fields {
		refused := normalFieldPath(f)
		for _, tf := range n.Fields {
			at := tf.Path.FieldPath(nil).String()
			if !expr.HasExpr(tf.Segments) || !(refused == at || strings.HasPrefix(refused, at+".") || strings.HasPrefix(refused, at+"[")) {
				continue
			}
			verb := "is rendered from"
			if refused != at {
				verb = fmt.Sprintf("is in %s, rendered from", at)
			}
			clauses = append(clauses, fmt.Sprintf("%s %s %s", f, verb, expr.Format(tf.Segments)))
			break
		}
	}
	return strings.Join(clauses, "; ")
}

// mapKey is a map key in a field path as the API server's validation
// writes it ([key]); a list index ([0]) is left as it is.
var mapKey = regexp.MustCompile(`\[([^\]]*[^0-9\]][^\]]*)\]`)

// normalFieldPath writes map keys as the template's paths do (.key), so
// that the two compare.
func normalFieldPath(p string) string {
	return mapKey.ReplaceAllString(p, ".$1")
}
