package celenv

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// intOrString is the one mark the Kubernetes CEL libraries type as dyn.
const intOrString = "x-kubernetes-int-or-string"

// freeFormAsDyn returns s with every value whose content the schema leaves
// open marked as intOrString, so that it is dyn in CEL: an object with
// x-kubernetes-preserve-unknown-fields and no properties of its own (a
// CRD's free-form config, a simple schema's `object`), the values of a map
// that are such, and values with no type at all. The Kubernetes libraries
// leave these out of the type, as CRD validation rules cannot rely on
// them; RGD expressions read them (config.foo), as in kro.
//
// s is shared with other callers, so it is not modified: what changes is
// copied, what does not is returned as it was.
func freeFormAsDyn(s *spec.Schema, depth int) *spec.Schema {
	if s == nil || depth > maxFormatDepth {
		return s
	}
	if isOpen(s) {
		out := *s
		out.Extensions = make(spec.Extensions, len(s.Extensions)+1)
		for k, v := range s.Extensions {
			out.Extensions[k] = v
		}
		out.Extensions.Add(intOrString, true)
		return &out
	}
	out := *s
	changed := false
	if len(s.Properties) > 0 {
		var props map[string]spec.Schema
		for name, prop := range s.Properties {
			if marked := freeFormAsDyn(&prop, depth+1); marked != &prop {
				if props == nil {
					props = make(map[string]spec.Schema, len(s.Properties))
					for k, v := range s.Properties {
						props[k] = v
					}
				}
				props[name] = *marked
			}
		}
		if props != nil {
			out.Properties = props
			changed = true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		if marked := freeFormAsDyn(s.AdditionalProperties.Schema, depth+1); marked != s.AdditionalProperties.Schema {
			additional := *s.AdditionalProperties
			additional.Schema = marked
			out.AdditionalProperties = &additional
			changed = true
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		if marked := freeFormAsDyn(s.Items.Schema, depth+1); marked != s.Items.Schema {
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

// isOpen reports whether s says nothing of what its value holds.
func isOpen(s *spec.Schema) bool {
	if v, _ := s.Extensions.GetBool(intOrString); v {
		return false
	}
	if len(s.Properties) > 0 || s.Items != nil || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 {
		return false
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return false
	}
	preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	if embedded, _ := s.Extensions.GetBool("x-kubernetes-embedded-resource"); embedded {
		return false
	}
	return preserve && (len(s.Type) == 0 || s.Type.Contains("object")) || len(s.Type) == 0
}
