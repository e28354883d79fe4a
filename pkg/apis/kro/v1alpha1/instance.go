package v1alpha1

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kro-agent/kro-agent/pkg/conditions"
)

// InstanceState is the coarse state of an instance, in status.state.
type InstanceState string

const (
	// InstanceActive: Ready is True.
	InstanceActive InstanceState = "ACTIVE"
	// InstanceInProgress: working towards the desired state.
	InstanceInProgress InstanceState = "IN_PROGRESS"
	// InstanceFailed: an error retrying cannot fix for this generation.
	InstanceFailed InstanceState = "FAILED"
	// InstanceDeleting: resources are being deleted in reverse order.
	InstanceDeleting InstanceState = "DELETING"
	// InstanceError: an error occurred; the agent is retrying.
	InstanceError InstanceState = "ERROR"
)

// Instance conditions under Ready.
const (
	ConditionInstanceManaged = "InstanceManaged"
	ConditionGraphResolved   = "GraphResolved"
	ConditionResourcesReady  = "ResourcesReady"
	// ConditionPlaced is a dependent of Ready only for instances labelled
	// agent.kro.run/region: a workload cluster of the region was chosen.
	ConditionPlaced = "Placed"
)

// Reasons of instance conditions.
const (
	ReasonManaged      = "Managed"
	ReasonManageFailed = "ManageFailed"
	ReasonReleased     = "Released"
	// ReasonFinalized: kro-agent is done with an instance being deleted
	// and took its finalizer off; another controller's finalizer keeps it.
	ReasonFinalized     = "Finalized"
	ReasonResolved      = "Resolved"
	ReasonResolveFailed = "ResolveFailed"
	// ReasonStatusFailed: the resources are rendered, but a field or
	// condition of the status the RGD declares fails on what it reads.
	ReasonStatusFailed = "StatusProjectionFailed"
	// ReasonStatusTooLarge: the status the RGD declares is computed, but
	// the instance with it is larger than the API server stores.
	ReasonStatusTooLarge    = "StatusTooLarge"
	ReasonGraphNotAccepted  = "GraphNotAccepted"
	ReasonAllResourcesReady = "AllResourcesReady"
	ReasonResourceNotReady  = "ResourceNotReady"
	ReasonResourceDeleting  = "ResourceDeleting"
	ReasonWaitingForInput   = "WaitingForDependency"
	ReasonEvaluationFailed  = "EvaluationFailed"
	ReasonFieldUnset        = "InstanceFieldUnset"
	ReasonApplyFailed       = "ApplyFailed"
	ReasonSuspended         = "Suspended"
	ReasonDeleting          = "Deleting"
	ReasonPlaced            = "Placed"
	ReasonStaysPlaced       = "StaysPlaced"
	ReasonStaysLocal        = "StaysLocal"
	ReasonNoClusterInRegion = "NoClusterInRegion"
	ReasonWaitingForPlace   = "WaitingForPlacement"
	ReasonClusterNotReady   = "ClusterNotReady"
)

// InstanceConditions is the built-in condition set of every instance; an
// RGD's custom conditions that count toward Ready are added per kind.
var InstanceConditions = conditions.NewSet(ConditionReady, ConditionInstanceManaged, ConditionGraphResolved, ConditionResourcesReady)

// +kubebuilder:object:generate=false

// InstanceStatus is the part of an instance's status the agent owns: state
// and conditions. Projected fields live beside it in the unstructured status.
type InstanceStatus struct {
	State      InstanceState      `json:"state,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	manager *conditions.Manager
}

// DecodeInstanceStatus reads state and conditions from an instance's
// unstructured status, as the agent reads them. What does not decode (a
// hand-edited status) is treated as absent.
func DecodeInstanceStatus(raw map[string]any) *InstanceStatus {
	var wire struct {
		State      InstanceState      `json:"state"`
		Conditions []metav1.Condition `json:"conditions"`
	}
	if raw != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &wire)
	}
	return &InstanceStatus{State: wire.State, Conditions: wire.Conditions}
}

// Manage binds the status to its condition set (built-in plus the RGD's
// custom dependents) at the instance's generation. Call it once before the
// Mark helpers.
func (s *InstanceStatus) Manage(set conditions.Set, generation int64) {
	s.manager = set.Manage(&s.Conditions, generation)
	s.manager.InitializeConditions()
}

// MarkManaged records the finalizer and ownership labels in place.
func (s *InstanceStatus) MarkManaged() {
	s.manager.MarkTrue(ConditionInstanceManaged, ReasonManaged, "instance is properly managed with finalizers and labels")
}

// MarkManageFailed records why the instance could not be taken over.
func (s *InstanceStatus) MarkManageFailed(err error) {
	s.manager.MarkFalse(ConditionInstanceManaged, ReasonManageFailed, "%v", err)
}

// MarkReleased records that the agent no longer manages the instance: its
// RGD was deleted. What the other conditions said was observed by an agent
// that no longer looks, so each becomes Unknown and says why, rather than
// go on saying True of resources nobody follows. Placed stays: the
// resources stay where they were placed.
func (s *InstanceStatus) MarkReleased(rgdName string) {
	s.manager.MarkFalse(ConditionInstanceManaged, ReasonReleased,
		"ResourceGraphDefinition %s was deleted: kro-agent no longer manages this instance and its resources were left in place; an RGD created again for the kind takes it back", rgdName)
	s.manager.MarkUnknown(ConditionGraphResolved, ReasonReleased,
		"ResourceGraphDefinition %s was deleted: there is no graph to resolve this instance against", rgdName)
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonReleased,
		"ResourceGraphDefinition %s was deleted: kro-agent no longer follows this instance's resources, which were left in place, so whether they are ready is not known", rgdName)
	for _, c := range slices.Clone(s.Conditions) {
		switch c.Type {
		case ConditionReady, ConditionInstanceManaged, ConditionGraphResolved, ConditionResourcesReady, ConditionPlaced:
			continue
		}
		// A condition the RGD declared or computed.
		s.manager.MarkUnknown(c.Type, ReasonReleased,
			"ResourceGraphDefinition %s was deleted: kro-agent no longer evaluates this condition", rgdName)
	}
}

// MarkGraphResolved records that every resource rendered.
func (s *InstanceStatus) MarkGraphResolved() {
	s.manager.MarkTrue(ConditionGraphResolved, ReasonResolved, "runtime graph created and all resources resolved")
}

// MarkGraphPending records resources not rendered yet because their inputs
// are not ready; not an error.
func (s *InstanceStatus) MarkGraphPending(msg string) {
	s.manager.MarkUnknown(ConditionGraphResolved, ReasonWaitingForInput, "%s", msg)
}

// MarkInstanceFieldUnset records resources not rendered because an
// expression reads a field the instance does not set. It stays Unknown, as
// any input not there yet (and as kro reports it): setting the field
// resolves it.
func (s *InstanceStatus) MarkInstanceFieldUnset(msg string) {
	s.manager.MarkUnknown(ConditionGraphResolved, ReasonFieldUnset, "%s", msg)
}

// MarkGraphUnresolved records an instance whose resources cannot be
// rendered as its spec stands (an expression fails on its values).
func (s *InstanceStatus) MarkGraphUnresolved(err error) {
	s.manager.MarkFalse(ConditionGraphResolved, ReasonResolveFailed, "%v", err)
}

// MarkStatusUnprojected records an instance whose resources rendered but
// whose status, as its RGD declares it, cannot be computed from them: an
// expression fails on the values it reads. The graph is as unresolved as
// with a template failing on them, and the instance as FAILED; the reason
// tells the two apart, as what to change differs.
func (s *InstanceStatus) MarkStatusUnprojected(err error) {
	s.manager.MarkFalse(ConditionGraphResolved, ReasonStatusFailed, "projecting status: %v", err)
}

// KeepTransitionTimes keeps the transition times of the conditions as
// written whose status is the same again (conditions.Manager).
func (s *InstanceStatus) KeepTransitionTimes(written []metav1.Condition) {
	s.manager.KeepTransitionTimes(written)
}

// MarkStatusTooLarge records an instance whose status, as its RGD declares
// it, is computed but too large for the API server to store with the
// instance, and so is written without its fields: FAILED as for a status
// that cannot be computed, with its own reason, as what to change differs
// again (what the fields project, not what fails).
func (s *InstanceStatus) MarkStatusTooLarge(err error) {
	s.manager.MarkFalse(ConditionGraphResolved, ReasonStatusTooLarge, "%v", err)
}

// ResourceError is the error of one resource of an instance's graph, as
// its conditions report it: "resource ID: what failed". kubectl kro reads
// the resource back from the message (ResourceNamed). An error, not an
// API type: no deepcopy.
//
// +kubebuilder:object:generate=false
type ResourceError struct {
	ID  string
	Err error
}

func (e *ResourceError) Error() string { return "resource " + e.ID + ": " + e.Err.Error() }

func (e *ResourceError) Unwrap() error { return e.Err }

// EventStatusWriteFailed is the reason of the Warning Event that tells an
// instance's status write the API server refused: the status itself
// cannot say it.
const EventStatusWriteFailed = "StatusWriteFailed"

// InstanceTooLargeForStatus begins the note of a StatusWriteFailed Event
// refused because the instance itself leaves no room for a status:
// what kubectl kro recognises it by, to say what to do instead of a grant.
const InstanceTooLargeForStatus = "writing status: the instance is larger than the API server stores with its status"

// deleteRefused is how an instance's Deleting condition tells an object
// the API server refused to delete.
const deleteRefused = " cannot be deleted: "

// DeleteRefused words, for an instance's Deleting condition, the API
// server's refusal (why) to delete one of its objects.
func DeleteRefused(kind, name string, why error) string {
	return kind + " " + name + deleteRefused + why.Error()
}

// QuotesDeleteRefused tells whether message, an instance's Deleting
// condition, tells a refused delete (DeleteRefused).
func QuotesDeleteRefused(message string) bool {
	return strings.Contains(message, deleteRefused)
}

// orphaning leads an instance's Deleting condition while the deletion,
// asked with propagationPolicy Orphan, leaves its resources in place.
const orphaning = "leaving the resources in place, as the deletion asked (propagationPolicy Orphan)"

// Orphaning words, for an instance's Deleting condition, the resources
// that could not yet be left in place (failures), where.
func Orphaning(where, failures string) string {
	return orphaning + where + ": " + failures
}

// QuotesOrphaning tells whether message, an instance's Deleting
// condition, tells resources that could not yet be left in place.
func QuotesOrphaning(message string) bool {
	return strings.HasPrefix(message, orphaning)
}

// ResourceNamed returns the resource a condition message made of a
// ResourceError names.
func ResourceNamed(message string) (string, bool) {
	rest, ok := strings.CutPrefix(message, "resource ")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ": ")
	return id, ok && id != ""
}

// MarkHeld records that the instance's RGD has no graph the agent can
// serve: nothing is applied, repaired, pruned or deleted for the instance
// until it has one again. heldFor is the RGD's condition that says why:
// GraphAccepted, False for a graph that is invalid, or KindReady, False
// for a change of the kind refused as breaking while the graph the
// instance was made with is not known (the agent started since).
func (s *InstanceStatus) MarkHeld(rgdName, heldFor string, deleting bool) {
	msg := "ResourceGraphDefinition %s is not accepted (its GraphAccepted condition says why): kro-agent applies, repairs and prunes nothing for this instance until it is, and leaves its resources as they are"
	if heldFor == ConditionKindReady {
		msg = "ResourceGraphDefinition %s has a change kro-agent does not apply (its KindReady condition says why), and the graph this instance was made with is not known since kro-agent started: kro-agent applies, repairs and prunes nothing for this instance until the change is applied or undone, and leaves its resources as they are"
	}
	if deleting {
		msg += "; the deletion waits until then, or until the ResourceGraphDefinition is deleted (which leaves the resources in place)"
	}
	s.manager.MarkFalse(ConditionGraphResolved, ReasonGraphNotAccepted, msg, rgdName)
}

// MarkResourcesReady records every resource created and ready.
func (s *InstanceStatus) MarkResourcesReady() {
	s.manager.MarkTrue(ConditionResourcesReady, ReasonAllResourcesReady, "all resources are created and ready")
}

// MarkResourceNotReady records the resource that readiness waits on.
func (s *InstanceStatus) MarkResourceNotReady(msg string) {
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonResourceNotReady, "%s", msg)
}

// MarkResourceDeleting records a managed object someone else is deleting:
// it is created again once it is gone, and what depends on it waits.
func (s *InstanceStatus) MarkResourceDeleting(msg string) {
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonResourceDeleting, "%s", msg)
}

// MarkApplyFailed records a write the API server refused.
func (s *InstanceStatus) MarkApplyFailed(msg string) {
	s.manager.MarkFalse(ConditionResourcesReady, ReasonApplyFailed, "%s", msg)
}

// MarkKindNotWatched records that a kind of the graph cannot be listed, so
// the instance's objects of that kind cannot be seen and nothing is
// applied; msg names the kind and why.
func (s *InstanceStatus) MarkKindNotWatched(msg string) {
	s.manager.MarkFalse(ConditionResourcesReady, ReasonKindNotWatched, "%s", msg)
}

// MarkSuspended records that reconciliation is suspended by annotation.
func (s *InstanceStatus) MarkSuspended() {
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonSuspended,
		"reconciliation is suspended by the annotation %s=%s; remove it to resume", AnnotationReconcile, ReconcileSuspended)
}

// MarkFinalized records that kro-agent is done with an instance being
// deleted and lets it go (done says what became of its resources), while
// the finalizers others name keep it.
func (s *InstanceStatus) MarkFinalized(done string, others []string) {
	s.manager.MarkFalse(ConditionInstanceManaged, ReasonFinalized,
		"kro-agent has let the instance go: it took its finalizer off, and the finalizers %s, which are not kro-agent's, keep the instance", strings.Join(others, ", "))
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonDeleting, "%s; kro-agent has let the instance go, and it waits for the finalizers %s, which are not kro-agent's", done, strings.Join(others, ", "))
}

// MarkDeleting records the deletion in progress.
func (s *InstanceStatus) MarkDeleting(msg string) {
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonDeleting, "%s", msg)
}

// MarkPlaced records the workload cluster the instance's resources live in.
func (s *InstanceStatus) MarkPlaced(cluster, region string) {
	s.manager.MarkTrue(ConditionPlaced, ReasonPlaced, "placed on cluster %s in region %s", cluster, region)
}

// MarkStaysPlaced records the workload cluster of an instance whose region
// label no longer names its region: why says it stays there.
func (s *InstanceStatus) MarkStaysPlaced(cluster, region, why string) {
	s.manager.MarkTrue(ConditionPlaced, ReasonStaysPlaced, "placed on cluster %s in region %s; %s", cluster, region, why)
}

// MarkStaysLocal records that an instance reconciled in the local cluster
// stays there although it is now labelled with a region: why says so.
func (s *InstanceStatus) MarkStaysLocal(why string) {
	s.manager.MarkTrue(ConditionPlaced, ReasonStaysLocal, "%s", why)
}

// ReconciledLocally reports, of an instance's status as it was read (before
// Manage), whether kro-agent reconciled the instance in the local cluster:
// it wrote a state, took the instance in hand (InstanceManaged is not
// still Unknown, as it is for an instance suspended or held by an invalid
// RGD since its creation, which nothing was created for), and wrote no
// Placed condition but the one saying the instance stays local. placed is
// whether status.placement holds anything. Such an instance is not moved by
// a region label given to it later, as a placed one is not moved by a
// changed label: its resources are where it is.
func (s *InstanceStatus) ReconciledLocally(placed bool) bool {
	if placed || s.State == "" {
		return false
	}
	if m := meta.FindStatusCondition(s.Conditions, ConditionInstanceManaged); m != nil && m.Status == metav1.ConditionUnknown {
		return false
	}
	c := meta.FindStatusCondition(s.Conditions, ConditionPlaced)
	return c == nil || c.Reason == ReasonStaysLocal
}

// MarkNotPlaced records that no cluster of the region can take the
// instance; nothing is created until one can.
func (s *InstanceStatus) MarkNotPlaced(msg string) {
	s.manager.MarkFalse(ConditionPlaced, ReasonNoClusterInRegion, "%s", msg)
	s.manager.MarkUnknown(ConditionResourcesReady, ReasonWaitingForPlace, "resources are created once the instance is placed on a cluster")
}

// MarkClusterNotReady records that the cluster the instance is placed on
// cannot be reached; its resources there are left as they are.
func (s *InstanceStatus) MarkClusterNotReady(msg string) {
	s.manager.MarkFalse(ConditionResourcesReady, ReasonClusterNotReady, "%s", msg)
}

// PropagateCustomCondition writes an RGD-declared condition as its
// expression evaluated, with the reason the RGD gives it.
func (s *InstanceStatus) PropagateCustomCondition(condType string, status bool, reason, message string) {
	if status {
		s.manager.MarkTrue(condType, reason, "%s", message)
	} else {
		s.manager.MarkFalse(condType, reason, "%s", message)
	}
}

// MarkCustomConditionUnknown records that an RGD-declared condition's
// expression could not be evaluated: waiting when an input it reads is not
// there yet, else because it failed, as message says. The RGD's reason
// names what the expression found, so it is not given to a condition
// whose expression found nothing.
func (s *InstanceStatus) MarkCustomConditionUnknown(condType string, waiting bool, message string) {
	reason := ReasonEvaluationFailed
	if waiting {
		reason = ReasonWaitingForInput
	}
	s.manager.MarkUnknown(condType, reason, "%s", message)
}

// PropagateComputedConditions writes the conditions an RGD computes with
// runtime.newCondition, as computed. When complete (every expression gave
// its conditions), every other condition that is neither in the instance's
// condition set nor of a type declared reports is removed: a type no longer
// computed goes away, as does one the RGD no longer declares. When not,
// they stay as they were until their expressions can be evaluated again.
func (s *InstanceStatus) PropagateComputedConditions(computed []metav1.Condition, complete bool, declared func(condType string) bool) {
	for _, c := range computed {
		switch c.Status {
		case metav1.ConditionTrue:
			s.manager.MarkTrue(c.Type, c.Reason, "%s", c.Message)
		case metav1.ConditionFalse:
			s.manager.MarkFalse(c.Type, c.Reason, "%s", c.Message)
		default:
			s.manager.MarkUnknown(c.Type, c.Reason, "%s", c.Message)
		}
	}
	if !complete {
		return
	}
	s.manager.Retain(func(t string) bool {
		return declared(t) || slices.ContainsFunc(computed, func(c metav1.Condition) bool { return c.Type == t })
	})
}

// ComputeState derives status.state from the conditions.
func (s *InstanceStatus) ComputeState(deleting, retrying bool) {
	switch {
	case deleting:
		s.State = InstanceDeleting
	case s.manager.IsHappy():
		s.State = InstanceActive
	case isFalse(s.Conditions, ConditionGraphResolved) || isFalse(s.Conditions, ConditionInstanceManaged):
		s.State = InstanceFailed
	case retrying || isFalse(s.Conditions, ConditionResourcesReady):
		s.State = InstanceError
	default:
		s.State = InstanceInProgress
	}
}

func isFalse(conds []metav1.Condition, t string) bool {
	return meta.IsStatusConditionFalse(conds, t)
}
