package graph

import (
	"fmt"
	"strings"

	"github.com/gobuffalo/flect"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// Plural is the resource name of a kind: lower case, English plural.
func Plural(kind string) string {
	return flect.Pluralize(strings.ToLower(kind))
}

// CRDName is the name of the CRD serving kind in group.
func CRDName(kind, group string) string {
	return Plural(kind) + "." + group
}

// generateCRD builds the CRD that serves the RGD's instances.
func generateCRD(rgd *v1alpha1.ResourceGraphDefinition, g *Graph, specSchema, statusSchema *extv1.JSONSchemaProps) *extv1.CustomResourceDefinition {
	s := rgd.Spec.Schema
	labels := map[string]string{}
	var annotations map[string]string
	if s.Metadata != nil {
		for k, v := range s.Metadata.Labels {
			labels[k] = v
		}
		if len(s.Metadata.Annotations) > 0 {
			annotations = map[string]string{}
			for k, v := range s.Metadata.Annotations {
				annotations[k] = v
			}
		}
	}
	labels[v1alpha1.LabelOwned] = "true"
	labels[v1alpha1.LabelRGDName] = rgd.Name
	if rgd.UID != "" {
		labels[v1alpha1.LabelRGDID] = string(rgd.UID)
	}

	// What kubectl explain says of the kind, its spec and its status. The
	// spec's own description alone changes: a shallow copy does.
	spec := *specSchema
	if spec.Description == "" {
		spec.Description = fmt.Sprintf("The desired state of the %s: the fields ResourceGraphDefinition %s gives in spec.schema.spec.", s.Kind, rgd.Name)
	}
	status := statusSchema.DeepCopy()
	status.Description = fmt.Sprintf("What kro-agent observed of the %s and the resources it manages.", s.Kind)
	status.Properties[StatusState] = extv1.JSONSchemaProps{Type: "string", Description: "ACTIVE, IN_PROGRESS, FAILED, DELETING or ERROR."}
	status.Properties[StatusConditions] = extv1.JSONSchemaProps{
		Description: fmt.Sprintf("Ready, and the conditions it sums up: InstanceManaged, GraphResolved, ResourcesReady (and Placed, for an instance placed by region); "+
			"then those ResourceGraphDefinition %s declares. kubectl kro explain-conditions says what each means.", rgd.Name),
		Type:         "array",
		Items:        &extv1.JSONSchemaPropsOrArray{Schema: ptrTo(conditionSchema())},
		XListType:    ptrTo("map"),
		XListMapKeys: []string{"type"},
	}
	if g.ObservedGeneration {
		status.Properties[StatusObservedGeneration] = extv1.JSONSchemaProps{
			Type: "integer", Format: "int64", Default: &extv1.JSON{Raw: []byte("0")},
			Description: fmt.Sprintf("The metadata.generation of the %s that state and conditions describe; behind metadata.generation, kro-agent has not acted on the latest spec yet (0 until it first has).", s.Kind),
		}
		// Defaults hold on every read: an instance kro-agent has not
		// written yet reads as generation 1 not yet observed. With no
		// status at all, tools that judge health by kstatus (Flux,
		// cli-utils' appliers) would take it for Current, before any of
		// its resources exists, and for good while no kro-agent runs.
		status.Default = &extv1.JSON{Raw: []byte("{}")}
	}
	status.Properties[StatusPlacement] = extv1.JSONSchemaProps{
		Type:        "object",
		Description: "The workload cluster the instance's resources live in, for instances labelled agent.kro.run/region; the region alone while an instance placed before waits to be placed again, its cluster gone.",
		Properties: map[string]extv1.JSONSchemaProps{
			"cluster": {Type: "string"},
			"region":  {Type: "string"},
		},
	}
	columns := s.AdditionalPrinterColumns
	if len(columns) == 0 {
		columns = []extv1.CustomResourceColumnDefinition{
			{Name: "State", Type: "string", JSONPath: ".status.state",
				Description: "Where the instance is in its reconciliation: ACTIVE, IN_PROGRESS, FAILED, ERROR or DELETING"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`,
				Description: "Status of the instance's Ready condition"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
				Description: "Time since the instance was created"},
		}
	}
	scope := extv1.NamespaceScoped
	if !g.Namespaced {
		scope = extv1.ClusterScoped
	}
	return &extv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: extv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        CRDName(s.Kind, g.Instance.Group),
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: g.Instance.Group,
			Names: extv1.CustomResourceDefinitionNames{
				Kind:       s.Kind,
				ListKind:   s.Kind + "List",
				Plural:     g.Resource,
				Singular:   strings.ToLower(s.Kind),
				ShortNames: s.ShortNames,
				Categories: s.Categories,
			},
			Scope: scope,
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name:    g.Instance.Version,
				Served:  true,
				Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{
					Description:  fmt.Sprintf("%s is an API defined by ResourceGraphDefinition %s and served by kro-agent, which keeps the resources of each %s as its spec asks.", s.Kind, rgd.Name, s.Kind),
					Type:         "object",
					XValidations: instanceNameRule(),
					Properties: map[string]extv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						// Declared so the name rule can point at it.
						"metadata": {Type: "object", Properties: map[string]extv1.JSONSchemaProps{"name": {Type: "string"}}},
						"spec":     spec,
						"status":   *status,
					},
				}},
				Subresources:             &extv1.CustomResourceSubresources{Status: &extv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: columns,
			}},
		},
	}
}

// instanceNameRule keeps an instance's name short enough for the label
// every object it manages carries, so a name that cannot work is refused
// when the instance is created rather than failing each apply after. It is
// checked on create only (names never change): an instance created before
// the rule existed can still be updated, and its finalizer removed.
func instanceNameRule() extv1.ValidationRules {
	return extv1.ValidationRules{{
		Rule:            fmt.Sprintf("oldSelf.hasValue() || size(self.metadata.name) <= %d", validation.LabelValueMaxLength),
		OptionalOldSelf: ptrTo(true),
		Message: fmt.Sprintf("must be no more than %d characters: every object the instance manages carries its name in the label %s",
			validation.LabelValueMaxLength, v1alpha1.LabelInstanceName),
		FieldPath: ".metadata.name",
	}}
}

// instanceSchema is the schema of `schema` in expressions: the instance's
// apiVersion, kind, metadata and spec. Its status is not in scope: the
// graph writes it, and reading it would make the graph depend on itself.
func instanceSchema(specSchema *extv1.JSONSchemaProps, resolver kinds.Resolver) *spec.Schema {
	s := &spec.Schema{}
	s.Type = []string{"object"}
	s.Properties = map[string]spec.Schema{
		"apiVersion": *spec.StringProperty(),
		"kind":       *spec.StringProperty(),
		"metadata":   kinds.ObjectMeta(resolver),
	}
	if specSchema != nil {
		if converted := kinds.SpecSchema(specSchema); converted != nil {
			s.Properties["spec"] = *converted
		}
	}
	return s
}

func ptrTo[T any](v T) *T { return &v }
