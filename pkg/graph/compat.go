package graph

import (
	"fmt"
	"slices"
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
	ps, ns := specSchemaOf(prev), specSchemaOf(next)
	if ps == nil || ns == nil {
		return nil
	}
	var out []string
	compareSchemas(ps, ns, "spec", &out)
	return out
}

func specSchemaOf(crd *extv1.CustomResourceDefinition) *extv1.JSONSchemaProps {
	if crd == nil || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil
	}
	s, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if !ok {
		return nil
	}
	return &s
}

func compareSchemas(prev, next *extv1.JSONSchemaProps, path string, out *[]string) {
	if prev.Type != next.Type {
		*out = append(*out, fmt.Sprintf("%s changed type from %s to %s", path, orAny(prev.Type), orAny(next.Type)))
		return
	}
	for name, p := range prev.Properties {
		n, ok := next.Properties[name]
		if !ok {
			*out = append(*out, fmt.Sprintf("%s.%s was removed", path, name))
			continue
		}
		compareSchemas(&p, &n, path+"."+name, out)
	}
	for _, r := range next.Required {
		if !slices.Contains(prev.Required, r) {
			*out = append(*out, fmt.Sprintf("%s.%s is newly required", path, r))
		}
	}
	if prev.Items != nil && prev.Items.Schema != nil && next.Items != nil && next.Items.Schema != nil {
		compareSchemas(prev.Items.Schema, next.Items.Schema, path+"[*]", out)
	}
	if prev.AdditionalProperties != nil && prev.AdditionalProperties.Schema != nil && next.AdditionalProperties != nil && next.AdditionalProperties.Schema != nil {
		compareSchemas(prev.AdditionalProperties.Schema, next.AdditionalProperties.Schema, path+"[*]", out)
	}
	slices.Sort(*out)
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
