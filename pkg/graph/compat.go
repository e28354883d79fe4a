package graph

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// BreakageWarning is the warning, "" for none, of an RGD whose graph g
// would break the instances stored under current, the CRD the cluster
// serves now: its schema makes BreakingChanges, the RGD does not allow them,
// and stored says the cluster holds an instance of the kind. kro-agent does
// not apply such a change, which the admission webhook and kubectl kro
// validate say before the RGD is applied.
func (g *Graph) BreakageWarning(rgd *v1alpha1.ResourceGraphDefinition, current *extv1.CustomResourceDefinition, stored func(schema.GroupVersionKind) bool) string {
	if g.CRD == nil || current == nil || rgd.Annotations[v1alpha1.AnnotationAllowBreakingChanges] == "true" {
		return ""
	}
	changes := BreakingChanges(current, g.CRD)
	gvk, served := ServedKind(current)
	if len(changes) == 0 || !served || !stored(gvk) {
		return ""
	}
	return fmt.Sprintf("the new schema would break the stored instances of %s (%s): kro-agent does not apply it, and goes on serving them with the graph it has (KindReady says why), until none is left, or at once with the annotation %s: \"true\" on the RGD",
		gvk.Kind, strings.Join(changes, "; "), v1alpha1.AnnotationAllowBreakingChanges)
}

// ServedKind is the kind a generated CRD serves: its one served version.
func ServedKind(crd *extv1.CustomResourceDefinition) (schema.GroupVersionKind, bool) {
	for _, v := range crd.Spec.Versions {
		if v.Served {
			return schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// BreakingChanges lists what in next would break instances stored under
// prev: a spec field removed, a field's type changed, a newly required
// field. Status is written by the agent and may change freely.
func BreakingChanges(prev, next *extv1.CustomResourceDefinition) []string {
	var out []string
	for _, c := range SchemaChanges(prev, next) {
		if c.Breaking {
			out = append(out, c.Description)
		}
	}
	return out
}

// A SchemaChange is one difference between the instance schemas of two
// generated CRDs, as a user changing an RGD would want it told.
type SchemaChange struct {
	// Path is the field's path in an instance: spec.tier, status.url,
	// spec.ports[*].name for the items of a list or the values of a map.
	Path string `json:"path"`
	// Description says what changed, starting with Path.
	Description string `json:"description"`
	// Breaking is set for a change that would break stored instances: a
	// spec field removed, a field's type changed, a newly required field.
	Breaking bool `json:"breaking,omitempty"`
}

// SchemaChanges are the differences, by path, between the spec and status
// schemas of prev and next: fields added, removed, retyped, newly required
// or no longer, and changed defaults and validation. Descriptions are
// left out: they do not change what an instance may hold.
func SchemaChanges(prev, next *extv1.CustomResourceDefinition) []SchemaChange {
	var w schemaWalk
	for _, section := range []string{"spec", "status"} {
		ps, ns := sectionSchemaOf(prev, section), sectionSchemaOf(next, section)
		if ps == nil || ns == nil {
			continue
		}
		w.breakable = section == "spec"
		w.compare(ps, ns, section)
	}
	slices.SortStableFunc(w.out, func(a, b SchemaChange) int { return strings.Compare(a.Path, b.Path) })
	return w.out
}

func sectionSchemaOf(crd *extv1.CustomResourceDefinition, section string) *extv1.JSONSchemaProps {
	if crd == nil || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil
	}
	s, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties[section]
	if !ok {
		return nil
	}
	return &s
}

// schemaWalk compares two schemas field by field.
type schemaWalk struct {
	// breakable is set in spec, which the instances' authors write;
	// status is the agent's to write and may change freely.
	breakable bool
	out       []SchemaChange
}

func (w *schemaWalk) add(path string, breaking bool, format string, args ...any) {
	w.out = append(w.out, SchemaChange{Path: path, Description: path + " " + fmt.Sprintf(format, args...), Breaking: breaking && w.breakable})
}

func (w *schemaWalk) compare(prev, next *extv1.JSONSchemaProps, path string) {
	// A free-form object made a map or a struct narrows what it holds as
	// much as a new type does: the API server drops what a struct does
	// not name even from what it reads.
	if prev.Type != next.Type || preservesUnknown(prev) && !preservesUnknown(next) {
		w.add(path, true, "changed type from %s to %s", typeName(prev), typeName(next))
		return
	}
	w.constraints(prev, next, path)
	for _, name := range slices.Sorted(maps.Keys(prev.Properties)) {
		switch _, ok := next.Properties[name]; {
		case ok:
		case preservesUnknown(next):
			w.add(path+"."+name, false, "was removed from the schema (its values are kept: %s is free-form)", path)
		default:
			w.add(path+"."+name, true, "was removed")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(next.Properties)) {
		n := next.Properties[name]
		p, ok := prev.Properties[name]
		switch {
		case !ok && slices.Contains(next.Required, name):
			w.add(path+"."+name, true, "is newly required")
		case !ok:
			w.add(path+"."+name, false, "was added (%s)", describeType(&n))
		default:
			w.compare(&p, &n, path+"."+name)
		}
	}
	for _, r := range next.Required {
		if _, existed := prev.Properties[r]; existed && !slices.Contains(prev.Required, r) {
			w.add(path+"."+r, true, "is newly required")
		}
	}
	for _, r := range prev.Required {
		if _, kept := next.Properties[r]; kept && !slices.Contains(next.Required, r) {
			w.add(path+"."+r, false, "is no longer required")
		}
	}
	if prev.Items != nil && prev.Items.Schema != nil && next.Items != nil && next.Items.Schema != nil {
		w.compare(prev.Items.Schema, next.Items.Schema, path+"[*]")
	}
	if prev.AdditionalProperties != nil && prev.AdditionalProperties.Schema != nil && next.AdditionalProperties != nil && next.AdditionalProperties.Schema != nil {
		w.compare(prev.AdditionalProperties.Schema, next.AdditionalProperties.Schema, path+"[*]")
	}
}

// constraints compares what a field's markers set beside its type.
func (w *schemaWalk) constraints(prev, next *extv1.JSONSchemaProps, path string) {
	p, n := constraintsOf(prev), constraintsOf(next)
	for _, c := range constraintNames {
		switch {
		case p[c] == n[c]:
		case p[c] == "":
			w.add(path, false, "%s %s added", c, n[c])
		case n[c] == "":
			w.add(path, false, "%s %s removed", c, p[c])
		default:
			w.add(path, false, "%s changed from %s to %s", c, p[c], n[c])
		}
	}
	for _, change := range setChanges("validation rule", quotedRules(prev), quotedRules(next)) {
		w.add(path, false, "%s", change)
	}
	if !preservesUnknown(prev) && preservesUnknown(next) {
		w.add(path, false, "now keeps fields its schema does not name")
	}
}

// quotedRules are the CEL rules of s's validations, each quoted.
func quotedRules(s *extv1.JSONSchemaProps) []string {
	rules := make([]string, len(s.XValidations))
	for i, r := range s.XValidations {
		rules[i] = strconv.Quote(r.Rule)
	}
	return rules
}

// constraintNames are the SimpleSchema markers constraintsOf reads, in the
// order a change to them is told.
var constraintNames = []string{"default", "enum", "minimum", "maximum", "pattern", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems"}

// constraintsOf renders each constraint s sets, by marker name.
func constraintsOf(s *extv1.JSONSchemaProps) map[string]string {
	out := map[string]string{}
	if s.Default != nil {
		out["default"] = string(s.Default.Raw)
	}
	if len(s.Enum) > 0 {
		values := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			values[i] = string(v.Raw)
		}
		out["enum"] = "[" + strings.Join(values, ", ") + "]"
	}
	for name, v := range map[string]*float64{"minimum": s.Minimum, "maximum": s.Maximum} {
		if v != nil {
			out[name] = strconv.FormatFloat(*v, 'g', -1, 64)
		}
	}
	for name, v := range map[string]*int64{"minLength": s.MinLength, "maxLength": s.MaxLength, "minItems": s.MinItems, "maxItems": s.MaxItems} {
		if v != nil {
			out[name] = strconv.FormatInt(*v, 10)
		}
	}
	if s.Pattern != "" {
		out["pattern"] = strconv.Quote(s.Pattern)
	}
	if s.UniqueItems {
		out["uniqueItems"] = "true"
	}
	return out
}

// describeType is a new field's type with its default: "string, default
// \"gold\"".
func describeType(s *extv1.JSONSchemaProps) string {
	if s.Default != nil {
		return typeName(s) + ", default " + string(s.Default.Raw)
	}
	return typeName(s)
}

// typeName names the type of s as SimpleSchema would: "list of string",
// "map of integer", "object with fields a, b", "free-form object".
func typeName(s *extv1.JSONSchemaProps) string {
	switch {
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "list of " + orAny(s.Items.Schema.Type)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map of " + orAny(s.AdditionalProperties.Schema.Type)
	case s.Type == "object" && preservesUnknown(s):
		return "free-form object"
	case s.Type == "object" && len(s.Properties) > 0:
		return "object with fields " + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ")
	}
	return orAny(s.Type)
}

func preservesUnknown(s *extv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

func orAny(t string) string {
	if t == "" {
		return "any"
	}
	return t
}

// ImmutableChanges are the changes from old to rgd of the fields that name
// the generated API, which the admission webhook refuses: changing them
// would orphan every stored instance. An unset group or scope is its
// default, as the API server stores it.
func ImmutableChanges(old, rgd *v1alpha1.ResourceGraphDefinition) field.ErrorList {
	if old.Spec.Schema == nil || rgd.Spec.Schema == nil {
		return nil
	}
	p := field.NewPath("spec", "schema")
	var errs field.ErrorList
	check := func(name, was, is string) {
		if was != "" && was != is {
			errs = append(errs, field.Forbidden(p.Child(name), fmt.Sprintf("%s is immutable (was %q); create a new RGD instead", name, was)))
		}
	}
	was, is := old.Spec.Schema.GroupVersionKind(), rgd.Spec.Schema.GroupVersionKind()
	check("kind", was.Kind, is.Kind)
	check("apiVersion", was.Version, is.Version)
	check("group", was.Group, is.Group)
	check("scope", string(scopeOf(old.Spec.Schema)), string(scopeOf(rgd.Spec.Schema)))
	return errs
}

func scopeOf(s *v1alpha1.Schema) v1alpha1.ResourceScope {
	if s.Scope == "" {
		return v1alpha1.ScopeNamespaced
	}
	return s.Scope
}
