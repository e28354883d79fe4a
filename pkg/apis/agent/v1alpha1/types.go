package v1alpha1

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LabelRegion on an instance asks for it to be placed on a Ready Cluster of
// that region; its resources are then created there. Without it, an
// instance's resources live in the cluster the instance lives in.
const LabelRegion = "agent.kro.run/region"

// ClusterSpec registers a workload cluster.
type ClusterSpec struct {
	// Region the cluster serves; instances labelled agent.kro.run/region
	// with this value may be placed on it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Region string `json:"region"`
	// KubeconfigSecretRef names the Secret key holding a kubeconfig for the
	// cluster. Its current context is used; credentials must be embedded
	// (the agent cannot read files the kubeconfig points to).
	KubeconfigSecretRef SecretKeyRef `json:"kubeconfigSecretRef"`
	// Paused clusters receive no new instances; instances already placed
	// on them stay and keep being reconciled.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// SecretKeyRef names one key of a Secret.
type SecretKeyRef struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key within the Secret's data; "value" when empty.
	// +optional
	Key string `json:"key,omitempty"`
}

// DefaultKubeconfigKey is the Secret key read when SecretKeyRef.Key is empty.
const DefaultKubeconfigKey = "value"

// KeyOrDefault returns the key to read.
func (r SecretKeyRef) KeyOrDefault() string {
	if r.Key == "" {
		return DefaultKubeconfigKey
	}
	return r.Key
}

// ClusterStatus is what the agent last found when connecting to the cluster.
type ClusterStatus struct {
	// Conditions: Ready, summarizing KubeconfigLoaded, Reachable,
	// KindsDiscoverable and Guarded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ServerVersion is the Kubernetes version the cluster reported.
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`
	// ObservedGeneration is the generation the conditions describe; 0
	// until kro-agent first checks the cluster.
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=kroc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.serverVersion`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Cluster registers a workload cluster that instances can be placed on.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterSpec `json:"spec"`
	// Status is what kro-agent's last check of the cluster found. Until
	// its first, observedGeneration is 0 (a default the API server fills
	// in on every read: with no status at all, kstatus, as Flux uses it,
	// would call the Cluster Current before anything checked it).
	// +kubebuilder:default={}
	Status ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// Placement is where an instance's resources live, in its status.placement.
// +kubebuilder:object:generate=false
type Placement struct {
	Cluster string `json:"cluster"`
	Region  string `json:"region"`
}

// StaysDespite says why an instance placed at p stays there although its
// region label, label, now names another region or none; "" when the
// label names p's region. Placement is made once: the resources live
// there, and moving them would mean deleting them.
func (p Placement) StaysDespite(label string) string {
	if label == p.Region {
		return ""
	}
	asks := fmt.Sprintf("the label %s asks for region %q", LabelRegion, label)
	if label == "" {
		asks = fmt.Sprintf("the label %s was removed", LabelRegion)
	}
	return fmt.Sprintf("%s, but the instance stays on cluster %s (region %s), where its resources are: a placed instance does not move; delete it and create it again to move it", asks, p.Cluster, p.Region)
}

// StaysLocal says why an instance kro-agent reconciled in the local cluster
// stays there although its label now asks for region label.
func StaysLocal(label string) string {
	return fmt.Sprintf("the label %s asks for region %q, but the instance stays in the local cluster, where kro-agent reconciled it: an instance is placed by region when it is first reconciled and does not move afterwards; delete it and create it again to place it", LabelRegion, label)
}

// PlacementOf reads an instance's status.placement; ok is false when the
// instance is not placed on a workload cluster. A region without a cluster
// is where an instance placed before waits to be placed again, the Cluster
// it was on having been deleted.
func PlacementOf(instance *unstructured.Unstructured) (p Placement, ok bool) {
	m, _, _ := unstructured.NestedStringMap(instance.Object, "status", StatusPlacement)
	p = Placement{Cluster: m["cluster"], Region: m["region"]}
	return p, p.Cluster != ""
}

// StatusPlacement is the instance status field holding the Placement (the
// generated CRD declares it).
const StatusPlacement = "placement"
