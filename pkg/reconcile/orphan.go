package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// A deletion with propagationPolicy Orphan (kubectl delete --cascade=orphan)
// asks for an object's dependents to be left in place. The API server says
// so by the finalizer "orphan", which the garbage collector takes off as
// soon as it has freed the dependents it knows of (by ownerReferences;
// an instance's resources have none). So the agent may find the finalizer
// gone by the time it reconciles the deletion: it remembers each instance
// seen being deleted with it.

// orphanRequests remembers the instances seen being deleted with
// propagationPolicy Orphan.
type orphanRequests struct {
	mu sync.Mutex
	m  map[types.UID]bool
}

// seen records obj, an instance from the informer, if it is being deleted
// with the finalizer "orphan". Only objects being deleted are decoded.
func (o *orphanRequests) seen(obj any) {
	h, ok := obj.(*heldObject)
	if !ok || h.meta.DeletionTimestamp == nil {
		return
	}
	if u, err := h.object(); err != nil || !slices.Contains(u.GetFinalizers(), metav1.FinalizerOrphanDependents) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[types.UID]bool{}
	}
	o.m[h.meta.UID] = true
}

// asked tells whether inst, being deleted, is to leave its resources in
// place: it carries the finalizer "orphan", or did when it was seen.
func (o *orphanRequests) asked(inst metav1.Object) bool {
	if slices.Contains(inst.GetFinalizers(), metav1.FinalizerOrphanDependents) {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[inst.GetUID()]
}

func (o *orphanRequests) forget(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, uid)
}

// orphan leaves the instance's resources in place, as its deletion asked:
// each is freed of the labels that made it the instance's, as the garbage
// collector frees an orphan of its ownerReferences, so that it is an object
// like any other (its own to edit, and never pruned), but for the
// annotation that hands it to the next instance of the name, which adopts
// what its graph renders of them rather than refusing them as another's.
// The finalizer goes once every one is.
func (r *run) orphan(ctx context.Context, status *v1alpha1.InstanceStatus, members map[string][]member) (result, error) {
	var all []member
	for _, objs := range members {
		all = append(all, objs...)
	}
	slices.SortFunc(all, func(a, b member) int {
		return strings.Compare(r.t.kindOf(a.gvr)+" "+a.objectName(), r.t.kindOf(b.gvr)+" "+b.objectName())
	})
	errs := r.t.writeEach(ctx, all, func(ctx context.Context, ref objectRef, uid types.UID) error {
		return r.t.releaseObject(ctx, ref, uid, r.id)
	})
	var released, failures []string
	var refused []error
	for i, m := range all {
		what := r.t.kindOf(m.gvr) + " " + m.objectName()
		if err := errs[i]; err != nil {
			failures = append(failures, fmt.Sprintf("%s cannot be released: %v", what, err))
			refused = append(refused, fmt.Errorf("releasing %s: %w", what, err))
			continue
		}
		released = append(released, what)
	}
	if len(failures) > 0 {
		status.MarkDeleting(v1alpha1.Orphaning(r.inCluster(), strings.Join(failures, "; ")))
		status.ComputeState(true, false)
		return result{}, errors.Join(append(refused, r.writeStatus(ctx, status, nil))...)
	}
	if len(released) > 0 {
		note := fmt.Sprintf("left %d resources in %s in place, as the deletion asked (propagationPolicy Orphan), without kro-agent's labels and handed to the next instance of this name (%s=%s): %s",
			len(released), r.t, v1alpha1.AnnotationAdoptBy, ownership.AdoptByValue(r.id), joinMax(released, 5))
		r.tell("Normal", "Orphaned", note, note, nil)
	}
	return result{}, r.finishDeletion(ctx, status, "its resources"+r.inCluster()+" are left in place, as the deletion asked")
}

// releaseObject takes kro-agent's labels off one object of inst, only if
// it is still the one we saw, and hands it to the next instance of inst's
// name (ownership.ReleasePatch).
func (t *target) releaseObject(ctx context.Context, ref objectRef, uid types.UID, inst ownership.Instance) error {
	_, err := t.client.Resource(ref.GVR).Namespace(ref.Namespace).Patch(ctx, ref.Name, types.MergePatchType, ownership.ReleasePatch(string(uid), inst), patchOptions)
	countWrite("release", err)
	if apierrors.IsNotFound(err) || replacedSince(err) {
		return nil // gone, or another object of the name: nothing of ours to release
	}
	if unauthorized, ok := asUnauthorized(err, ref.GVR.GroupResource(), t); ok {
		return unauthorized
	}
	return err
}

// replacedSince tells the API server's refusal of a patch naming another
// UID than the object's: the object was deleted and made again since.
func replacedSince(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool { return c.Field == "metadata.uid" })
}
