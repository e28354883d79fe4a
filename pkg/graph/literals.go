package graph

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// checkLiterals reports the literal values of a template that its kind's
// schema types otherwise, and warns of the fields it requires that the
// template leaves out (warnRequiredLeftOut). The API server refuses such an object at every
// apply, and most are YAML's doing rather than the author's: an unquoted
// on, yes or no read as a boolean, 8080 as a number where a string is
// expected. Expressions are checked where they are compiled; fields the
// schema leaves open (int-or-string, preserve-unknown-fields) are not.
func (c *compiler) checkLiterals(v any, p expr.Path, s *spec.Schema, base *field.Path, custom bool) {
	if s == nil || v == nil || isFreeForm(s) {
		return
	}
	if msg := literalMismatch(v, s); msg != "" {
		c.errs = append(c.errs, field.Invalid(p.FieldPath(base), literalShown(v), msg))
		return
	}
	c.warnNotInEnum(v, p, s, base)
	c.warnNotBase64(v, p, s, base)
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			child := p.Child(k)
			if isTemplateName(child) {
				continue // checked with the rest of the metadata
			}
			if cs, known := schemaAt(s, expr.Path{{Key: k}}); known {
				c.checkLiterals(x[k], child, cs, base, custom)
			}
		}
		c.warnRequiredLeftOut(x, p, s, base, custom)
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		for i, item := range x {
			c.checkLiterals(item, p.Index(i), s.Items.Schema, base, custom)
		}
		c.warnDuplicateKeys(x, p, s, base)
	}
}

// warnRequiredLeftOut notes a warning for each field the schema s of the
// template's map m (at p) requires and m leaves out (a Deployment's
// selector, a container's name): the API server refuses every object so
// written. For a custom kind (custom), one its schema defaults is not
// left out; a built-in kind's published defaults ("" for a name) are the
// zero values its Go types default to, and do not make a field given. A
// map given whole by an expression is not checked, nor the status of the
// object, which its controller writes.
func (c *compiler) warnRequiredLeftOut(m map[string]any, p expr.Path, s *spec.Schema, base *field.Path, custom bool) {
	for _, r := range s.Required {
		if _, given := m[r]; given || len(p) == 0 && r == "status" {
			continue
		}
		if prop, ok := s.Properties[r]; ok && prop.Default != nil && custom {
			continue
		}
		c.warnings = append(c.warnings, fmt.Sprintf("%s: required, and the template leaves it out, so the API server refuses every object so written", p.Child(r).FieldPath(base)))
	}
}

// warnDuplicateKeys notes a warning for two items of a list the schema
// keys (x-kubernetes-list-type: map, such as containers by name, or set)
// whose keys, written without expressions, are the same: server-side
// apply, as kro-agent writes, refuses every object so written.
func (c *compiler) warnDuplicateKeys(items []any, p expr.Path, s *spec.Schema, base *field.Path) {
	listType, _ := s.Extensions["x-kubernetes-list-type"].(string)
	var keys []string
	switch listType {
	case "map":
		names, _ := s.Extensions["x-kubernetes-list-map-keys"].([]any)
		for _, n := range names {
			if n, ok := n.(string); ok {
				keys = append(keys, n)
			}
		}
		if len(keys) == 0 {
			return
		}
	case "set":
	default:
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		var key string
		if listType == "set" {
			text, ok := item.(string)
			if !ok || strings.Contains(text, "${") {
				continue
			}
			key = strconv.Quote(text)
		} else {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			var parts []string
			for _, k := range keys {
				v, given := m[k]
				text := fmt.Sprint(v)
				if !given || strings.Contains(text, "${") {
					parts = nil
					break
				}
				parts = append(parts, k+"="+text)
			}
			if parts == nil {
				continue
			}
			key = strings.Join(parts, ", ")
		}
		if first, ok := seen[key]; ok {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: repeats item %d's key (%s), and server-side apply, as kro-agent writes, refuses a list with two items of one key for every object so written",
				p.Index(i).FieldPath(base), first, key))
			continue
		}
		seen[key] = i
	}
}

// warnNotInEnum notes a warning for a text written without expressions
// that the field's enum does not hold (type: Loadbalancer, protocol: tcp):
// the API server refuses every object so written. A warning, not an
// error, as a built-in kind's published enum may lag its server's.
func (c *compiler) warnNotInEnum(v any, p expr.Path, s *spec.Schema, base *field.Path) {
	text, ok := v.(string)
	if !ok || len(s.Enum) == 0 || strings.Contains(text, "${") {
		return
	}
	var values []string
	for _, e := range s.Enum {
		if e, ok := e.(string); ok {
			if e == text {
				return
			}
			values = append(values, e)
		}
	}
	if len(values) == 0 {
		return
	}
	msg := fmt.Sprintf("%s: %q is not one of the values the field takes (%s), so the API server refuses every object so written", p.FieldPath(base), text, strings.Join(values, ", "))
	if i := slices.IndexFunc(values, func(e string) bool { return strings.EqualFold(e, text) }); i >= 0 {
		msg += ": write " + values[i]
	} else if meant, ok := spelling.Closest(text, values); ok {
		msg += ": did you mean " + meant + "?"
	}
	c.warnings = append(c.warnings, msg)
}

// warnNotBase64 notes a warning for a text written without expressions
// where bytes go (a Secret's data, a caBundle) that is not base64: the API
// server refuses every object so written, in its decoder's words alone
// (illegal base64 data at input byte 7). The warning gives the text in
// base64, as it is most often meant to be.
func (c *compiler) warnNotBase64(v any, p expr.Path, s *spec.Schema, base *field.Path) {
	text, ok := literalText(v)
	if !ok || s.Format != "byte" || celenv.IsBase64(text) {
		return
	}
	c.warnings = append(c.warnings, fmt.Sprintf("%s: %q is not base64, and the API server refuses every object so written: the field holds bytes, written in base64 (write %s for this text)%s",
		p.FieldPath(base), text, base64.StdEncoding.EncodeToString([]byte(text)), stringDataAdvice(p)))
}

// warnTextNeverBase64 notes a warning for text with expressions in it,
// written where bytes go, whose own characters are none of base64's (a
// colon, a space): whatever the expressions give, the API server refuses
// every object so written. raw is the text as written.
func (c *compiler) warnTextNeverBase64(f expr.Field, base *field.Path, raw string) {
	for _, seg := range f.Segments {
		if !seg.IsExpr && !celenv.IsBase64Text(seg.Literal) {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %q can never be base64, as %q is not, and the API server refuses every object so written: the field holds bytes, written in base64; write ${bytes(...)} of the text%s",
				f.Path.FieldPath(base), raw, seg.Literal, stringDataAdvice(f.Path)))
			return
		}
	}
}

// stringDataAdvice offers a Secret's stringData for text written into its
// data (the only data of bytes at the top of a kind), "" elsewhere.
func stringDataAdvice(p expr.Path) string {
	if len(p) == 2 && p[0].Key == "data" {
		return ", or give it under stringData, which takes text as it is"
	}
	return ""
}

// literalText is v, a text written without expressions; false for
// anything else, and for a field left out.
func literalText(v any) (string, bool) {
	text, ok := v.(string)
	return text, ok && !strings.Contains(text, "${")
}

// isTemplateName tells the path of a template's metadata.name.
func isTemplateName(p expr.Path) bool {
	return len(p) == 2 && p[0].Key == "metadata" && p[1].Key == "name" && !p[0].IsIndex && !p[1].IsIndex
}

// literalMismatch says how v is not of the type s declares, or "".
func literalMismatch(v any, s *spec.Schema) string {
	if len(s.Type) != 1 {
		return ""
	}
	want := s.Type[0]
	switch x := v.(type) {
	case string:
		switch {
		case want == "string" || strings.Contains(x, "${"):
			return ""
		case want == "boolean" && (x == "true" || x == "false"),
			want == "integer" && isInteger(x),
			want == "number" && isNumber(x):
			return fmt.Sprintf("the field expects %s, not the string %q: write it without quotes", typeWanted(want), x)
		}
	case bool:
		if want == "boolean" {
			return ""
		}
		b := strconv.FormatBool(x)
		words := celenv.YAMLBooleanWords(b)
		msg := fmt.Sprintf("the field expects %s, not the boolean %s", typeWanted(want), b)
		if want == "string" {
			msg += fmt.Sprintf(" (YAML reads an unquoted %s or %s as one): quote it", strings.Join(words, ", "), b)
		}
		return msg
	case int64, float64:
		if want == "number" || want == "integer" && isIntegral(x) {
			return ""
		}
		msg := fmt.Sprintf("the field expects %s, not the number %v", typeWanted(want), x)
		if want == "string" {
			msg += ": quote it"
		}
		return msg
	case map[string]any:
		if want == "object" {
			return ""
		}
	case []any:
		if want == "array" {
			return ""
		}
	default:
		return ""
	}
	return fmt.Sprintf("the field expects %s, not %s", typeWanted(want), typeGiven(v))
}

// typeWanted names an OpenAPI type with its article.
func typeWanted(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

// typeGiven names the type of a template value.
func typeGiven(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// literalShown is how a literal reads in the error: scalars as written,
// objects and lists by their type (their contents would say nothing).
func literalShown(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		return typeGiven(v)
	}
	return v
}

func isIntegral(n any) bool {
	f, ok := n.(float64)
	return !ok || f == math.Trunc(f)
}

func isInteger(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
