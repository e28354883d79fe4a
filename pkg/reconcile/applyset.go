package reconcile

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// applySetKinds are the kinds the instance's ApplySet annotation lists: those
// the graph manages, and those of the instance's objects the graph no longer
// produces (a resource removed from the RGD), until they are pruned. The
// ApplySet specification asks for a superset of the members' kinds, so that
// a tool pruning by the annotation finds every member. A recorded kind whose
// informer has not listed its objects yet stays listed: they are not known.
func (r *run) applySetKinds() []schema.GroupKind {
	var out []schema.GroupKind
	listed := map[schema.GroupResource]bool{}
	for _, n := range r.s.graph.Nodes {
		if n.Template != nil && n.Kind != nil {
			out = append(out, n.Kind.GVK.GroupKind())
			listed[n.Kind.GVR().GroupResource()] = true
		}
	}
	for _, gvr := range r.recorded {
		if inf, ok := r.t.managed.informer(gvr); ok && !inf.HasSynced() {
			if gvk, err := r.t.mapper.KindFor(gvr); err == nil {
				out = append(out, gvk.GroupKind())
				listed[gvr.GroupResource()] = true
			}
		}
	}
	for _, objs := range r.t.managed.members(r.inst.GetUID()) {
		for _, m := range objs {
			if listed[m.gvr.GroupResource()] {
				continue
			}
			if gvk, err := r.t.mapper.KindFor(m.gvr); err == nil {
				out = append(out, gvk.GroupKind())
				listed[m.gvr.GroupResource()] = true
			}
		}
	}
	return out
}

// recordedKinds are the served kinds the instance's ApplySet annotation
// lists that its graph does not produce: kinds its RGD used before. Their
// informers are started, so that objects of a kind the RGD dropped while
// the agent was not running are still found, pruned, and deleted with the
// instance; the agent watches only its graphs' kinds otherwise. A kind no
// longer served has no objects left, and leaves the annotation.
//
// An instance placed on a workload cluster has its objects there; the
// annotation of its parent in this cluster is not read for them.
func (r *run) recordedKinds() []schema.GroupVersionResource {
	value := r.inst.GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]
	if value == "" || r.placement != nil {
		return nil
	}
	produced := map[schema.GroupKind]bool{}
	for _, n := range r.s.graph.Nodes {
		if n.Template != nil && n.Kind != nil {
			produced[n.Kind.GVK.GroupKind()] = true
		}
	}
	var out []schema.GroupVersionResource
	for _, s := range strings.Split(value, ",") {
		gk := schema.ParseGroupKind(strings.TrimSpace(s))
		if gk.Kind == "" || produced[gk] {
			continue
		}
		mapping, err := r.t.mapper.RESTMapping(gk)
		if err != nil {
			continue
		}
		r.t.managed.watch(mapping.Resource)
		out = append(out, mapping.Resource)
	}
	return out
}

// recordedSynced waits, briefly, for the informers of the recorded kinds, and
// names the first that has not synced.
func (r *run) recordedSynced(ctx context.Context) (schema.GroupVersionResource, bool) {
	for _, gvr := range r.recorded {
		inf, ok := r.t.managed.informer(gvr)
		if ok && !waitForSync(ctx, inf) {
			return gvr, false
		}
	}
	return schema.GroupVersionResource{}, true
}
