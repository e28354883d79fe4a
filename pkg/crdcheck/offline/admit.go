package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	namegen "k8s.io/apiserver/pkg/storage/names"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// Admit does to obj, a new object of the kind crd serves, what the API
// server does when it is created with strict field validation, for a kind
// the cluster does not serve yet: named from its generateName, the
// namespace of a cluster-scoped object dropped, status dropped (a status
// subresource takes it apart), fields the schema does not declare named,
// defaults filled in, then metadata, the schema's validation, list
// invariants and x-kubernetes-validations rules checked.
// obj is changed in place. The errors are the API server's, with its
// paths; a schema the API server would not take is the error returned.
func Admit(ctx context.Context, crd *extv1.CustomResourceDefinition, obj *unstructured.Unstructured) (field.ErrorList, error) {
	if len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no schema", crd.Name)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("reading the schema of CustomResourceDefinition %s: %w", crd.Name, err)
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema of CustomResourceDefinition %s is not structural: %w", crd.Name, err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema of CustomResourceDefinition %s: %w", crd.Name, err)
	}

	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(namegen.SimpleNameGenerator.GenerateName(obj.GetGenerateName()))
	}
	if crd.Spec.Versions[0].Subresources != nil && crd.Spec.Versions[0].Subresources.Status != nil {
		delete(obj.Object, "status")
	}
	// The advice on a value of the wrong type shows it as written, before
	// pruning took the fields out of a map written where a list is wanted.
	written := obj.DeepCopy().Object
	var undeclared field.ErrorList
	for _, path := range pruning.PruneWithOptions(obj.Object, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		undeclared = append(undeclared, field.Forbidden(field.NewPath(path), "field not declared in the schema"+meantField(structural, path)))
	}
	defaulting.Default(obj.Object, structural)

	namespaced := crd.Spec.Scope == extv1.NamespaceScoped
	if !namespaced {
		obj.SetNamespace("") // the API server takes no namespace of a cluster-scoped object, nor refuses one
	}
	schemaErrs := apiservervalidation.ValidateCustomResource(nil, obj.Object, validator)
	errs := withinNoMisfit(undeclared, schemaErrs)
	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(obj, namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, textReadAsAnotherType(listsWrittenAsOne(schemaErrs, written, structural), written)...)
	errs = append(errs, objectmeta.Validate(nil, obj.Object, structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, structural, obj.Object)...)
	// As the API server: the rules run unless an error says the object is
	// not what the schema describes, which they may take for granted. (It
	// adds an error saying so, without a field; the errors above are what
	// to correct, and the rules are checked once they are.)
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return errs, nil
		}
	}
	ruleErrs, _ := cel.NewValidator(structural, true, celconfig.PerCallLimit).Validate(ctx, nil, structural, obj.Object, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, ruleErrs...), nil
}

// listsWrittenAsOne adds to each error of errs that refuses a single value
// where the schema wants a list (includeWhen: ${...}, regions: eu) how to
// write it as a list of that value.
func listsWrittenAsOne(errs field.ErrorList, obj map[string]any, schema *structuralschema.Structural) field.ErrorList {
	for _, e := range errs {
		if (e.Type != field.ErrorTypeTypeInvalid && e.Type != field.ErrorTypeInvalid) || !strings.Contains(e.Detail, "must be of type array") {
			continue
		}
		v, ok := valueAt(obj, e.Field)
		s := schemaAt(schema, e.Field)
		if !ok || s == nil || s.Items == nil || s.Items.Type != jsonType(v) {
			// Not a value the list holds items of (forEach's items
			// are maps of iterators, not the expression alone).
			continue
		}
		item, err := json.Marshal(v)
		if err != nil {
			continue
		}
		e.Detail += fmt.Sprintf(": a list is wanted; to give this one value, write [%s]", item)
	}
	return errs
}

// withinNoMisfit is errs but those beneath the field of a value of the
// wrong type: a map where a list is wanted has its keys pruned as
// undeclared fields, which says nothing the type's error does not.
func withinNoMisfit(errs, typeErrs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if !slices.ContainsFunc(typeErrs, func(t *field.Error) bool {
			return t.Type == field.ErrorTypeTypeInvalid && (strings.HasPrefix(e.Field, t.Field+".") || strings.HasPrefix(e.Field, t.Field+"["))
		}) {
			out = append(out, e)
		}
	}
	return out
}

// textReadAsAnotherType adds to each error of errs that refuses a boolean
// or a number where the schema wants a string why YAML read it so: the
// text was written without quotes (name: y, version: 1.10).
func textReadAsAnotherType(errs field.ErrorList, obj map[string]any) field.ErrorList {
	for _, e := range errs {
		if (e.Type != field.ErrorTypeTypeInvalid && e.Type != field.ErrorTypeInvalid) || !strings.Contains(e.Detail, "must be of type string") {
			continue
		}
		v, _ := valueAt(obj, e.Field)
		switch v := v.(type) {
		case bool:
			b := strconv.FormatBool(v)
			e.Detail += fmt.Sprintf(": YAML reads an unquoted %s or %s as the boolean %s; quote the text", strings.Join(celenv.YAMLBooleanWords(b), ", "), b, b)
		case int64, float64:
			// 1.10 was read as 1.1, 0x1F as 31: the number is not
			// always the text.
			e.Detail += ": YAML reads an unquoted number as a number; quote the text as it was written"
		}
	}
	return errs
}

// valueAt is the value at path (spec.resources[0].includeWhen) in obj.
func valueAt(obj map[string]any, path string) (any, bool) {
	steps, ok := errorPathSteps(path)
	if !ok {
		return nil, false
	}
	var v any = obj
	for _, st := range steps {
		if st.item {
			list, ok := v.([]any)
			n, err := strconv.Atoi(st.name)
			if !ok || err != nil || n < 0 || n >= len(list) {
				return nil, false
			}
			v = list[n]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[st.name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// pathStep is one step of a path as the API server's errors write it: a
// field name or a map's key, or (item) what stands between brackets.
type pathStep struct {
	name string
	item bool
}

// errorPathSteps splits such a path (spec.resources[0].readyWhen) into its
// steps; false when a bracket is not closed.
func errorPathSteps(path string) ([]pathStep, bool) {
	var steps []pathStep
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, false
			}
			steps = append(steps, pathStep{name: path[i+1 : i+end], item: true})
			i += end + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			steps = append(steps, pathStep{name: path[i:j]})
			i = j
		}
	}
	return steps, true
}

// jsonType is the schema type of a decoded JSON scalar or map v; "" for a
// list or null.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int, float64:
		return "integer"
	case map[string]any:
		return "object"
	}
	return ""
}

// meantField is, for the field at path (as pruning writes it:
// spec.resources[0].readywhen) that schema does not declare, the field
// declared beside it that is spelt alike, as "; did you mean readyWhen?";
// "" when none is.
func meantField(schema *structuralschema.Structural, path string) string {
	cut := strings.LastIndexAny(path, ".]")
	if cut >= 0 && path[cut] == ']' {
		return "" // a list's item: no field name
	}
	parent := schema
	if cut > 0 {
		parent = schemaAt(schema, path[:cut])
	}
	if parent == nil {
		return ""
	}
	if meant, ok := spelling.Closest(path[cut+1:], slices.Sorted(maps.Keys(parent.Properties))); ok {
		return "; did you mean " + meant + "?"
	}
	return ""
}

// schemaAt is the schema of the value at path (spec.resources[0].readyWhen,
// a map's keys written as field names, as the API server's errors write
// them) below schema; nil where schema declares none.
func schemaAt(schema *structuralschema.Structural, path string) *structuralschema.Structural {
	steps, ok := errorPathSteps(path)
	if !ok {
		return nil
	}
	s := schema
	for _, st := range steps {
		if s == nil {
			return nil
		}
		if st.item {
			s = s.Items
			continue
		}
		if next, ok := s.Properties[st.name]; ok {
			s = &next
		} else if s.AdditionalProperties != nil {
			s = s.AdditionalProperties.Structural
		} else {
			return nil
		}
	}
	return s
}
