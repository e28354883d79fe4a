package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// kindDeletionPoll is how often an RGD whose CRD is being deleted, with
// its instances, is looked at besides the CRD's own events.
const kindDeletionPoll = 5 * time.Second

// keepForDeletion puts the agent's finalizer on an RGD, when the agent
// deletes the CRDs of deleted RGDs (AllowCRDDeletion): the RGD's graph is
// what deletes each instance's resources in order while the CRD goes, and
// an agent restarted meanwhile must still find it.
func (r *RGDReconciler) keepForDeletion(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) error {
	if slices.Contains(rgd.Finalizers, v1alpha1.Finalizer) {
		return nil
	}
	err := r.Client.Patch(ctx, rgd, client.RawPatch(types.MergePatchType, finalizerAddition(rgd)), client.FieldOwner(ownership.FieldManager))
	countWrite("finalizer", err)
	if err != nil {
		return fmt.Errorf("adding finalizer %s: %w", v1alpha1.Finalizer, err)
	}
	return nil
}

// letGo takes the agent's finalizer off a deleted RGD, if it has it.
func (r *RGDReconciler) letGo(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) error {
	if !slices.Contains(rgd.Finalizers, v1alpha1.Finalizer) {
		return nil
	}
	err := r.Client.Patch(ctx, rgd, client.RawPatch(types.MergePatchType, finalizerRemoval(rgd)), client.FieldOwner(ownership.FieldManager))
	countWrite("finalizer", err)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s: %w", v1alpha1.Finalizer, err)
	}
	return nil
}

// deleteKind deletes the CRD of a deleted RGD, and with it every instance
// (AllowCRDDeletion): the API server deletes the instances before the CRD,
// and the agent, still serving the kind with the RGD's graph, deletes
// each one's resources in reverse topological order before letting it
// go. Once the CRD is gone, the RGD goes too. An RGD whose graph does not
// compile cannot have its instances' resources deleted in order: they
// are released and their resources left in place, as without the flag,
// and the CRD deleted.
func (r *RGDReconciler) deleteKind(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) (ctrl.Result, error) {
	crds, err := r.ownedCRDs(ctx, rgd.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(crds) == 0 {
		r.forget(rgd.Name)
		return ctrl.Result{}, r.letGo(ctx, rgd)
	}
	if _, serving := r.Engine.ServedGeneration(rgd.Name); !serving {
		g, _, err := r.compile(ctx, rgd, nil)
		var invalid *graph.Error
		switch {
		case errors.As(err, &invalid):
			r.Engine.Stop(rgd.Name)
			if err := r.releaseInstances(ctx, rgd.Name); err != nil {
				return ctrl.Result{}, err
			}
			r.event(rgd, "Warning", "InstancesReleased", "Delete", "the graph is invalid, so its instances' resources cannot be deleted in order: the instances were released and their resources left in place: %v", err)
		case err != nil:
			return ctrl.Result{}, err // not known to be invalid: tried again
		default:
			if err := r.Engine.Serve(rgd, g); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	for i := range crds {
		if err := r.deleteCRD(ctx, rgd, &crds[i]); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The CRD's events bring the RGD back; the poll is for a deletion
	// that ends without one seen.
	return ctrl.Result{RequeueAfter: kindDeletionPoll}, nil
}

// deleteCRD deletes one of a deleted RGD's CRDs, unless it is going
// already; the UID precondition keeps a CRD created since (by the RGD
// created again) from being deleted.
func (r *RGDReconciler) deleteCRD(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, crd *extv1.CustomResourceDefinition) error {
	if crd.DeletionTimestamp != nil {
		return nil
	}
	err := r.Client.Delete(ctx, crd, client.Preconditions{UID: &crd.UID})
	countWrite("delete", err)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil
	case err != nil:
		err = fmt.Errorf("deleting CustomResourceDefinition %s of the deleted ResourceGraphDefinition %s: %w", crd.Name, rgd.Name, err)
		// kubectl describe shows why the RGD's deletion waits (its role
		// lacking delete on CRDs, say).
		r.event(rgd, "Warning", "DeletingKindFailed", "Delete", "%v", err)
		return err
	}
	ctrl.LoggerFrom(ctx).Info("deleting the CRD of a deleted ResourceGraphDefinition, with every instance", "rgd", rgd.Name, "crd", crd.Name)
	r.event(rgd, "Normal", "DeletingKind", "Delete", "deleting CustomResourceDefinition %s and every %s with it (--allow-crd-deletion); each instance's resources are deleted in reverse order first", crd.Name, crd.Spec.Names.Kind)
	return nil
}

// forget drops what the agent keeps for an RGD that is gone.
func (r *RGDReconciler) forget(rgdName string) {
	r.Engine.Stop(rgdName)
	r.mu.Lock()
	delete(r.compiled, rgdName)
	delete(r.rechecked, rgdName)
	delete(r.waiting, rgdName)
	r.mu.Unlock()
	r.schemas.forget(rgdName)
	r.spells.Forget(rgdName)
}

// event records an Event on the RGD, when a recorder is set; action is
// what the agent was doing (Reconcile, Delete).
func (r *RGDReconciler) event(rgd *v1alpha1.ResourceGraphDefinition, eventType, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(rgd, nil, eventType, reason, action, note, args...)
	}
}
