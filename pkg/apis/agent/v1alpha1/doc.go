// Package v1alpha1 holds the agent.kro.run/v1alpha1 API, kro-agent's own
// types beside the kro.run API it implements: the Cluster, which registers
// a workload cluster that instances are placed on by region, and the
// label and status fields of placement.
//
// +kubebuilder:object:generate=true
// +groupName=agent.kro.run
package v1alpha1
