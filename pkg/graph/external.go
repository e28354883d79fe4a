package graph

import (
	"fmt"
	"maps"
	"slices"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// IsExternalCollection reports whether the node is an externalRef that
// selects a list of objects by labels: in expressions it is a list.
func (n *Node) IsExternalCollection() bool {
	return n.External != nil && n.External.Metadata.HasSelector()
}

// compileExternal compiles the expressions of an externalRef's metadata
// (name, namespace, selector) and keeps the metadata as an object to
// render them into.
func (c *compiler) compileExternal(n *Node, path *field.Path, addDeps func([]string)) {
	meta := map[string]any{}
	if m := n.External.Metadata; m.Name != "" || !m.HasSelector() {
		meta["name"] = m.Name
	}
	if ns := n.External.Metadata.Namespace; ns != "" {
		meta["namespace"] = ns
	}
	if n.External.Metadata.HasSelector() {
		sel, ok := c.selectorShape(n, path.Child("metadata", "selector"))
		if !ok {
			return
		}
		meta["selector"] = sel
	}
	n.Reference = map[string]any{"metadata": meta}
	fields, errs := expr.Find(n.Reference, path)
	c.errs = append(c.errs, errs...)
	for _, f := range fields {
		if cf := c.compileField(c.env, f, path, referenceSchema); cf != nil {
			n.Fields = append(n.Fields, cf)
			addDeps(cf.References())
		}
	}
}

// selectorShape decodes an externalRef's selector and checks what can be
// checked before any instance exists: a label selector whose matchLabels
// and matchExpressions are literal or given by expressions, or one
// expression giving the whole selector.
func (c *compiler) selectorShape(n *Node, path *field.Path) (any, bool) {
	var sel any
	if err := utiljson.Unmarshal(n.External.Metadata.Selector.Raw, &sel); err != nil {
		c.errs = append(c.errs, field.Invalid(path, string(n.External.Metadata.Selector.Raw), err.Error()))
		return nil, false
	}
	before := len(c.errs)
	switch s := sel.(type) {
	case string:
		c.requireStandalone(s, path, "a label selector (matchLabels, matchExpressions)")
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(s)) {
			switch k {
			case "matchLabels":
				c.matchLabelsShape(s[k], path.Child(k))
			case "matchExpressions":
				c.matchExpressionsShape(s[k], path.Child(k))
			default:
				c.errs = append(c.errs, field.NotSupported(path.Child(k), k, []string{"matchLabels", "matchExpressions"}))
			}
		}
	default:
		c.errs = append(c.errs, field.Invalid(path, sel, "must be a label selector (matchLabels, matchExpressions) or a single ${...} expression giving one"))
	}
	return sel, len(c.errs) == before
}

func (c *compiler) matchLabelsShape(v any, path *field.Path) {
	switch labels := v.(type) {
	case string:
		c.requireStandalone(labels, path, "a map of label keys to values")
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			for _, msg := range validation.IsQualifiedName(k) {
				c.errs = append(c.errs, field.Invalid(path.Key(k), k, msg))
			}
			value, ok := labels[k].(string)
			if !ok {
				c.errs = append(c.errs, field.Invalid(path.Key(k), labels[k], "a label value must be a string (it may use expressions)"))
				continue
			}
			if !hasExpr(value) {
				for _, msg := range validation.IsValidLabelValue(value) {
					c.errs = append(c.errs, field.Invalid(path.Key(k), value, msg))
				}
			}
		}
	default:
		c.errs = append(c.errs, field.Invalid(path, v, "must be a map of label keys to values, or a single ${...} expression giving one"))
	}
}

// selectorOperators are the operators of a label selector requirement.
var selectorOperators = []string{"In", "NotIn", "Exists", "DoesNotExist"}

func (c *compiler) matchExpressionsShape(v any, path *field.Path) {
	switch reqs := v.(type) {
	case string:
		c.requireStandalone(reqs, path, "a list of requirements (key, operator, values)")
	case []any:
		for i, item := range reqs {
			ip := path.Index(i)
			req, ok := item.(map[string]any)
			if !ok {
				c.errs = append(c.errs, field.Invalid(ip, item, "a requirement is an object with key, operator and values"))
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(req)) {
				if !slices.Contains([]string{"key", "operator", "values"}, k) {
					c.errs = append(c.errs, field.NotSupported(ip.Child(k), k, []string{"key", "operator", "values"}))
				}
			}
			if key, _ := req["key"].(string); key == "" {
				c.errs = append(c.errs, field.Required(ip.Child("key"), "the label key the requirement is about"))
			} else if !hasExpr(key) {
				for _, msg := range validation.IsQualifiedName(key) {
					c.errs = append(c.errs, field.Invalid(ip.Child("key"), key, msg))
				}
			}
			op, _ := req["operator"].(string)
			if !hasExpr(op) && !slices.Contains(selectorOperators, op) {
				c.errs = append(c.errs, field.NotSupported(ip.Child("operator"), op, selectorOperators))
			}
			if values, ok := req["values"]; ok {
				if s, isString := values.(string); isString {
					c.requireStandalone(s, ip.Child("values"), "a list of label values")
				} else if _, isList := values.([]any); !isList {
					c.errs = append(c.errs, field.Invalid(ip.Child("values"), values, "must be a list of label values, or a single ${...} expression giving one"))
				}
			}
		}
	default:
		c.errs = append(c.errs, field.Invalid(path, v, "must be a list of requirements (key, operator, values), or a single ${...} expression giving one"))
	}
}

// requireStandalone accepts a string where a structure belongs only when
// it is one ${...} expression, to be type-checked against that structure.
func (c *compiler) requireStandalone(s string, path *field.Path, want string) {
	segs, err := expr.Parse(s)
	if err == nil && expr.IsStandalone(segs) {
		return
	}
	c.errs = append(c.errs, field.Invalid(path, s, fmt.Sprintf("must be %s, or a single ${...} expression giving one", want)))
}

func hasExpr(s string) bool {
	segs, err := expr.Parse(s)
	return err != nil || expr.HasExpr(segs)
}

// referenceSchema types an externalRef's metadata, so that an expression
// giving a name, a namespace or (part of) a selector is checked against
// what it gives.
var referenceSchema = func() *spec.Schema {
	str := spec.StringProperty()
	requirement := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"key":      *str,
			"operator": *str,
			"values":   *spec.ArrayProperty(str),
		},
	}}
	selector := spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"matchLabels":      *spec.MapProperty(str),
			"matchExpressions": *spec.ArrayProperty(requirement),
		},
	}}
	meta := spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"name":      *str,
			"namespace": *str,
			"selector":  selector,
		},
	}}
	return &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:       []string{"object"},
		Properties: map[string]spec.Schema{"metadata": meta},
	}}
}()
