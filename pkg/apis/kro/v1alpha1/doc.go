// Package v1alpha1 holds the kro.run/v1alpha1 API: the ResourceGraphDefinition
// and the labels, annotations and finalizer that kro-agent puts on the objects it
// manages. The types are wire-compatible with upstream kro, so an RGD written for
// kro is stored and read here unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=kro.run
package v1alpha1
