package v1alpha1

import (
	"encoding/json"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceGraphDefinition defines a new Kubernetes API (the schema of its
// instances) and the graph of resources every instance of it stands for.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rgd,categories=kro
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="APIVersion",type=string,JSONPath=`.spec.schema.apiVersion`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.schema.kind`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="TopologicalOrder",type=string,priority=1,JSONPath=`.status.topologicalOrder`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceGraphDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ResourceGraphDefinitionSpec `json:"spec,omitempty"`
	// Status is what kro-agent observed of the RGD. Until it first acts on
	// the RGD, observedGeneration is 0 (a default the API server fills in
	// on every read: with no status at all, kstatus, as Flux uses it,
	// would call the RGD Current before its kind is served).
	// +kubebuilder:default={}
	Status ResourceGraphDefinitionStatus `json:"status,omitempty"`
}

// ResourceGraphDefinitionList is a list of ResourceGraphDefinitions.
//
// +kubebuilder:object:root=true
type ResourceGraphDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceGraphDefinition `json:"items"`
}

// ResourceGraphDefinitionSpec is the schema of the new API and its resources.
type ResourceGraphDefinitionSpec struct {
	// Schema describes the kind this RGD defines: its name, group and version,
	// the SimpleSchema of its spec and the CEL expressions of its status.
	// +kubebuilder:validation:Required
	Schema *Schema `json:"schema"`

	// Resources are the templates and external references that make up the
	// graph. Their order is the authoring order, kept among independent
	// resources in the topological order.
	// +optional
	// +listType=atomic
	Resources []*Resource `json:"resources,omitempty"`

	// DefaultServiceAccounts is accepted for compatibility with upstream kro.
	// +optional
	DefaultServiceAccounts map[string]string `json:"defaultServiceAccounts,omitempty"`
}

// ResourceScope says whether instances of the generated kind are namespaced.
// +kubebuilder:validation:Enum=Namespaced;Cluster
type ResourceScope string

const (
	// ScopeNamespaced makes instances live in a namespace (the default).
	ScopeNamespaced ResourceScope = "Namespaced"
	// ScopeCluster makes instances cluster-scoped.
	ScopeCluster ResourceScope = "Cluster"
)

// Schema is the definition of the generated kind.
//
// An apiVersion written as an instance's, group/version, fails the pattern
// below; this rule adds what to write instead, at admission, where the
// pattern alone would be all kubectl apply shows.
// +kubebuilder:validation:XValidation:rule="!self.apiVersion.matches('^[^/]+/v[0-9]+((alpha|beta)[0-9]+)?$')",fieldPath=".apiVersion",messageExpression=`'the group is given apart, by spec.schema.group (kro.run when not given): write apiVersion: ' + self.apiVersion.split('/')[1] + (self.apiVersion.split('/')[0] == (has(self.group) ? self.group : 'kro.run') ? "" : ' and group: ' + self.apiVersion.split('/')[0])`
type Schema struct {
	// Kind is the kind of the generated API, in UpperCamelCase. Immutable.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[A-Z][a-zA-Z0-9]{0,62}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="kind is immutable"
	Kind string `json:"kind"`

	// APIVersion is the version of the generated API, for example v1alpha1.
	// Immutable.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^v[0-9]+((alpha|beta)[0-9]+)?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="apiVersion is immutable"
	APIVersion string `json:"apiVersion"`

	// Group is the API group of the generated API. Immutable.
	// +kubebuilder:default=kro.run
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="group is immutable"
	Group string `json:"group,omitempty"`

	// Scope says whether instances are namespaced or cluster-scoped. Immutable.
	// +kubebuilder:default=Namespaced
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="scope is immutable"
	Scope ResourceScope `json:"scope,omitempty"`

	// Spec is the instance's spec in SimpleSchema.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Spec runtime.RawExtension `json:"spec,omitempty"`

	// Types are named custom types that Spec may use by name.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Types runtime.RawExtension `json:"types,omitempty"`

	// Status maps status fields to CEL expressions over the resources and
	// the instance. Their types are inferred from the expressions.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Status runtime.RawExtension `json:"status,omitempty"`

	// AdditionalPrinterColumns replace the default printer columns of the
	// generated CRD when given.
	// +optional
	// +listType=atomic
	AdditionalPrinterColumns []extv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`

	// ShortNames of the generated kind.
	// +optional
	// +listType=atomic
	ShortNames []string `json:"shortNames,omitempty"`

	// Categories the generated kind belongs to (kubectl get CATEGORY).
	// +optional
	// +listType=atomic
	Categories []string `json:"categories,omitempty"`

	// Metadata holds labels and annotations copied onto the generated CRD.
	// +optional
	Metadata *CRDMetadata `json:"metadata,omitempty"`
}

// GroupVersionKind is the generated kind; the group defaults to kro.run.
func (s *Schema) GroupVersionKind() schema.GroupVersionKind {
	group := s.Group
	if group == "" {
		group = GroupVersion.Group
	}
	return schema.GroupVersionKind{Group: group, Version: s.APIVersion, Kind: s.Kind}
}

// CRDMetadata is metadata copied onto the generated CustomResourceDefinition.
type CRDMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Resource is one node of the graph: a template the graph owns, or an
// external object it only reads. Exactly one of template and externalRef is
// set; the graph compiler enforces it (template is schemaless, so a CRD rule
// could not see it).
type Resource struct {
	// ID names the resource in expressions; lowerCamelCase, unique.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`

	// Template is a full Kubernetes object, with ${...} expressions.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Template runtime.RawExtension `json:"template,omitempty"`

	// ExternalRef names an object the graph reads but never writes or deletes.
	// +optional
	ExternalRef *ExternalRef `json:"externalRef,omitempty"`

	// ReadyWhen expressions must all be true for the resource to be ready.
	// They may reference only the resource itself (or `each` in a collection).
	// +optional
	// +listType=atomic
	ReadyWhen []string `json:"readyWhen,omitempty"`

	// IncludeWhen expressions must all be true for the resource to be created.
	// +optional
	// +listType=atomic
	IncludeWhen []string `json:"includeWhen,omitempty"`

	// ForEach turns the resource into a collection: each entry maps one
	// iterator name to a list expression; the cartesian product of the lists
	// gives the items.
	// +optional
	// +listType=atomic
	ForEach []ForEachDimension `json:"forEach,omitempty"`
}

// ForEachDimension maps a single iterator name to a list expression.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=1
type ForEachDimension map[string]string

// GroupVersionKind is the kind a resource creates or reads, as written in
// its template or externalRef, before the RGD is compiled; false when it
// does not say (the compiler reports why).
func (r *Resource) GroupVersionKind() (schema.GroupVersionKind, bool) {
	apiVersion, kind := "", ""
	switch {
	case r.ExternalRef != nil:
		apiVersion, kind = r.ExternalRef.APIVersion, r.ExternalRef.Kind
	case len(r.Template.Raw) > 0:
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if json.Unmarshal(r.Template.Raw, &tm) != nil {
			return schema.GroupVersionKind{}, false
		}
		apiVersion, kind = tm.APIVersion, tm.Kind
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" {
		return schema.GroupVersionKind{}, false
	}
	return gv.WithKind(kind), true
}

// ExternalRef points at an object that exists independently of the graph.
type ExternalRef struct {
	// +kubebuilder:validation:Required
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:Required
	Kind string `json:"kind"`
	// +kubebuilder:validation:Required
	Metadata ExternalRefMetadata `json:"metadata"`
}

// ExternalRefMetadata selects the external object by name, or a list of
// objects by labels.
type ExternalRefMetadata struct {
	// Name of the object; may contain expressions.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the object. A reference by name defaults to the
	// instance's namespace; a selector without one lists every namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Selector selects a list of objects instead of one by name: a label
	// selector (matchLabels, matchExpressions) whose values, or whose
	// matchLabels or matchExpressions as a whole, may be expressions, or a
	// single ${...} expression giving the whole selector.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Selector *runtime.RawExtension `json:"selector,omitempty"`
}

// HasSelector reports whether the reference selects a list of objects.
func (m ExternalRefMetadata) HasSelector() bool {
	return m.Selector != nil && len(m.Selector.Raw) > 0 && string(m.Selector.Raw) != "null"
}

// ResourceGraphDefinitionState is the coarse state of an RGD.
type ResourceGraphDefinitionState string

const (
	// StateActive means the RGD is valid and its instances are served.
	StateActive ResourceGraphDefinitionState = "Active"
	// StateInactive means the RGD's instances are not served.
	StateInactive ResourceGraphDefinitionState = "Inactive"
)

// ResourceGraphDefinitionStatus is the observed state of an RGD.
type ResourceGraphDefinitionStatus struct {
	// State is Active when the kind is served, Inactive otherwise.
	// +optional
	State ResourceGraphDefinitionState `json:"state,omitempty"`

	// ObservedGeneration is the metadata.generation that state and
	// conditions describe: behind it, kro-agent has not acted on the
	// latest spec yet (kstatus, as Flux uses it, reads it). 0 until it
	// first has.
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// TopologicalOrder is the order in which resources are applied.
	// +optional
	// +listType=atomic
	TopologicalOrder []string `json:"topologicalOrder,omitempty"`

	// Resources lists every resource with the resources it depends on.
	// +optional
	// +listType=atomic
	Resources []ResourceInformation `json:"resources,omitempty"`

	// Conditions: Ready on top of GraphAccepted, KindReady, ControllerReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceInformation is a resource and its dependencies.
type ResourceInformation struct {
	ID string `json:"id"`
	// +optional
	// +listType=atomic
	Dependencies []Dependency `json:"dependencies,omitempty"`
}

// Dependency names a resource that another resource depends on.
type Dependency struct {
	ID string `json:"id"`
}
