package celenv

import (
	"encoding/base64"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// Formats says where, in objects of one schema, the API's values are held
// in another type than CEL checks them as. The types expressions are
// checked against (openapi.SchemaDeclType) make a string of format byte CEL
// bytes, date and date-time a timestamp, duration a duration, so
// string(secret.data.key) and x.metadata.creationTimestamp < timestamp(...)
// type-check; the objects read from the API server hold them as text. A
// number is a double, and a whole number in JSON is decoded as an integer:
// schema.spec.ratio * 2.0 would find no overload when ratio is 2. Apply
// converts the text and the integers, so the values match their types.
// nil means the schema has no such field.
type Formats struct {
	// format is, at a string field, byte, date, date-time or duration; at
	// a number field, number.
	format     string
	properties map[string]*Formats
	additional *Formats // the values of a map
	items      *Formats // the items of a list
}

// maxFormatDepth bounds the walk of recursive schemas (JSONSchemaProps);
// no field CEL can type lies deeper in the kinds Kubernetes serves.
const maxFormatDepth = 32

// formatsCache remembers FormatsOf by schema: the kind resolvers hand out
// one schema per kind, and walking a Deployment's takes longer than
// compiling the rest of most RGDs. An entry goes with its schema.
var formatsCache = struct {
	sync.Mutex
	m map[weak.Pointer[spec.Schema]]*Formats
}{m: map[weak.Pointer[spec.Schema]]*Formats{}}

// FormatsOf returns where objects of schema s hold typed strings.
func FormatsOf(s *spec.Schema) *Formats {
	if s == nil {
		return nil
	}
	key := weak.Make(s)
	formatsCache.Lock()
	f, ok := formatsCache.m[key]
	formatsCache.Unlock()
	if ok {
		return f
	}
	f = formatsOf(s, 0)
	formatsCache.Lock()
	defer formatsCache.Unlock()
	if _, ok := formatsCache.m[key]; !ok {
		formatsCache.m[key] = f
		runtime.AddCleanup(s, forgetFormats, key)
	}
	return f
}

func forgetFormats(key weak.Pointer[spec.Schema]) {
	formatsCache.Lock()
	defer formatsCache.Unlock()
	delete(formatsCache.m, key)
}

func formatsOf(s *spec.Schema, depth int) *Formats {
	if s == nil || depth > maxFormatDepth || isIntOrString(s) {
		return nil
	}
	switch {
	case s.Type.Contains("number"):
		return &Formats{format: "number"}
	case s.Type.Contains("string"):
		switch s.Format {
		case "byte", "date", "date-time", "duration":
			return &Formats{format: s.Format}
		}
		return nil
	case s.Type.Contains("array"):
		if s.Items == nil {
			return nil
		}
		if items := formatsOf(s.Items.Schema, depth+1); items != nil {
			return &Formats{items: items}
		}
		return nil
	}
	f := &Formats{}
	for name, prop := range s.Properties {
		if pf := formatsOf(&prop, depth+1); pf != nil {
			if f.properties == nil {
				f.properties = map[string]*Formats{}
			}
			f.properties[name] = pf
		}
	}
	if s.AdditionalProperties != nil {
		f.additional = formatsOf(s.AdditionalProperties.Schema, depth+1)
	}
	if f.properties == nil && f.additional == nil {
		return nil
	}
	return f
}

func isIntOrString(s *spec.Schema) bool {
	v, _ := s.Extensions.GetBool("x-kubernetes-int-or-string")
	return v
}

// Apply returns v with the typed strings of f converted: []byte for byte,
// time.Time for date and date-time, time.Duration for duration, which CEL
// adapts to its bytes, timestamp and duration; and the integers of number
// fields made float64, CEL's double. v is not changed: maps and
// lists on the way to a converted value are copied, the rest is shared. A
// string that does not parse is left as text.
func (f *Formats) Apply(v any) any {
	out, _ := f.apply(v)
	return out
}

// apply converts v and reports whether anything changed: a value already
// converted, or text that does not parse, is returned as it was, without
// copying the maps and lists around it.
func (f *Formats) apply(v any) (any, bool) {
	if f == nil {
		return v, false
	}
	switch x := v.(type) {
	case string:
		out := f.convert(x)
		_, still := out.(string)
		return out, !still
	case int64:
		if f.format == "number" {
			return float64(x), true
		}
		return x, false
	case map[string]any:
		var out map[string]any
		update := func(k string, val any, fk *Formats) {
			converted, changed := fk.apply(val)
			if !changed {
				return
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k, v := range x {
					out[k] = v
				}
			}
			out[k] = converted
		}
		for k, pf := range f.properties {
			if val, ok := x[k]; ok && val != nil {
				update(k, val, pf)
			}
		}
		if f.additional != nil {
			for k, val := range x {
				if _, declared := f.properties[k]; !declared && val != nil {
					update(k, val, f.additional)
				}
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, item := range x {
			converted, changed := f.items.apply(item)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = converted
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}

func (f *Formats) convert(s string) any {
	switch f.format {
	case "byte":
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return b
		}
	case "date":
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			return t
		}
	case "date-time":
		if t, err := strfmt.ParseDateTime(s); err == nil {
			return time.Time(t)
		}
	case "duration":
		if d, err := strfmt.ParseDuration(s); err == nil {
			return d
		}
	}
	return s
}
