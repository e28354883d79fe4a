package graph

import (
	"maps"
	"slices"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Defaults are the default values of a schema, where it has any, as the API
// server fills them in. It does so whenever it decodes an object, also one
// read from storage, so after an RGD gains a field with a default every
// instance the API server returns has it; the agent's informer, though,
// holds each instance as it was last written until it is written again.
// Applying the graph's Defaults to what the cache holds gives what the API
// server would return. nil means the schema has no default.
type Defaults struct {
	// values are the defaults of the properties that have one, decoded.
	values map[string]any
	// nullable are the properties with a default that may be null: a null
	// there is a value, not a field to default.
	nullable   map[string]bool
	properties map[string]*Defaults
	additional *Defaults // the values of a map
	items      *Defaults // the items of a list
}

// DefaultsOf returns the defaults of objects of schema s, nil for none.
func DefaultsOf(s *extv1.JSONSchemaProps) *Defaults {
	return defaultsOf(s, 0)
}

func defaultsOf(s *extv1.JSONSchemaProps, depth int) *Defaults {
	// Generated schemas are finite; the bound only guards the walk.
	if s == nil || depth > maxDefaultsDepth {
		return nil
	}
	d := &Defaults{}
	for name, prop := range s.Properties {
		if prop.Default != nil {
			var v any
			if err := json.Unmarshal(prop.Default.Raw, &v); err == nil {
				if d.values == nil {
					d.values, d.nullable = map[string]any{}, map[string]bool{}
				}
				d.values[name], d.nullable[name] = v, prop.Nullable
			}
		}
		if pd := defaultsOf(&prop, depth+1); pd != nil {
			if d.properties == nil {
				d.properties = map[string]*Defaults{}
			}
			d.properties[name] = pd
		}
	}
	if s.AdditionalProperties != nil {
		d.additional = defaultsOf(s.AdditionalProperties.Schema, depth+1)
	}
	if s.Items != nil {
		d.items = defaultsOf(s.Items.Schema, depth+1)
	}
	if d.values == nil && d.properties == nil && d.additional == nil && d.items == nil {
		return nil
	}
	return d
}

// DefaultsOfPublished returns the defaults of objects of a custom kind,
// from the OpenAPI schema the API server publishes for it: the CRD's own
// schema, served as JSON and read back as one. nil for none, or for a
// schema that does not read as a CRD's.
func DefaultsOfPublished(s *spec.Schema) *Defaults {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var props extv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil
	}
	return DefaultsOf(&props)
}

// maxDefaultsDepth bounds the walk of a schema.
const maxDefaultsDepth = 64

// Apply returns v with the defaults of d filled in where v lacks them (or
// holds null where null is not allowed), and in the defaults it fills in,
// as the API server's structural defaulting does. v is not changed: maps
// and lists on the way to a default are copied, the rest is shared, and v
// itself is returned when nothing is missing.
func (d *Defaults) Apply(v any) any {
	out, _ := d.apply(v)
	return out
}

func (d *Defaults) apply(v any) (any, bool) {
	if d == nil {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any // a copy of x, once something changes
		set := func(k string, val any) {
			if out == nil {
				out = maps.Clone(x)
			}
			out[k] = val
		}
		for k, def := range d.values {
			if cur, found := x[k]; !found || (cur == nil && !d.nullable[k]) {
				set(k, runtime.DeepCopyJSONValue(def))
			}
		}
		current := x
		if out != nil {
			current = out
		}
		for k, cur := range current {
			// A structural schema has properties or additionalProperties,
			// never both.
			child := d.properties[k]
			if child == nil {
				child = d.additional
			}
			if nv, changed := child.apply(cur); changed {
				set(k, nv)
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, cur := range x {
			if nv, changed := d.items.apply(cur); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}
