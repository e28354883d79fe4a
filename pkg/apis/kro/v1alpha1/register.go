package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of every type in this package.
var GroupVersion = schema.GroupVersion{Group: "kro.run", Version: "v1alpha1"}

// ResourceGraphDefinitionGroupKind names RGDs at any version.
var ResourceGraphDefinitionGroupKind = schema.GroupKind{Group: GroupVersion.Group, Kind: "ResourceGraphDefinition"}

// SchemeBuilder registers this package's types with a runtime.Scheme.
var (
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &ResourceGraphDefinition{}, &ResourceGraphDefinitionList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
