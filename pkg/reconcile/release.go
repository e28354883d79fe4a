package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// releaseInstances releases every instance of the kinds a deleted RGD
// served: their status says that nothing manages them any more, and the
// agent's finalizer comes off, or it would hold a deletion forever (and with
// it a deletion of their CRD). Their resources are left in place, as the
// RGD's deletion leaves everything; an RGD created again for the kind
// adopts the instances, and their finalizer, back.
//
// It runs whenever the RGD is found deleted, which includes every start of
// the agent for every CRD it generated whose RGD is gone, so an RGD deleted
// while the agent was down is seen to as well. Instances already released
// cost their share of one metadata list, no write.
func (r *RGDReconciler) releaseInstances(ctx context.Context, rgdName string) error {
	crds, err := r.ownedCRDs(ctx, rgdName)
	if err != nil {
		return err
	}
	var errs []error
	for i := range crds {
		gvk, ok := graph.ServedKind(&crds[i])
		if !ok || r.Engine.Serves(gvk) {
			// Another RGD has taken the kind over: its instances are
			// reconciled, finalizer included.
			continue
		}
		if err := r.releaseKind(ctx, rgdName, gvk); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *RGDReconciler) releaseKind(ctx context.Context, rgdName string, gvk schema.GroupVersionKind) error {
	// Metadata alone tells which instances still need releasing; only
	// those are read whole. Both reads go to the API server: the cached
	// client would start informers for a kind the agent has just stopped
	// watching.
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.APIReader.List(ctx, list); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the CRD is going away with its instances
		}
		return fmt.Errorf("listing the %s instances of the deleted ResourceGraphDefinition %s: %w", gvk.Kind, rgdName, err)
	}
	var errs []error
	for i := range list.Items {
		if !slices.Contains(list.Items[i].Finalizers, v1alpha1.Finalizer) {
			continue
		}
		key := client.ObjectKeyFromObject(&list.Items[i])
		inst := &unstructured.Unstructured{}
		inst.SetGroupVersionKind(gvk)
		err := r.APIReader.Get(ctx, key, inst)
		if err == nil {
			err = r.release(ctx, rgdName, inst)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing %s %s of the deleted ResourceGraphDefinition %s: %w", gvk.Kind, key, rgdName, err))
		}
	}
	return errors.Join(errs...)
}

// release says so in the instance's status, unless it is being deleted, then
// takes the finalizer off. Both writes are conditional on the instance read:
// a concurrent change (the RGD created again and reconciling) wins, and the
// release is retried against the new state. The status goes first so that
// a failure between the two leaves the finalizer, and a retry.
func (r *RGDReconciler) release(ctx context.Context, rgdName string, inst *unstructured.Unstructured) error {
	if !slices.Contains(inst.GetFinalizers(), v1alpha1.Finalizer) {
		return nil // released since it was listed
	}
	if inst.GetDeletionTimestamp() == nil {
		raw, _ := inst.Object["status"].(map[string]any)
		st := v1alpha1.DecodeInstanceStatus(raw)
		st.Manage(v1alpha1.InstanceConditions, inst.GetGeneration())
		st.MarkReleased(rgdName)
		st.ComputeState(false, false)
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": inst.GetResourceVersion()},
			"status":   map[string]any{"state": st.State, "conditions": st.Conditions},
		})
		if err != nil {
			return err
		}
		err = r.Client.Status().Patch(ctx, inst, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(ownership.FieldManager))
		countWrite("status", err)
		if err != nil {
			return fmt.Errorf("writing its status: %w", err)
		}
	}
	err := r.Client.Patch(ctx, inst, client.RawPatch(types.MergePatchType, finalizerRemoval(inst)), client.FieldOwner(ownership.FieldManager))
	countWrite("finalizer", err)
	if err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("released an instance of a deleted ResourceGraphDefinition; its resources are left in place",
		"rgd", rgdName, "kind", inst.GetKind(), "instance", client.ObjectKeyFromObject(inst))
	if r.Recorder != nil {
		r.Recorder.Eventf(inst, nil, "Normal", v1alpha1.ReasonReleased, "Release",
			"ResourceGraphDefinition %s was deleted: kro-agent no longer manages this %s and took its finalizer off; its resources are left in place", rgdName, inst.GetKind())
	}
	return nil
}
