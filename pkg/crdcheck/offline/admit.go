package offline

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	var errs field.ErrorList
	for _, path := range pruning.PruneWithOptions(obj.Object, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Forbidden(field.NewPath(path), "field not declared in the schema"+meantField(structural, path)))
	}
	defaulting.Default(obj.Object, structural)

	namespaced := crd.Spec.Scope == extv1.NamespaceScoped
	if !namespaced {
		obj.SetNamespace("") // the API server takes no namespace of a cluster-scoped object, nor refuses one
	}
	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(obj, namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj.Object, validator)...)
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

// meantField is, for the field at path (as pruning writes it:
// spec.resources[0].readywhen) that schema does not declare, the field
// declared beside it that is spelt alike, as "; did you mean readyWhen?";
// "" when none is.
func meantField(schema *structuralschema.Structural, path string) string {
	// The steps of path: field names and map keys, and "" for each
	// [index] or [key] of a list.
	var steps []string
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return ""
			}
			steps = append(steps, "")
			i += end + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			steps = append(steps, path[i:j])
			i = j
		}
	}
	if len(steps) == 0 || steps[len(steps)-1] == "" {
		return ""
	}
	s := schema
	for _, step := range steps[:len(steps)-1] {
		next, declared := s.Properties[step]
		switch {
		case declared:
			s = &next
		case step != "" && s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			// A map's key, which pruning writes as a field name.
			s = s.AdditionalProperties.Structural
		case step != "":
			return ""
		case s.Items != nil:
			s = s.Items
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			s = s.AdditionalProperties.Structural
		default:
			return ""
		}
	}
	if meant, ok := spelling.Closest(steps[len(steps)-1], slices.Sorted(maps.Keys(s.Properties))); ok {
		return "; did you mean " + meant + "?"
	}
	return ""
}
