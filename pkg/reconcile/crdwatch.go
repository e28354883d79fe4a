package reconcile

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// crdEvents hands the CRD watch's events to the RGD reconciler, which says
// which RGDs they concern, while the controller runs (on the leader).
func (r *RGDReconciler) crdEvents() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		return r.CRDs.Notify(func(crd string, change kinds.CRDChange) {
			var rgds []string
			switch change {
			case kinds.CRDInstalled:
				rgds = r.kindsInstalled(crd)
			case kinds.CRDChanged:
				// A version added may serve what an RGD waits for.
				rgds = append(r.kindsInstalled(crd), r.schemas.crdChanged(schema.ParseGroupResource(crd), time.Now())...)
			default:
				rgds = r.kindsRemoved(crd)
			}
			for _, name := range rgds {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
			if change == kinds.CRDDeleted {
				// Its objects went with it: their informers would only
				// retry a watch the API server refuses until it is back.
				r.Engine.kindGone(schema.ParseGroupResource(crd))
			}
		})
	})
}

// crdGroup is the API group of the CRD named name (plural.group).
func crdGroup(name string) string { return schema.ParseGroupResource(name).Group }

// waitingKinds resolves kinds as next does, recording what the RGD being
// compiled waits for: the groups of the kinds it could not resolve, and
// whether one of them is served but its schema not published yet.
type waitingKinds struct {
	next         kinds.Resolver
	missing      sets.Set[string]
	notPublished bool
	// resolved are the kinds that did resolve, as they did.
	resolved map[schema.GroupVersionKind]*kinds.Info
}

// Resolve implements kinds.Resolver.
func (k *waitingKinds) Resolve(gvk schema.GroupVersionKind) (*kinds.Info, error) {
	info, err := k.next.Resolve(gvk)
	if err != nil {
		k.missing.Insert(gvk.Group)
		k.notPublished = k.notPublished || kinds.NotPublished(err)
		return info, err
	}
	if k.resolved == nil {
		k.resolved = map[schema.GroupVersionKind]*kinds.Info{}
	}
	k.resolved[gvk] = info
	return info, nil
}
