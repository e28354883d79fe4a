package kinds

import (
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// intOrStringExtension marks a schema whose value may be a number or a
// string; the Kubernetes CEL libraries give such a field the type dyn.
const intOrStringExtension = "x-kubernetes-int-or-string"

// markDyn returns s with every schema CEL should type as dyn marked as
// int-or-string, the one mark the Kubernetes CEL libraries type so; they
// would otherwise leave such a value out of its object's type:
//
//   - an untyped union of scalars, such as the built-in resource.Quantity
//     (oneOf string or number): a container's resources would have no limits
//     or requests, so neither reading ${pod.spec.containers[0].resources.limits.cpu}
//     nor writing a map of quantities into them would type-check;
//   - a value whose content the schema leaves open (isOpen), which CRD
//     validation rules cannot rely on but RGD expressions read, as in kro:
//     ${ref.spec.config.foo} of a free-form config, ${schema.spec.nested.field}
//     of a simple schema's object.
//
// Schemas are shared between kinds and callers, so s is not modified: a
// changed schema is a copy, and what did not change is returned as it was.
func markDyn(s *spec.Schema) *spec.Schema {
	if s == nil {
		return nil
	}
	out := *s
	changed := false
	if isScalarUnion(s) || isOpen(s) {
		out.Extensions = make(spec.Extensions, len(s.Extensions)+1)
		for k, v := range s.Extensions {
			out.Extensions[k] = v
		}
		out.Extensions.Add(intOrStringExtension, true)
		changed = true
	}
	if len(s.Properties) > 0 {
		props := make(map[string]spec.Schema, len(s.Properties))
		propsChanged := false
		for name, prop := range s.Properties {
			marked := markDyn(&prop)
			if marked != &prop {
				propsChanged = true
			}
			props[name] = *marked
		}
		if propsChanged {
			out.Properties = props
			changed = true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		if marked := markDyn(s.AdditionalProperties.Schema); marked != s.AdditionalProperties.Schema {
			additional := *s.AdditionalProperties
			additional.Schema = marked
			out.AdditionalProperties = &additional
			changed = true
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		if marked := markDyn(s.Items.Schema); marked != s.Items.Schema {
			items := *s.Items
			items.Schema = marked
			out.Items = &items
			changed = true
		}
	}
	if !changed {
		return s
	}
	return &out
}

// isScalarUnion reports whether s has no type of its own and is one of
// several scalar types.
func isScalarUnion(s *spec.Schema) bool {
	if len(s.Type) > 0 || len(s.Properties) > 0 || len(s.OneOf) < 2 {
		return false
	}
	if v, ok := s.Extensions.GetBool(intOrStringExtension); ok && v {
		return false
	}
	for _, alt := range s.OneOf {
		if len(alt.Type) != 1 || !slices.Contains([]string{"string", "number", "integer"}, alt.Type[0]) {
			return false
		}
	}
	return true
}

// isOpen reports whether s says nothing of what its value holds: an object
// that preserves unknown fields without properties of its own, or a value
// with no type at all.
func isOpen(s *spec.Schema) bool {
	if len(s.Properties) > 0 || s.Items != nil || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 {
		return false
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return false
	}
	for _, ext := range []string{intOrStringExtension, "x-kubernetes-embedded-resource"} {
		if v, _ := s.Extensions.GetBool(ext); v {
			return false
		}
	}
	preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	return len(s.Type) == 0 || preserve && s.Type.Contains("object")
}

// quantityDescription is how the published schemas of Kubernetes' own
// kinds describe a resource.Quantity, whose schema says nothing else of
// it: a string or a number, no format, no pattern.
const quantityDescription = "Quantity is a fixed-point representation of a number."

// IsQuantity tells whether s is a built-in kind's resource.Quantity (a
// container's memory limit, a claim's storage): text written into it must
// parse as one, which the API server refuses otherwise in words that name
// no field. A CRD's quantity carries its own pattern, which the API server
// checks naming the field.
func IsQuantity(s *spec.Schema) bool {
	return s != nil && len(s.OneOf) > 0 && strings.HasPrefix(s.Description, quantityDescription)
}
