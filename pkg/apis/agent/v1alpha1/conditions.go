package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kro-agent/kro-agent/pkg/conditions"
)

// Cluster conditions. Ready is True when all four are.
const (
	ConditionReady = "Ready"
	// ConditionKubeconfigLoaded: the Secret exists and holds a usable
	// kubeconfig.
	ConditionKubeconfigLoaded = "KubeconfigLoaded"
	// ConditionReachable: the API server answered with its version.
	ConditionReachable = "Reachable"
	// ConditionKindsDiscoverable: the API server listed its kinds.
	ConditionKindsDiscoverable = "KindsDiscoverable"
	// ConditionGuarded: kro-agent's guard policies (only the agent changes
	// ownership labels; it takes over nothing it did not create) are in
	// place, so nothing is placed where they could not be installed.
	ConditionGuarded = "Guarded"
)

// Reasons of Cluster conditions.
const (
	ReasonLoaded            = "Loaded"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonInvalidKubeconfig = "InvalidKubeconfig"
	ReasonReachable         = "Reachable"
	ReasonUnreachable       = "Unreachable"
	ReasonDiscovered        = "Discovered"
	ReasonDiscoveryFailed   = "DiscoveryFailed"
	ReasonNotChecked        = "NotChecked"
	ReasonPoliciesApplied   = "PoliciesApplied"
	ReasonPoliciesFailed    = "PoliciesNotApplied"
)

// ClusterConditions is the condition set of a Cluster.
var ClusterConditions = conditions.NewSet(ConditionReady, ConditionKubeconfigLoaded, ConditionReachable, ConditionKindsDiscoverable, ConditionGuarded)

// ClusterHealth records one connection check of a Cluster, in order: a
// failed step leaves the later ones Unknown. Build it with Check.
// +kubebuilder:object:generate=false
type ClusterHealth struct {
	m      *conditions.Manager
	status *ClusterStatus
}

// Check starts recording a connection check of the cluster at generation.
func (s *ClusterStatus) Check(generation int64) *ClusterHealth {
	s.ObservedGeneration = generation
	m := ClusterConditions.Manage(&s.Conditions, generation)
	m.InitializeConditions()
	return &ClusterHealth{m: m, status: s}
}

// KubeconfigFailed records a Secret that is missing or holds no usable
// kubeconfig; nothing further was tried.
func (h *ClusterHealth) KubeconfigFailed(reason, msg string) {
	h.m.MarkFalse(ConditionKubeconfigLoaded, reason, "%s", msg)
	h.m.MarkUnknown(ConditionReachable, ReasonNotChecked, "the kubeconfig could not be loaded")
	h.m.MarkUnknown(ConditionKindsDiscoverable, ReasonNotChecked, "the kubeconfig could not be loaded")
	h.m.MarkUnknown(ConditionGuarded, ReasonNotChecked, "the kubeconfig could not be loaded")
}

// KubeconfigLoaded records a usable kubeconfig for server.
func (h *ClusterHealth) KubeconfigLoaded(server string) {
	h.m.MarkTrue(ConditionKubeconfigLoaded, ReasonLoaded, "kubeconfig for %s loaded", server)
}

// Unreachable records an API server that did not answer. The version last
// seen is kept: it is still the best guess of what runs there.
func (h *ClusterHealth) Unreachable(msg string) {
	h.m.MarkFalse(ConditionReachable, ReasonUnreachable, "%s", msg)
	h.m.MarkUnknown(ConditionKindsDiscoverable, ReasonNotChecked, "the API server is not reachable")
	h.m.MarkUnknown(ConditionGuarded, ReasonNotChecked, "the API server is not reachable")
}

// Reachable records the API server's version.
func (h *ClusterHealth) Reachable(version string) {
	h.status.ServerVersion = version
	h.m.MarkTrue(ConditionReachable, ReasonReachable, "API server version %s", version)
}

// DiscoveryFailed records kinds that could not be listed.
func (h *ClusterHealth) DiscoveryFailed(msg string) {
	h.m.MarkFalse(ConditionKindsDiscoverable, ReasonDiscoveryFailed, "%s", msg)
}

// Discovered records how many kinds the cluster serves.
func (h *ClusterHealth) Discovered(kinds int) {
	h.m.MarkTrue(ConditionKindsDiscoverable, ReasonDiscovered, "%d kinds served", kinds)
}

// Guarded records kro-agent's guard policies in place.
func (h *ClusterHealth) Guarded() {
	h.m.MarkTrue(ConditionGuarded, ReasonPoliciesApplied, "the ownership-label and no-takeover policies are applied")
}

// GuardFailed records guard policies that could not be applied.
func (h *ClusterHealth) GuardFailed(msg string) {
	h.m.MarkFalse(ConditionGuarded, ReasonPoliciesFailed, "%s", msg)
}

// IsReady reports whether the Cluster's Ready condition is True.
func (s *ClusterStatus) IsReady() bool {
	return meta.IsStatusConditionTrue(s.Conditions, ConditionReady)
}

// ReadyMessage is the Ready condition's message, or "" when absent.
func (s *ClusterStatus) ReadyMessage() string {
	if c := meta.FindStatusCondition(s.Conditions, ConditionReady); c != nil {
		return c.Message
	}
	return ""
}
