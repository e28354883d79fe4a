package simpleschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// Built-in type names of SimpleSchema.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeFloat   = "float"
	TypeObject  = "object"
)

// builtinTypes are the names of SimpleSchema's built-in types.
var builtinTypes = []string{TypeString, TypeInteger, TypeBoolean, TypeFloat, TypeObject}

// IsType reports whether typ is a SimpleSchema type expression of a
// built-in type, a list or a map (the part of a field before its "|"):
// what a spec field is written as, and a status field is not.
func IsType(typ string) bool {
	return slices.Contains(builtinTypes, typ) || strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map[")
}

// Build converts an RGD's spec (SimpleSchema fields, as decoded from YAML) and
// its named types into the OpenAPI v3 schema of the instance's spec.
// specPath and typesPath say where the two sit in the RGD so that errors name
// the field the author wrote. All errors are returned, not only the first.
func Build(spec, types map[string]any, specPath, typesPath *field.Path) (*extv1.JSONSchemaProps, field.ErrorList) {
	b := &builder{
		types:     types,
		typesPath: typesPath,
		resolved:  map[string]*extv1.JSONSchemaProps{},
		required:  map[string]bool{},
		resolving: map[string]bool{},
	}
	// Resolve every named type, used or not, so an error in an unused type is
	// reported too, and in a stable order.
	for _, name := range slices.Sorted(maps.Keys(types)) {
		b.resolveType(name, typesPath.Key(name))
	}
	before := len(b.errs)
	s := b.structSchema(spec, specPath)
	if len(b.errs) > before && isOpenAPI(spec) {
		// The whole spec written as an OpenAPI schema, its fields under
		// properties.
		b.errs = append(b.errs[:before], field.Invalid(specPath, "type: "+fmt.Sprint(spec["type"]),
			"spec reads as an OpenAPI schema, which SimpleSchema does not take: declare each field by its name, its type and markers as its value, as in spec: {name: string | required=true, replicas: integer | default=1}"))
	}
	return s, b.errs
}

type builder struct {
	types     map[string]any
	typesPath *field.Path
	resolved  map[string]*extv1.JSONSchemaProps
	// required holds the custom types written with required=true: a field
	// of such a type is required where it is used, as kro reads them.
	required  map[string]bool
	resolving map[string]bool
	errs      field.ErrorList
}

// structSchema builds an object schema from a map of field definitions.
func (b *builder) structSchema(fields map[string]any, path *field.Path) *extv1.JSONSchemaProps {
	s := &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}}
	childDefaults := false
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		fp := path.Child(name)
		child, required := b.fieldSchema(fields[name], fp)
		if required {
			s.Required = append(s.Required, name)
		}
		if child.Default != nil {
			childDefaults = true
		}
		s.Properties[name] = *child
	}
	// An absent struct would never see its children's defaults; defaulting
	// it to {} lets the API server fill them in. Not when a child is
	// required: {} would then be an invalid default.
	if childDefaults && len(s.Required) == 0 {
		s.Default = &extv1.JSON{Raw: []byte("{}")}
	}
	return s
}

// fieldSchema builds the schema of one field: a nested struct or a
// "type | markers" string. A field whose type is wrong gets a schema of
// any value beside its error (unknownType), which the RGD's other checks
// read: an expression reading the field is then not reported again for
// reading one the spec does not have.
func (b *builder) fieldSchema(def any, path *field.Path) (*extv1.JSONSchemaProps, bool) {
	switch d := def.(type) {
	case map[string]any:
		before := len(b.errs)
		s := b.structSchema(d, path)
		if len(b.errs) > before && isOpenAPI(d) {
			// One error for the map, in place of one for each keyword
			// read as a field.
			b.errs = append(b.errs[:before], field.Invalid(path, d, "reads as an OpenAPI schema, which SimpleSchema does not take: a field's type and markers are its value"+asSimpleSchema(path, d)))
			return unknownType(), false
		}
		return s, false
	case string:
		typ, markers, err := splitField(d)
		if err != nil {
			b.errs = append(b.errs, field.Invalid(path, d, err.Error()))
			if typ == "" {
				return unknownType(), false
			}
		}
		s, err := b.typeSchema(typ, path)
		if err != nil {
			b.errs = append(b.errs, field.Invalid(path, d, err.Error()))
			return unknownType(), false
		}
		// A field of a required custom type is required unless it says
		// required=false itself.
		if b.required[typ] && !hasMarker(markers, markerRequired) {
			if hasMarker(markers, markerDefault) {
				b.errs = append(b.errs, field.Invalid(path, d, fmt.Sprintf(
					"type %s is required=true, so a field of it cannot have a default; add required=false to make this one optional", typ)))
			} else {
				markers = append(markers, marker{key: markerRequired, value: "true"})
			}
		}
		required, errs := applyMarkers(s, markers, path)
		b.errs = append(b.errs, errs...)
		return s, required
	default:
		b.errs = append(b.errs, field.Invalid(path, def,
			`must be a SimpleSchema type such as "string | required=true", or a map of nested fields`))
		return unknownType(), false
	}
}

// unknownType stands for the type of a field written wrong, already
// reported: a value of any type, as CEL reads a schema without a type that
// keeps unknown fields. It never reaches a CRD, an RGD with errors having
// none.
func unknownType() *extv1.JSONSchemaProps {
	return &extv1.JSONSchemaProps{XPreserveUnknownFields: ptr(true)}
}

// typeSchema builds the schema of a type expression: a built-in type, []T,
// map[string]T or the name of a custom type.
func (b *builder) typeSchema(typ string, path *field.Path) (*extv1.JSONSchemaProps, error) {
	switch typ {
	case TypeString:
		return &extv1.JSONSchemaProps{Type: "string"}, nil
	case TypeInteger:
		return &extv1.JSONSchemaProps{Type: "integer"}, nil
	case TypeBoolean:
		return &extv1.JSONSchemaProps{Type: "boolean"}, nil
	case TypeFloat:
		return &extv1.JSONSchemaProps{Type: "number"}, nil
	case TypeObject:
		return &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, nil
	}
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		if strings.TrimSpace(elem) == "" {
			return nil, fmt.Errorf("type %q: a list's item type follows the [], as in []string", typ)
		}
		items, err := b.typeSchema(strings.TrimSpace(elem), path)
		if err != nil {
			return nil, err
		}
		return &extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: items}}, nil
	}
	if rest, ok := strings.CutPrefix(typ, "map["); ok {
		key, value, ok := strings.Cut(rest, "]")
		if !ok {
			return nil, fmt.Errorf("type %q: missing ] in map type", typ)
		}
		if strings.TrimSpace(key) != TypeString {
			return nil, fmt.Errorf("type %q: map keys must be string, not %q", typ, key)
		}
		if strings.TrimSpace(value) == "" {
			return nil, fmt.Errorf("type %q: a map's value type follows the ], as in map[string]string", typ)
		}
		values, err := b.typeSchema(strings.TrimSpace(value), path)
		if err != nil {
			return nil, err
		}
		return &extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: values}}, nil
	}
	if _, ok := b.types[typ]; ok {
		s := b.resolveType(typ, b.typesPath.Key(typ))
		if s == nil {
			// The type's own error is reported where it is defined.
			return nil, fmt.Errorf("custom type %q is invalid", typ)
		}
		return s.DeepCopy(), nil
	}
	return nil, fmt.Errorf("unknown type %q%s (built-in types: string, integer, boolean, float, object, []T, map[string]T%s)",
		typ, b.meantType(typ), customTypeList(b.types))
}

// otherNames are the names other schema languages give SimpleSchema's
// types, and what to write instead.
var otherNames = map[string]string{
	"int": TypeInteger, "int32": TypeInteger, "int64": TypeInteger,
	"bool": TypeBoolean, "str": TypeString,
	"number": TypeFloat, "double": TypeFloat, "float64": TypeFloat,
	"array": "[]T", "list": "[]T", "map": "map[string]T", "dict": "map[string]T",
}

// genericList and genericMap are a list and a map type as Python, Java,
// TypeScript and CEL write them (list[str], List<String>, dict[str, int],
// map<string, string>); the group holds the item's or value's type.
var (
	genericList = regexp.MustCompile(`^(?i:list|array|set|seq|sequence|vector|slice)\s*[\[<(]\s*(.+?)\s*[\]>)]$`)
	genericMap  = regexp.MustCompile(`^(?i:map|dict|hashmap|record|object)\s*[\[<(]\s*\w+\s*,\s*(.+?)\s*[\]>)]$`)
)

// nameOf is typ as SimpleSchema names it: a built-in type another language
// names otherwise (str, int) by SimpleSchema's name, anything else as it is.
func nameOf(typ string) string {
	if name, ok := otherNames[strings.ToLower(typ)]; ok && slices.Contains(builtinTypes, name) {
		return name
	}
	if slices.Contains(builtinTypes, strings.ToLower(typ)) {
		return strings.ToLower(typ)
	}
	return typ
}

// meantType suggests the type an unknown type name stands for: a built-in
// or custom type it misspells, or SimpleSchema's name for a type it names
// as another language does. "" when none is near.
func (b *builder) meantType(typ string) string {
	if name, ok := otherNames[strings.ToLower(typ)]; ok {
		return fmt.Sprintf(": SimpleSchema calls it %s", name)
	}
	if elem, ok := strings.CutSuffix(typ, "[]"); ok && elem != "" {
		// As TypeScript and Java write a list.
		return fmt.Sprintf(": a list is written with the [] first, as in []%s", elem)
	}
	if m := genericList.FindStringSubmatch(typ); m != nil {
		return fmt.Sprintf(": a list is written []T, as in []%s", nameOf(m[1]))
	}
	if m := genericMap.FindStringSubmatch(typ); m != nil {
		return fmt.Sprintf(": a map is written map[string]T, as in map[string]%s", nameOf(m[1]))
	}
	names := append(slices.Clone(builtinTypes), slices.Sorted(maps.Keys(b.types))...)
	if name, ok := spelling.Closest(typ, names); ok {
		return fmt.Sprintf(": did you mean %s?", name)
	}
	return ""
}

// resolveType builds a named custom type once, reporting cycles.
func (b *builder) resolveType(name string, path *field.Path) *extv1.JSONSchemaProps {
	if s, ok := b.resolved[name]; ok {
		return s
	}
	if b.resolving[name] {
		b.errs = append(b.errs, field.Invalid(path, name, "custom type refers to itself"))
		b.resolved[name] = nil
		return nil
	}
	b.resolving[name] = true
	defer delete(b.resolving, name)
	s, required := b.fieldSchema(b.types[name], path)
	b.required[name] = required
	if _, done := b.resolved[name]; !done {
		b.resolved[name] = s
	}
	return b.resolved[name]
}

// applyMarkers sets the markers' keywords on s and reports whether the field
// is required. A marker that does not fit the type is an error.
func applyMarkers(s *extv1.JSONSchemaProps, markers []marker, path *field.Path) (bool, field.ErrorList) {
	var errs field.ErrorList
	required := false
	var defaultValue *string
	invalid := func(m marker, format string, args ...any) {
		errs = append(errs, field.Invalid(path, m.key+"="+m.value, fmt.Sprintf(format, args...)))
	}
	for _, m := range markers {
		switch m.key {
		case markerRequired:
			v, err := strconv.ParseBool(m.value)
			if err != nil {
				invalid(m, "required must be true or false")
			}
			required = v
		case markerImmutable:
			v, err := strconv.ParseBool(m.value)
			if err != nil {
				invalid(m, "immutable must be true or false")
			} else if v {
				s.XValidations = append(s.XValidations, extv1.ValidationRule{Rule: "self == oldSelf", Message: "field is immutable"})
			}
		case markerDescription:
			s.Description = m.value
		case markerDefault:
			v := m.value
			defaultValue = &v
		case markerValidation:
			if strings.TrimSpace(m.value) == "" {
				invalid(m, "validation needs a CEL rule")
				continue
			}
			s.XValidations = append(s.XValidations, extv1.ValidationRule{Rule: m.value})
		case markerEnum:
			if !oneOf(s.Type, "string", "integer", "number") {
				invalid(m, "enum applies to string, integer and float fields, not %s", typeName(s))
				continue
			}
			for _, item := range strings.Split(m.value, ",") {
				raw, err := scalarJSON(s.Type, strings.TrimSpace(item))
				if err != nil {
					invalid(m, "enum value %q: %v", item, err)
					continue
				}
				s.Enum = append(s.Enum, extv1.JSON{Raw: raw})
			}
		case markerMinimum, markerMaximum:
			if !oneOf(s.Type, "integer", "number") {
				invalid(m, "%s applies to integer and float fields, not %s", m.key, typeName(s))
				continue
			}
			f, err := strconv.ParseFloat(m.value, 64)
			if err != nil {
				invalid(m, "%s must be a number", m.key)
				continue
			}
			if m.key == markerMinimum {
				s.Minimum = &f
			} else {
				s.Maximum = &f
			}
		case markerPattern:
			if s.Type != "string" {
				invalid(m, "pattern applies to string fields, not %s", typeName(s))
				continue
			}
			if _, err := regexp.Compile(m.value); err != nil {
				invalid(m, "pattern is not a valid regular expression: %v", err)
				continue
			}
			s.Pattern = m.value
		case markerMinLength, markerMaxLength:
			if s.Type != "string" {
				invalid(m, "%s applies to string fields, not %s", m.key, typeName(s))
				continue
			}
			n, err := strconv.ParseInt(m.value, 10, 64)
			if err != nil || n < 0 {
				invalid(m, "%s must be a non-negative integer", m.key)
				continue
			}
			if m.key == markerMinLength {
				s.MinLength = &n
			} else {
				s.MaxLength = &n
			}
		case markerMinItems, markerMaxItems:
			if s.Type != "array" {
				invalid(m, "%s applies to array fields, not %s", m.key, typeName(s))
				continue
			}
			n, err := strconv.ParseInt(m.value, 10, 64)
			if err != nil || n < 0 {
				invalid(m, "%s must be a non-negative integer", m.key)
				continue
			}
			if m.key == markerMinItems {
				s.MinItems = &n
			} else {
				s.MaxItems = &n
			}
		case markerUniqueItems:
			if s.Type != "array" {
				invalid(m, "uniqueItems applies to array fields, not %s", typeName(s))
				continue
			}
			v, err := strconv.ParseBool(m.value)
			if err != nil {
				invalid(m, "uniqueItems must be true or false")
				continue
			}
			if v {
				// Structural schemas forbid uniqueItems; a set-typed list
				// is how Kubernetes says the same thing.
				if s.XListType != nil && *s.XListType != "set" {
					invalid(m, "uniqueItems makes the list a set, but listType=%s is also given", *s.XListType)
					continue
				}
				s.XListType = ptr("set")
				if s.Items != nil && s.Items.Schema != nil && !oneOf(s.Items.Schema.Type, "string", "integer", "number", "boolean") {
					invalid(m, "uniqueItems needs items of a scalar type, not %s", typeName(s.Items.Schema))
				}
			}
		case markerListType:
			if s.Type != "array" {
				invalid(m, "listType applies to array fields, not %s", typeName(s))
				continue
			}
			if !oneOf(m.value, "atomic", "set", "map") {
				invalid(m, "listType must be atomic, set or map")
				continue
			}
			if s.XListType != nil && *s.XListType != m.value {
				invalid(m, "uniqueItems makes the list a set, but listType=%s is also given", m.value)
				continue
			}
			s.XListType = ptr(m.value)
		case markerListMapKey:
			if s.Type != "array" {
				invalid(m, "listMapKey applies to array fields, not %s", typeName(s))
				continue
			}
			if m.value == "" || slices.Contains(s.XListMapKeys, m.value) {
				invalid(m, "each listMapKey must name a different field of the items")
				continue
			}
			s.XListMapKeys = append(s.XListMapKeys, m.value)
		}
	}
	// The API server checks that the keys are required or defaulted fields
	// of the items (the generated CRD is dry-run); the pairing of the two
	// markers is ours to explain.
	if isMap := s.XListType != nil && *s.XListType == "map"; isMap != (len(s.XListMapKeys) > 0) {
		if isMap {
			errs = append(errs, field.Invalid(path, "listType=map", "a map-typed list needs a listMapKey marker naming the field that keys its items"))
		} else {
			errs = append(errs, field.Invalid(path, "listMapKey="+s.XListMapKeys[0], "listMapKey needs listType=map"))
		}
	}
	if s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength {
		errs = append(errs, field.Invalid(path, *s.MinLength, "minLength is greater than maxLength"))
	}
	if s.MinItems != nil && s.MaxItems != nil && *s.MinItems > *s.MaxItems {
		errs = append(errs, field.Invalid(path, *s.MinItems, "minItems is greater than maxItems"))
	}
	if s.Minimum != nil && s.Maximum != nil && *s.Minimum > *s.Maximum {
		errs = append(errs, field.Invalid(path, *s.Minimum, "minimum is greater than maximum"))
	}
	if defaultValue != nil {
		raw, err := defaultJSON(s, *defaultValue)
		if err != nil {
			errs = append(errs, field.Invalid(path, "default="+*defaultValue, "bad default: "+err.Error()))
		} else {
			s.Default = &extv1.JSON{Raw: raw}
		}
		if required && err == nil {
			errs = append(errs, field.Invalid(path, "default="+*defaultValue, "a required field cannot have a default"))
		}
	}
	return required, errs
}

// defaultJSON parses a default written for schema s and checks it against
// the schema's own constraints, so a default the API server would reject is
// caught here, with the field's name.
func defaultJSON(s *extv1.JSONSchemaProps, value string) ([]byte, error) {
	var raw []byte
	switch s.Type {
	case "string", "integer", "number", "boolean":
		r, err := scalarJSON(s.Type, value)
		if err != nil {
			return nil, err
		}
		raw = r
	case "array", "object":
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %v%s", value, err, asJSON(s, value))
		}
		if _, isList := v.([]any); s.Type == "array" && !isList {
			return nil, fmt.Errorf("%q is not a list%s", value, asJSON(s, value))
		}
		if _, isMap := v.(map[string]any); s.Type == "object" && !isMap {
			return nil, fmt.Errorf("%q is not an object", value)
		}
		r, _ := json.Marshal(v)
		raw = r
	default:
		return nil, fmt.Errorf("fields of type %s cannot have a default", typeName(s))
	}
	if len(s.Enum) > 0 {
		found := false
		for _, e := range s.Enum {
			if string(e.Raw) == string(raw) {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s is not one of the enum values", raw)
		}
	}
	switch s.Type {
	case "string":
		n := int64(len([]rune(value)))
		if s.MinLength != nil && n < *s.MinLength {
			return nil, fmt.Errorf("%q is shorter than minLength %d", value, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return nil, fmt.Errorf("%q is longer than maxLength %d", value, *s.MaxLength)
		}
		if s.Pattern != "" {
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(value) {
				return nil, fmt.Errorf("%q does not match pattern %q", value, s.Pattern)
			}
		}
	case "array":
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items) // raw is a list, as checked above
		n := int64(len(items))
		if s.MinItems != nil && n < *s.MinItems {
			return nil, fmt.Errorf("%s has %d items, fewer than minItems %d", raw, n, *s.MinItems)
		}
		if s.MaxItems != nil && n > *s.MaxItems {
			return nil, fmt.Errorf("%s has %d items, more than maxItems %d", raw, n, *s.MaxItems)
		}
		if err := uniqueDefaultItems(s, items); err != nil {
			return nil, fmt.Errorf("%s %v", raw, err)
		}
	case "integer", "number":
		f, _ := strconv.ParseFloat(value, 64)
		if s.Minimum != nil && f < *s.Minimum {
			return nil, fmt.Errorf("%s is below minimum %v", value, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return nil, fmt.Errorf("%s is above maximum %v", value, *s.Maximum)
		}
	}
	return raw, nil
}

// uniqueDefaultItems checks the items of a list default are unique where
// the list's type says they must be: a set's items, a map list's keys. The
// API server takes such a default into the CRD, then refuses every object
// it is defaulted into.
func uniqueDefaultItems(s *extv1.JSONSchemaProps, items []json.RawMessage) error {
	if s.XListType == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, item := range items {
		var key []byte
		switch *s.XListType {
		case "set":
			key = item
		case "map":
			var fields map[string]json.RawMessage
			if json.Unmarshal(item, &fields) != nil {
				return fmt.Errorf("holds %s, but its items must be objects", item)
			}
			k := map[string]json.RawMessage{}
			for _, name := range s.XListMapKeys {
				k[name] = fields[name]
				if _, given := fields[name]; !given && s.Items != nil && s.Items.Schema != nil {
					// A key left out takes its default first.
					if d := s.Items.Schema.Properties[name].Default; d != nil {
						k[name] = d.Raw
					}
				}
			}
			key, _ = json.Marshal(k)
		default:
			return nil
		}
		if seen[string(key)] {
			if *s.XListType == "map" {
				return fmt.Errorf("holds two items with keys %s, but each item's keys (%s) must be unique", key, strings.Join(s.XListMapKeys, ", "))
			}
			return fmt.Errorf("holds %s twice, but its items must be unique", item)
		}
		seen[string(key)] = true
	}
	return nil
}

// asJSON offers a list or map default written as YAML writes it ([a, b],
// {a: b}), or one value where a list is wanted (a, 3), as the JSON a
// default is written in, when that is a default of s: "" otherwise.
func asJSON(s *extv1.JSONSchemaProps, value string) string {
	j, err := yaml.YAMLToJSON([]byte(value))
	if err != nil {
		return ""
	}
	var v any
	if json.Unmarshal(j, &v) != nil || v == nil {
		return ""
	}
	if _, isList := v.([]any); s.Type == "array" && !isList {
		if _, isMap := v.(map[string]any); isMap {
			return ""
		}
		v = []any{v}
	}
	meant, err := json.Marshal(v)
	if err != nil || string(meant) == value {
		return ""
	}
	if _, err := defaultJSON(s, string(meant)); err != nil {
		return ""
	}
	advice := ": write default=" + string(meant)
	if strings.Contains(string(meant), `"`) {
		advice += " (JSON, its text in double quotes)"
	}
	return advice
}

// scalarJSON encodes a scalar written in a marker as JSON of the given type.
func scalarJSON(typ, value string) ([]byte, error) {
	switch typ {
	case "string":
		return json.Marshal(value)
	case "integer":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", value)
		}
		return json.Marshal(n)
	case "number":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", value)
		}
		return json.Marshal(f)
	case "boolean":
		v, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", value)
		}
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("a %s cannot be written as a single value", typ)
}

// typeName names a schema's type in SimpleSchema terms for error messages.
func typeName(s *extv1.JSONSchemaProps) string {
	switch {
	case s.Type == "number":
		return TypeFloat
	case s.Type == "array":
		return "a list"
	case s.Type == "object" && s.AdditionalProperties != nil:
		return "a map"
	case s.Type == "object" && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return TypeObject
	case s.Type == "object":
		return "a struct"
	}
	return s.Type
}

func customTypeList(types map[string]any) string {
	if len(types) == 0 {
		return ""
	}
	return "; custom types: " + strings.Join(slices.Sorted(maps.Keys(types)), ", ")
}

func hasMarker(markers []marker, key string) bool {
	return slices.ContainsFunc(markers, func(m marker) bool { return m.key == key })
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// openAPIKeywords are the keys of an OpenAPI schema that an author writing
// one in place of SimpleSchema gives a field.
var openAPIKeywords = []string{
	"type", "properties", "items", "description", "default", "format", "enum", "required",
	"minimum", "maximum", "minLength", "maxLength", "pattern", "additionalProperties", "nullable",
	"minItems", "maxItems", "uniqueItems",
}

// openAPITypes are the values of an OpenAPI schema's type.
var openAPITypes = []string{"string", "integer", "boolean", "number", "object", "array"}

// isOpenAPI tells whether m reads as an OpenAPI schema: a type naming an
// OpenAPI type, and only OpenAPI keywords beside it.
func isOpenAPI(m map[string]any) bool {
	t, ok := m["type"].(string)
	return ok && slices.Contains(openAPITypes, t) &&
		!slices.ContainsFunc(slices.Collect(maps.Keys(m)), func(k string) bool { return !slices.Contains(openAPIKeywords, k) })
}

// asSimpleSchema writes the OpenAPI schema m of the field at path as
// SimpleSchema, ": write name: type | markers", for a scalar or a list of
// scalars; "" for what it does not translate (nested properties).
func asSimpleSchema(path *field.Path, m map[string]any) string {
	typ, _ := m["type"].(string)
	switch typ {
	case "number":
		typ = TypeFloat
	case "array":
		items, _ := m["items"].(map[string]any)
		it, _ := items["type"].(string)
		if it == "number" {
			it = TypeFloat
		}
		if !slices.Contains(builtinTypes, it) || it == TypeObject {
			return ""
		}
		typ = "[]" + it
	case "object":
		return ""
	}
	var markers []string
	for _, k := range []string{markerMinimum, markerMaximum, markerMinLength, markerMaxLength, markerMinItems, markerMaxItems, markerUniqueItems, markerPattern, markerEnum, markerDefault, markerDescription} {
		v, ok := m[k]
		if !ok {
			continue
		}
		var text string
		switch x := v.(type) {
		case string:
			text = x
			if strings.ContainsAny(x, " \t\"[]{}") {
				text = quotedValue([]string{x})
			}
		case []any:
			if k == markerEnum {
				parts := make([]string, len(x))
				for i, e := range x {
					parts[i] = fmt.Sprint(e)
				}
				text = strings.Join(parts, ",")
				break
			}
			j, _ := json.Marshal(x)
			text = string(j)
		default:
			j, _ := json.Marshal(x)
			text = string(j)
		}
		markers = append(markers, k+"="+text)
	}
	field := typ
	if len(markers) > 0 {
		field += " | " + strings.Join(markers, " ")
	}
	name := "field"
	if path != nil {
		name = path.String()[strings.LastIndex(path.String(), ".")+1:]
	}
	return fmt.Sprintf(": write %s: %s", name, field)
}

// WrittenAsOpenAPI returns the paths, below fields, of the maps that read
// as an OpenAPI schema rather than as SimpleSchema's nested fields: a type
// naming an OpenAPI type, properties or items, and only OpenAPI keywords
// beside them ({type: object, properties: {...}}, {type: array, items:
// {type: string}}). SimpleSchema takes such a map for an object with
// fields named type and properties, which is legal and seldom meant. (A
// type alone, {type: string}, is as likely a field named type.) The empty
// path is fields itself.
func WrittenAsOpenAPI(fields map[string]any) [][]string {
	var out [][]string
	var walk func(m map[string]any, at []string)
	walk = func(m map[string]any, at []string) {
		if _, properties := m["properties"]; isOpenAPI(m) && (properties || m["items"] != nil) {
			out = append(out, at)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if nested, ok := m[k].(map[string]any); ok {
				walk(nested, append(slices.Clone(at), k))
			}
		}
	}
	walk(fields, nil)
	return out
}
