package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// applySetKinds are the kinds the instance's ApplySet annotation lists: those
// the graph manages, and those of the instance's objects the graph no longer
// produces (a resource removed from the RGD), until they are pruned. The
// ApplySet specification asks for a superset of the members' kinds, so that
// a tool pruning by the annotation finds every member. A recorded kind whose
// informer has not listed its objects yet stays listed: they are not known;
// so does every kind listed while the objects cannot be looked at.
func (r *run) applySetKinds() []schema.GroupKind {
	var out []schema.GroupKind
	if r.membersUnseen {
		out = append(out, ownership.RecordedKinds(r.inst)...)
	}
	listed := map[schema.GroupResource]bool{}
	for _, n := range r.s.graph.Nodes {
		if n.IsManaged() {
			out = append(out, n.Kind.GVK.GroupKind())
			listed[n.Kind.GVR().GroupResource()] = true
		}
	}
	for _, u := range r.unmapped {
		out = append(out, u.kind)
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
// longer served, or whose CRD was seen deleted (a cached mapping may still
// list it), has no objects left, and leaves the annotation.
//
// A kind whose mapping cannot be had for now (the cluster's discovery
// failed, where a kind it no longer serves is a mapping that does not
// match) is unmapped: it stays listed, its objects are not known, and the
// instance is not let go until they are (recordedKnown).
//
// The kinds are looked for in the run's cluster: for an instance placed on
// a workload cluster, that one (lookWherePlaced), or none while it cannot
// be reached.
func (r *run) recordedKinds() []schema.GroupVersionResource {
	if r.membersUnseen {
		return nil
	}
	produced := map[schema.GroupKind]bool{}
	for _, n := range r.s.graph.Nodes {
		if n.IsManaged() {
			produced[n.Kind.GVK.GroupKind()] = true
		}
	}
	var out []schema.GroupVersionResource
	for _, gk := range ownership.RecordedKinds(r.inst) {
		if produced[gk] {
			continue
		}
		mapping, err := r.t.mapper.RESTMapping(gk)
		if err != nil && !meta.IsNoMatchError(err) {
			r.unmapped = append(r.unmapped, unmappedKind{kind: gk, err: err})
			continue
		}
		if err != nil || r.t.crdGone(mapping.Resource.GroupResource()) {
			continue
		}
		r.t.managed.watch(mapping.Resource)
		out = append(out, mapping.Resource)
	}
	return out
}

// unmappedKind is a kind the ApplySet annotation lists whose mapping
// failed, and why.
type unmappedKind struct {
	kind schema.GroupKind
	err  error
}

// recordedSynced waits, briefly, for the informers of the recorded kinds to
// list them, and says why the first that has not could not.
func (r *run) recordedSynced(ctx context.Context) error {
	for _, gvr := range r.recorded {
		if err := r.listed(ctx, gvr); err != nil {
			return fmt.Errorf("the instance's ApplySet annotation lists %s, a kind the graph no longer uses: %w", gvr.GroupResource(), err)
		}
	}
	return nil
}

// recordedKnown tells, once the recorded kinds' informers have had a moment
// to list them, whether the objects of every kind the annotation lists are
// known; if not, why: letting the instance go, or dropping the kind from
// the annotation, could then leave objects behind.
func (r *run) recordedKnown(ctx context.Context) error {
	if len(r.unmapped) > 0 {
		u := r.unmapped[0]
		return fmt.Errorf("looking up the instance's %s (a kind its ApplySet annotation lists that the graph no longer uses) in %s failed: %w", u.kind, r.t, u.err)
	}
	return r.recordedSynced(ctx)
}

// recordNamespace adds ns to the instance's ApplySet additional-namespaces
// annotation before anything is created there, as the ApplySet
// specification asks, so that every member can always be found.
func (r *run) recordNamespace(ctx context.Context, ns string) error {
	if ns == "" || ns == r.inst.GetNamespace() || slices.Contains(ownership.RecordedNamespaces(r.inst), ns) {
		return nil
	}
	if err := r.writeNamespaces(ctx, append(ownership.RecordedNamespaces(r.inst), ns)); err != nil {
		return fmt.Errorf("recording namespace %s in the ApplySet annotations: %w", ns, err)
	}
	return nil
}

// settleNamespaces shrinks the additional-namespaces annotation, after a
// prune, to the namespaces that still hold objects of the instance: those
// the graph produces now, and those of pruned objects not gone yet (their
// deletion brings the instance back, to shrink it further).
func (r *run) settleNamespaces(ctx context.Context) error {
	existing := ownership.RecordedNamespaces(r.inst)
	if len(existing) == 0 {
		return nil
	}
	holding := map[string]bool{}
	for ref := range r.desired {
		holding[ref.Namespace] = true
	}
	for _, objs := range r.t.managed.members(r.inst.GetUID()) {
		for _, m := range objs {
			holding[m.namespace] = true
		}
	}
	kept := slices.DeleteFunc(slices.Clone(existing), func(ns string) bool { return !holding[ns] })
	if len(kept) == len(existing) {
		return nil
	}
	if err := r.writeNamespaces(ctx, kept); err != nil {
		return fmt.Errorf("removing namespaces that no longer hold its objects from the ApplySet annotations: %w", err)
	}
	return nil
}

// writeNamespaces sets the instance's additional-namespaces annotation,
// conditional on the version of the instance it was computed from.
func (r *run) writeNamespaces(ctx context.Context, namespaces []string) error {
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": r.inst.GetResourceVersion(),
		"annotations":     map[string]string{v1alpha1.AnnotationApplySetNamespaces: ownership.AdditionalNamespaces(r.id, namespaces)},
	}})
	out, err := r.e.opts.Dynamic.Resource(r.s.gvr).Namespace(r.inst.GetNamespace()).
		Patch(ctx, r.inst.GetName(), types.MergePatchType, body, patchOptions)
	countWrite("manage", err)
	if err != nil {
		return err
	}
	r.inst.SetResourceVersion(out.GetResourceVersion())
	r.inst.SetAnnotations(out.GetAnnotations())
	return nil
}
