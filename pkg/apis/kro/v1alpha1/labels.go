package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels, annotations and the finalizer kro-agent sets, as upstream kro names
// them (see the kro "Instances" documentation): on instances, and with the
// instance-* and node-id labels added, on every resource an instance manages.
const (
	// LabelOwned is "true" on everything kro-agent manages.
	LabelOwned = "kro.run/owned"
	// LabelKroVersion is the version of the agent managing the object.
	LabelKroVersion = "kro.run/kro-version"
	// LabelRGDID is the UID of the ResourceGraphDefinition.
	LabelRGDID = "kro.run/resource-graph-definition-id"
	// LabelRGDName is the name of the ResourceGraphDefinition.
	LabelRGDName = "kro.run/resource-graph-definition-name"
	// LabelManagedBy is the recommended Kubernetes label, set to "kro".
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "kro"

	// LabelInstanceID is the UID of the instance owning a resource.
	LabelInstanceID = "kro.run/instance-id"
	// LabelInstanceName is the name of the instance owning a resource.
	LabelInstanceName = "kro.run/instance-name"
	// LabelInstanceNamespace is the namespace of the instance owning a resource.
	LabelInstanceNamespace = "kro.run/instance-namespace"
	// LabelNodeID is the id of the resource in the RGD.
	LabelNodeID = "kro.run/node-id"
	// LabelCollectionIndex is an item's position in its collection.
	LabelCollectionIndex = "kro.run/collection-index"
	// LabelCollectionSize is the number of items in the collection.
	LabelCollectionSize = "kro.run/collection-size"

	// LabelApplySetID identifies an instance as an ApplySet parent.
	LabelApplySetID = "applyset.kubernetes.io/id"
	// LabelApplySetPartOf links a managed resource to its parent's ApplySet id.
	LabelApplySetPartOf = "applyset.kubernetes.io/part-of"
	// AnnotationApplySetTooling names the tool managing the ApplySet.
	AnnotationApplySetTooling = "applyset.kubernetes.io/tooling"
	// AnnotationApplySetGroupKinds lists the group-kinds the ApplySet holds.
	AnnotationApplySetGroupKinds = "applyset.kubernetes.io/contains-group-kinds"
	// AnnotationApplySetNamespaces lists namespaces, other than the parent's,
	// holding members of the ApplySet.
	AnnotationApplySetNamespaces = "applyset.kubernetes.io/additional-namespaces"

	// AnnotationAllowBreakingChanges on an RGD lets a schema change that
	// would break stored instances through.
	AnnotationAllowBreakingChanges = "kro.run/allow-breaking-changes"
	// AnnotationReconcile set to ReconcileSuspended stops all writes for an
	// instance.
	AnnotationReconcile = "kro.run/reconcile"
	// ReconcileSuspended is the value of AnnotationReconcile that suspends.
	ReconcileSuspended = "suspended"
	// AnnotationAdoptBy on an existing object kro-agent did not make for
	// an instance names the instance that may take it over
	// ("namespace/name", or "name" for a cluster-scoped one): its owner's
	// consent, which the agent otherwise never assumes.
	AnnotationAdoptBy = "kro.run/adopt-by"

	// Finalizer holds an instance until its resources are deleted in order.
	Finalizer = "kro.run/finalizer"
)

// OtherFinalizers are the finalizers of an instance but kro-agent's own
// (Finalizer): those that hold it once kro-agent lets it go.
func OtherFinalizers(instance metav1.Object) []string {
	return slices.DeleteFunc(slices.Clone(instance.GetFinalizers()), func(f string) bool { return f == Finalizer })
}

// IsSuspended says whether an instance carries AnnotationReconcile set to
// ReconcileSuspended.
func IsSuspended(instance metav1.Object) bool {
	return instance.GetAnnotations()[AnnotationReconcile] == ReconcileSuspended
}
