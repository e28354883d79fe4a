package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/conditions"
)

// ConditionReady is the top-level condition of RGDs and instances.
const ConditionReady = "Ready"

// RGD conditions under Ready.
const (
	// ConditionGraphAccepted: the RGD is valid (SimpleSchema, expressions, DAG).
	ConditionGraphAccepted = "GraphAccepted"
	// ConditionKindReady: the generated CRD is applied and established.
	ConditionKindReady = "KindReady"
	// ConditionControllerReady: instances of the kind are being served.
	ConditionControllerReady = "ControllerReady"
)

// Reasons of RGD conditions.
const (
	ReasonValid                = "Valid"
	ReasonInvalidResourceGraph = "InvalidResourceGraph"
	ReasonKindEstablished      = "Established"
	ReasonKindPending          = "Pending"
	ReasonKindFailed           = "Failed"
	ReasonBreakingChange       = "BreakingChange"
	ReasonServing              = "Serving"
	ReasonNotServing           = "NotServing"
	ReasonKindNotWatched       = "KindNotWatched"

	// ReasonServingEarlierGeneration is ControllerReady's while instances
	// are reconciled with the graph of an earlier generation, the latest
	// one's kind not applied (see KindReady).
	ReasonServingEarlierGeneration = "ServingEarlierGeneration"
)

// RGDConditions is the condition set of a ResourceGraphDefinition.
var RGDConditions = conditions.NewSet(ConditionReady, ConditionGraphAccepted, ConditionKindReady, ConditionControllerReady)

func (s *ResourceGraphDefinitionStatus) manage(generation int64) *conditions.Manager {
	m := RGDConditions.Manage(&s.Conditions, generation)
	m.InitializeConditions()
	return m
}

// MarkGraphAccepted records a valid graph and its order, and the warnings
// of its compile that leave instances unable to converge (a name no object
// may have, a value that never comes), one per line after the order: they
// are told at admission, but an RGD applied by a GitOps tool or before
// the webhook was there leaves nobody to read them there.
func (s *ResourceGraphDefinitionStatus) MarkGraphAccepted(generation int64, order []string, deps map[string][]string, warnings []string) {
	s.TopologicalOrder = order
	s.Resources = nil
	for _, id := range order {
		info := ResourceInformation{ID: id}
		for _, d := range deps[id] {
			info.Dependencies = append(info.Dependencies, Dependency{ID: d})
		}
		s.Resources = append(s.Resources, info)
	}
	var msg string
	switch {
	case len(order) == 0:
		msg = "resource graph is valid and has no resources"
	case len(order) > orderShown+1:
		// status.topologicalOrder has every id; a message of hundreds
		// reads badly in kubectl describe.
		msg = fmt.Sprintf("resource graph is valid: %s -> ... and %d more (status.topologicalOrder lists all %d)",
			strings.Join(order[:orderShown], " -> "), len(order)-orderShown, len(order))
	default:
		msg = "resource graph is valid: " + strings.Join(order, " -> ")
	}
	for _, w := range warnings {
		msg += "\nWarning: " + w
	}
	s.manage(generation).MarkTrue(ConditionGraphAccepted, ReasonValid, "%s", msg)
}

// orderShown is how many resource ids GraphAccepted's message names, in
// topological order.
const orderShown = 20

// MarkGraphInvalid records why the RGD was refused; the message is the
// validation error itself.
func (s *ResourceGraphDefinitionStatus) MarkGraphInvalid(generation int64, err error) {
	s.manage(generation).MarkFalse(ConditionGraphAccepted, ReasonInvalidResourceGraph, "%s", err.Error())
	s.State = StateInactive
}

// MarkKindEstablished records that the CRD serves the kind.
func (s *ResourceGraphDefinitionStatus) MarkKindEstablished(generation int64, crdName string) {
	s.manage(generation).MarkTrue(ConditionKindReady, ReasonKindEstablished, "CustomResourceDefinition %s is established", crdName)
}

// MarkKindPending records a CRD applied but not yet established.
func (s *ResourceGraphDefinitionStatus) MarkKindPending(generation int64, crdName string) {
	s.manage(generation).MarkUnknown(ConditionKindReady, ReasonKindPending, "waiting for CustomResourceDefinition %s to be established", crdName)
}

// MarkKindFailed records a CRD that could not be applied.
func (s *ResourceGraphDefinitionStatus) MarkKindFailed(generation int64, reason string, err error) {
	s.manage(generation).MarkFalse(ConditionKindReady, reason, "%s", err.Error())
	s.State = StateInactive
}

// MarkServing records that instances of the kind are reconciled.
func (s *ResourceGraphDefinitionStatus) MarkServing(generation int64, gvk schema.GroupVersionKind) {
	m := s.manage(generation)
	m.MarkTrue(ConditionControllerReady, ReasonServing, "serving instances of %s %s", gvk.GroupVersion(), gvk.Kind)
	s.State = StateInactive
	if m.IsHappy() {
		s.State = StateActive
	}
}

// MarkServingEarlier records instances reconciled with the graph of an
// earlier generation, because this one's kind could not be applied.
func (s *ResourceGraphDefinitionStatus) MarkServingEarlier(generation, served int64, gvk schema.GroupVersionKind) {
	s.manage(generation).MarkTrue(ConditionControllerReady, ReasonServingEarlierGeneration,
		"serving instances of %s %s with the graph of generation %d: generation %d is not applied (see KindReady)", gvk.GroupVersion(), gvk.Kind, served, generation)
	s.State = StateInactive
}

// MarkServingBlind records that instances are reconciled, but a kind their
// graph manages cannot be listed (the agent's role does not grant it, most
// often): nothing of their graphs can be applied until it can. err names
// the kind and why.
func (s *ResourceGraphDefinitionStatus) MarkServingBlind(generation int64, gvk schema.GroupVersionKind, err error) {
	s.manage(generation).MarkFalse(ConditionControllerReady, ReasonKindNotWatched, "serving instances of %s %s, but %v", gvk.GroupVersion(), gvk.Kind, err)
	s.State = StateInactive
}

// MarkNotServing records that instances are not reconciled, and why.
func (s *ResourceGraphDefinitionStatus) MarkNotServing(generation int64, why string) {
	s.manage(generation).MarkUnknown(ConditionControllerReady, ReasonNotServing, "%s", why)
	s.State = StateInactive
}

// ReadyCondition returns the RGD's Ready condition, or nil.
func (s *ResourceGraphDefinitionStatus) ReadyCondition() *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, ConditionReady)
}
