package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/managedfields"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/refusal"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// dryRun renders the instance's graph, of the RGD among served that
// serves its kind, and validates each object. warning is set when the
// instance itself could not go through the API server's dry run.
func (c *cluster) dryRun(ctx context.Context, inst *unstructured.Unstructured, served []v1alpha1.ResourceGraphDefinition) (plan []PlannedResource, warning string, err error) {
	gvk := inst.GroupVersionKind()
	rgd, err := servingOf(served, gvk)
	if err != nil {
		return nil, "", err
	}
	// The API server's own defaulting and validation of the instance, and
	// the instance as it is, if it exists.
	var mapping *meta.RESTMapping
	var defaulted, live *unstructured.Unstructured
	err = c.withMapping(gvk.Kind+"."+gvk.Version+"."+gvk.Group, func(m *meta.RESTMapping) (err error) {
		mapping = m
		switch {
		case m.Scope.Name() != meta.RESTScopeNameNamespace:
			inst.SetNamespace("") // as kubectl apply does for a cluster-scoped kind
		case inst.GetNamespace() == "":
			inst.SetNamespace(c.namespace)
		}
		ri := c.resourceIn(m, inst.GetNamespace())
		if inst.GetName() == "" {
			// As kubectl create does with generateName: the API server
			// names the instance, and nothing of that name exists yet.
			defaulted, err = ri.Create(ctx, inst, metav1.CreateOptions{FieldManager: "kubectl-kro", DryRun: []string{metav1.DryRunAll}})
		} else {
			defaulted, err = ri.Apply(ctx, inst.GetName(), inst, metav1.ApplyOptions{FieldManager: "kubectl-kro", Force: true, DryRun: []string{metav1.DryRunAll}})
		}
		switch {
		case refusal.IsUnauthorized(err):
			// A user who may read instances, not write them, previews
			// too: the instance is admitted here instead.
			defaulted, live, warning, err = c.admitUnchecked(ctx, m, ri, rgd, inst, err)
			return err
		case err != nil && inst.GetName() != "" && refusal.MisfitsSchema(err):
			return refusal.Readable(c.everyMisfit(ctx, m, inst, err))
		case err != nil:
			return refusal.Readable(err)
		case inst.GetName() == "":
			return nil // named by the API server: nothing of the name exists
		}
		if live, err = ri.Get(ctx, inst.GetName(), metav1.GetOptions{}); err != nil {
			live = nil
		}
		return nil
	})
	switch {
	case refusal.IsUnauthorized(err):
		return nil, "", fmt.Errorf("dry-run applies the instance as a dry run, which your roles do not allow: %w", err)
	case err != nil:
		return nil, warning, fmt.Errorf("the instance itself is refused: %w", err)
	}
	if live != nil {
		defaulted.SetUID(live.GetUID())
	}
	plan, err = c.plan(ctx, planSubject{rgd: rgd, gvk: mapping.GroupVersionKind, instance: defaulted, live: live, generateName: inst.GetGenerateName()})
	return plan, warning, err
}

// admitUnchecked is the instance as the API server would admit inst, for
// a user whose roles refuse its dry run (refused, the error when the
// stored instance cannot be read either, so that whether it exists is not
// known): the stored one, if any, with inst's fields laid over it as an
// apply merges them, then pruned, defaulted and validated offline as the
// kind's CustomResourceDefinition says: the cluster's, or, where the user
// may not read it, the one rgd generates, which kro-agent applies. No
// admission webhook or policy is asked (kro-agent's own adds only its
// labels), nor any rule comparing with the stored instance: warning says
// so.
func (c *cluster) admitUnchecked(ctx context.Context, m *meta.RESTMapping, ri dynamic.ResourceInterface, rgd *v1alpha1.ResourceGraphDefinition, inst *unstructured.Unstructured, refused error) (admitted, live *unstructured.Unstructured, warning string, err error) {
	if inst.GetName() != "" {
		switch live, err = ri.Get(ctx, inst.GetName(), metav1.GetOptions{}); {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return nil, nil, "", refused
		}
	}
	crdName := m.Resource.GroupResource().String()
	crd, schemaOf := storedReader{dyn: c.dyn, metadata: c.metadata}.crd(ctx, crdName), "CustomResourceDefinition "+crdName
	if crd == nil {
		g, err := graph.Compile(rgd, graph.Options{Resolver: c.resolver})
		if err != nil {
			return nil, nil, "", refused
		}
		crd, schemaOf = g.CRD, "the CustomResourceDefinition ResourceGraphDefinition "+rgd.Name+" generates"
	}
	admitted, laid := inst.DeepCopy(), ""
	if live != nil {
		admitted = &unstructured.Unstructured{Object: managedfields.LaidOver(live.DeepCopy().Object, inst.DeepCopy().Object, live.GetManagedFields())}
		laid = ", the file's fields laid over the stored one,"
	} else {
		// As the API server gives a new object one, dry run or not.
		admitted.SetUID(uuid.NewUUID())
	}
	errs, err := offline.Admit(ctx, crd, admitted)
	if err != nil {
		return nil, nil, "", refused
	}
	warning = fmt.Sprintf("your roles do not allow a dry run of %s %s: it is checked here%s against the schema of %s; admission webhooks and policies, and rules comparing with the stored object, are not checked", inst.GetKind(), cache.MetaObjectToName(admitted), laid, schemaOf)
	if len(errs) > 0 {
		return nil, nil, warning, apierrors.NewInvalid(m.GroupVersionKind.GroupKind(), admitted.GetName(), errs)
	}
	return admitted, live, warning, nil
}

// everyMisfit is the API server's refusal (err) of an apply of a new
// instance that does not fit its kind's schema, which names the first
// field that does not, made whole: every error a create of it would give,
// from the kind's CustomResourceDefinition as the cluster serves it
// (offline.Admit, the API server's own validation), when there are more.
// It is err as it is for an instance that exists, whose apply merges with
// what is stored, or when the CRD cannot be read.
func (c *cluster) everyMisfit(ctx context.Context, m *meta.RESTMapping, inst *unstructured.Unstructured, err error) error {
	if _, getErr := c.resourceIn(m, inst.GetNamespace()).Get(ctx, inst.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(getErr) {
		return err
	}
	crd := storedReader{dyn: c.dyn, metadata: c.metadata}.crd(ctx, m.Resource.GroupResource().String())
	if crd == nil {
		return err
	}
	errs, admitErr := offline.Admit(ctx, crd, inst.DeepCopy())
	if admitErr != nil || len(errs) == 0 {
		return err
	}
	// One error too: it says more than the server's apply (the field
	// meant by a misspelt one, why YAML read text as a boolean).
	return apierrors.NewInvalid(m.GroupVersionKind.GroupKind(), inst.GetName(), errs)
}

// planSubject is what a plan is made for.
type planSubject struct {
	// rgd is the RGD whose graph renders the instance: the one the
	// cluster serves it with, or a change to it being previewed.
	rgd *v1alpha1.ResourceGraphDefinition
	// graph is rgd compiled against this cluster's kinds, nil to compile
	// it for each instance.
	graph *graph.Graph
	gvk   schema.GroupVersionKind
	// instance is the instance to render: a file's, as the API server's
	// dry run returns it, or the stored one; the graph's scope fills in
	// its schema's defaults. live is the one stored now, nil for none.
	instance, live *unstructured.Unstructured
	// generateName is the prefix the API server named a new instance
	// from for the preview, "" when it was named in the file.
	generateName string
}

// plan renders the graph of s.rgd for s.instance, in topological order,
// validates each object with a server-side dry run and compares it with
// what exists; then adds what kro-agent would prune.
func (c *cluster) plan(ctx context.Context, s planSubject) ([]PlannedResource, error) {
	rgd, defaulted, live := s.rgd, s.instance, s.live
	target, unplaced, err := c.dryRunTarget(ctx, live, defaulted)
	if err != nil {
		return nil, err
	}
	g := s.graph
	if g == nil || target != c {
		// Kinds resolve in the cluster the resources go to.
		if g, err = graph.Compile(rgd, graph.Options{Resolver: target.resolver}); err != nil {
			return nil, fmt.Errorf("ResourceGraphDefinition %s is invalid:\n%w", rgd.Name, err)
		}
	}
	id := ownership.Instance{GVK: s.gvk, Name: defaulted.GetName(), Namespace: defaulted.GetNamespace(), UID: string(defaulted.GetUID()), RGDName: rgd.Name, Labels: defaulted.GetLabels()}
	owner := ownership.RGD{Name: rgd.Name, UID: string(rgd.UID)}

	scope := resolve.NewScope(g, defaulted.Object)
	excluded := map[string]bool{}
	// Namespaces the plan creates, by the node creating each: objects in
	// them cannot be checked by a dry run before they exist.
	newNamespaces := map[string]string{}
	renderers := resolve.Renderers{}
	// What the plan renders, and the nodes some of whose objects' names it
	// cannot render yet: what kro-agent would prune is what it renders no
	// longer.
	produced := map[objectKey]bool{}
	unnamed := map[string]bool{}
	holds := newHolds(g)
	var plan []PlannedResource
	for _, n := range g.Nodes {
		kind := "?"
		if n.Kind != nil {
			kind = n.Kind.GVK.Kind
		}
		if skipped := skipReason(n, excluded, scope); skipped != "" {
			excluded[n.ID] = true
			plan = append(plan, PlannedResource{NodeID: n.ID, Kind: kind, Action: ActionSkipped, Reason: skipped})
			continue
		}
		if n.External != nil {
			p := target.planExternal(ctx, n, scope)
			p.Cluster = target.name
			plan = append(plan, p)
			holds.settleExternal(n, p)
			continue
		}
		items := []resolve.Item{{Scope: scope}}
		if n.IsCollection() {
			if items, err = resolve.Expand(n, scope, c.maxCollectionSize); err != nil {
				unnamed[n.ID] = true
				action, reason := unrenderable([]error{err})
				plan = append(plan, PlannedResource{NodeID: n.ID, Kind: kind, Action: action, Reason: reason})
				continue
			}
		}
		var observed []any
		// An object another resource or item renders too fails the
		// whole resource: the agent applies no item of such a collection.
		var duplicate error
		first := len(plan)
		for _, item := range items {
			// add plans p, whose object kro-agent would find as seen after
			// its apply: that is what it judges ready, and what the
			// resources that read it are rendered from.
			add := func(p PlannedResource, seen map[string]any) {
				if applied(p.Action) {
					if v := resolve.Ready(n, seen, item.Scope); !v.Ready {
						p.notReady = v.Reason
					}
				}
				plan = append(plan, p)
				observed = append(observed, seen)
			}
			// A value that cannot be rendered yet is shown as pending, and
			// the plan says why.
			var unresolved []error
			desired := resolve.RenderOr(n, item.Scope, func(f *graph.Field, err error) any {
				unresolved = append(unresolved, err)
				return pendingMarker + expr.Format(f.Segments) + ">"
			})
			u := &unstructured.Unstructured{Object: desired}
			if n.Kind.Namespaced && u.GetNamespace() == "" {
				u.SetNamespace(defaulted.GetNamespace())
			}
			size := 0
			if n.IsCollection() {
				size = len(items)
			}
			ownership.AddManagedLabels(u, owner, id, ownership.Item{NodeID: n.ID, Index: item.Index, Size: size})
			withAgentVersionOf(u, defaulted)
			if strings.Contains(u.GetNamespace()+u.GetName(), pendingMarker) {
				unnamed[n.ID] = true
			} else {
				produced[objectKey{kind: n.Kind.GVK.GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}] = true
				if err := renderers.Claim(n, item, u.GetNamespace(), u.GetName()); err != nil {
					duplicate = err
					add(PlannedResource{NodeID: n.ID, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Action: ActionInvalid, Reason: err.Error(), Object: u.Object}, u.Object)
					continue
				}
			}
			uncheckedWhy := unplaced
			if creator, ok := newNamespaces[u.GetNamespace()]; ok && n.Kind.Namespaced && uncheckedWhy == "" {
				uncheckedWhy = fmt.Sprintf("namespace %s is created by %s first; a dry run cannot check objects in it before it exists", u.GetNamespace(), creator)
			}
			if uncheckedWhy != "" {
				action, reason := unchecked(uncheckedWhy, unresolved)
				add(PlannedResource{NodeID: n.ID, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Action: action, Reason: reason, Object: u.Object}, u.Object)
				continue
			}
			if k, ok := c.unserved[n.Kind.GVK]; ok && target == c {
				p, admitted := planUnserved(ctx, n, u, unresolved, k)
				add(p, admitted.Object)
				continue
			}
			p, found := target.planObject(ctx, n, u, unresolved, id)
			p.Cluster = target.name
			if p.Action == ActionCreate && n.Kind.GVK.Group == "" && n.Kind.GVK.Kind == "Namespace" {
				newNamespaces[u.GetName()] = n.ID
			}
			if found == nil {
				found = u
			}
			add(p, found.Object)
		}
		if duplicate != nil {
			for i := first; i < len(plan); i++ {
				if plan[i].Action != ActionInvalid {
					plan[i].Action, plan[i].Reason, plan[i].Diff = ActionInvalid, "kro-agent applies no item of this collection: "+duplicate.Error(), ""
				}
			}
		}
		if n.IsCollection() {
			scope.Observe(n, observed)
		} else if len(observed) == 1 {
			scope.Observe(n, observed[0])
		}
		holds.settle(n, plan[first:])
	}
	for i := range plan {
		// Its namespace is created further on: the agent applies it once
		// that exists, as it would one the plan creates first.
		if creator, ok := newNamespaces[plan[i].Namespace]; ok && plan[i].noNamespace {
			p := &plan[i]
			p.Action, p.Reason = unchecked(fmt.Sprintf("namespace %s is created by %s, which nothing orders before %s (write its namespace as ${%s.metadata.name}): kro-agent applies it once the namespace exists; a dry run cannot check objects in it before it exists",
				p.Namespace, creator, p.NodeID, creator), nil)
		}
	}
	if live != nil {
		plan = append(plan, target.prunes(ctx, g, live, produced, unnamed, plan, holds.waiting())...)
		// kro-agent goes no further than an invalid object or one being
		// deleted, nor than one not ready yet: what the objects it does
		// not reach would give the status is not observed.
		if p, changes := statusChange(g, scope.Without(holds.unobserved()...), holds.unreached, live); changes {
			if unread := unreadNodes(plan, g.Status); len(unread) > 0 {
				p.Action, p.Reason, p.Diff = ActionUnknown, "its status is projected from resources you may not read ("+strings.Join(unread, ", ")+"): what it would say is not known", ""
			}
			plan = append(plan, p)
		}
	}
	instance := instanceName(s.gvk.Kind, defaulted)
	suspended := v1alpha1.IsSuspended(defaulted)
	for i := range plan {
		plan[i].Instance = instance
		plan[i].GenerateName = s.generateName
		if suspended {
			plan[i].Reason = deferredWhileSuspended(plan[i])
		}
	}
	return plan, nil
}

// planExternal reads what an externalRef names, as kro-agent does (the
// resources that read it render from it in scope): the plan's line for it.
func (c *cluster) planExternal(ctx context.Context, n *graph.Node, scope *resolve.Scope) PlannedResource {
	p := PlannedResource{NodeID: n.ID, Kind: n.External.Kind, Action: ActionUnchanged, Reason: "externalRef: read, never written"}
	if given := c.givenExternal(n, scope); given != nil {
		p.Name, p.Namespace = given.GetName(), given.GetNamespace()
		observed := resolve.Typed(n, given.Object)
		scope.Observe(n, observed)
		p.Reason = "externalRef: read as given (-f), never written"
		if v := resolve.Ready(n, observed, scope); !v.Ready {
			p.Reason += "; not ready, so what reads it waits: " + v.Reason
			p.notReady = v.Reason
		}
		return p
	}
	if k, ok := c.unserved[n.Kind.GVK]; ok {
		p.Action, p.Reason = ActionPending, fmt.Sprintf("externalRef: %s is served once ResourceGraphDefinition %s is applied, and kro-agent waits for the object it names; so does what reads it", n.Kind.GVK.Kind, k.rgd)
		return p
	}
	read, err := c.readExternal(ctx, n, scope)
	var unresolved *unresolvedExternal
	switch {
	case errors.As(err, &unresolved):
		p.Action, p.Reason = ActionPending, "externalRef: cannot be resolved yet: "+unresolved.err.Error()
		return p
	case errors.Is(err, errExternalKindUnknown):
		p.Action, p.Reason = ActionUnknown, "externalRef: its kind is not known"
		return p
	case read.target.Selector != nil:
		p.Namespace = read.target.Namespace
		if err != nil {
			p.Action, p.Reason = ActionUnknown, "externalRef: cannot be listed: "+err.Error()
			return p
		}
		p.Reason = fmt.Sprintf("externalRef: %d %s match the selector %q; read, never written", len(read.matched), n.Kind.Resource, read.target.Selector)
		if read.onlyOwn {
			p.Reason = fmt.Sprintf("externalRef: only the instance's own %s match the selector %q, and it never reads those", n.Kind.Resource, read.target.Selector)
		}
		return p
	}
	p.Name, p.Namespace = read.target.Name, read.target.Namespace
	switch {
	case err != nil:
		p.Action, p.Reason = ActionUnknown, "externalRef: cannot be read: "+err.Error()
	case read.object == nil:
		p.Action, p.Reason = ActionPending, "externalRef: does not exist yet; kro-agent waits for it, and so does what reads it"
	default:
		if v := resolve.Ready(n, read.observed, scope); !v.Ready {
			p.Reason = "externalRef: read, never written; not ready, so what reads it waits: " + v.Reason
			p.notReady = v.Reason
		}
	}
	return p
}

// givenExternal is the object given to the dry run that n, an externalRef
// by name, names; nil for none, for a reference by labels (the cluster's
// objects are listed) and for one that cannot be resolved yet (which
// readExternal says).
func (c *cluster) givenExternal(n *graph.Node, scope *resolve.Scope) *unstructured.Unstructured {
	if len(c.given) == 0 || n.Kind == nil {
		return nil
	}
	target, err := resolve.ExternalTarget(n, scope)
	if err != nil || target.Selector != nil {
		return nil
	}
	for _, u := range c.given {
		ns := u.GetNamespace()
		if ns == "" && n.Kind.Namespaced {
			ns = c.namespace // as kubectl apply would put it
		}
		if u.GroupVersionKind().GroupKind() == n.Kind.GVK.GroupKind() && u.GetName() == target.Name && ns == target.Namespace {
			u = u.DeepCopy()
			u.SetNamespace(ns)
			return u
		}
	}
	return nil
}

// unreadNodes are the resources of a plan with objects the user may not
// read that the status fields read, each once.
func unreadNodes(plan []PlannedResource, status []*graph.Field) []string {
	reads := func(id string) bool {
		return slices.ContainsFunc(status, func(f *graph.Field) bool {
			return slices.ContainsFunc(f.Exprs, func(e *graph.Expression) bool { return slices.Contains(e.References, id) })
		})
	}
	var out []string
	for _, p := range plan {
		if p.unread && !slices.Contains(out, p.NodeID) && reads(p.NodeID) {
			out = append(out, p.NodeID)
		}
	}
	return out
}

// afterRefused is the reason of a planned object of a resource that
// depends on dep, which has an invalid object or one being deleted (root
// is dep) or waits for root, which has one; rootIs says which ("is
// invalid").
func afterRefused(p PlannedResource, dep, root, rootIs string) string {
	var verb string
	switch p.Action {
	case ActionCreate:
		verb = "creates"
	case ActionUpdate:
		verb = "updates"
	default:
		return p.Reason
	}
	why := fmt.Sprintf("kro-agent %s it only after %s, which %s (above)", verb, dep, rootIs)
	if dep != root {
		why = fmt.Sprintf("kro-agent %s it only after %s, which waits for %s, which %s (above)", verb, dep, root, rootIs)
	}
	return joinReasons(why, p.Reason)
}

// deferredWhileSuspended is the reason of p, planned for an instance
// suspended by its annotation: kro-agent writes nothing for it, and does
// what changes only once it is resumed.
func deferredWhileSuspended(p PlannedResource) string {
	switch p.Action {
	case ActionCreate, ActionUpdate, ActionDelete:
	default:
		return p.Reason
	}
	return joinReasons(fmt.Sprintf("not while the instance is suspended (%s=%s): kro-agent does this once the annotation is removed", v1alpha1.AnnotationReconcile, v1alpha1.ReconcileSuspended), p.Reason)
}

// statusChange plans the status of live, an existing instance: the fields
// g projects, from the objects as the plan observed them in scope (as
// kro-agent's apply would leave them), against what the instance says
// now; false when they agree. As the agent does, it leaves out a field
// whose inputs are not there yet, keeps what a resource it does not get
// to (unreached) gave, and writes state and conditions beside them, which
// the plan leaves to the agent.
func statusChange(g *graph.Graph, scope *resolve.Scope, unreached func(id string) bool, live *unstructured.Unstructured) (PlannedResource, bool) {
	p := PlannedResource{Kind: live.GetKind(), Name: live.GetName(), Namespace: live.GetNamespace()}
	current, _ := live.Object["status"].(map[string]any)
	projected, err := resolve.StatusKeeping(g, scope, current, unreached)
	if err != nil {
		p.Action, p.Reason = ActionInvalid, "its status cannot be projected (GraphResolved): "+err.Error()
		return p, true
	}
	now := map[string]any{}
	if old, ok := live.Object["status"].(map[string]any); ok {
		for k, v := range old {
			if !g.AgentWrites(k) {
				now[k] = v
			}
		}
	}
	before, err1 := yaml.Marshal(map[string]any{"status": now})
	after, err2 := yaml.Marshal(map[string]any{"status": projected})
	if err := errors.Join(err1, err2); err != nil {
		p.Action, p.Reason = ActionUnknown, "its status cannot be compared: "+err.Error()
		return p, true
	}
	if p.Diff = unifiedDiff(string(before), string(after)); p.Diff == "" {
		return p, false
	}
	p.Action, p.Reason = ActionUpdate, "its status, projected from the resources as kro-agent would leave them"
	return p, true
}

// objectKey names an object across the versions of its kind.
type objectKey struct {
	kind            schema.GroupKind
	namespace, name string
}

// prunes are the objects labelled as live's, in this cluster, that the
// plan no longer produces (a resource removed from the RGD or skipped by
// its includeWhen, a collection that shrank, an object renamed): kro-agent
// deletes them after a pass that applies every resource. The objects of
// nodes in unnamed, whose names the plan cannot render yet, are left out:
// which of them stay is not known before those names are. waiting says
// some resource waits for another to be ready, so that pass is not this
// one.
func (c *cluster) prunes(ctx context.Context, g *graph.Graph, live *unstructured.Unstructured, produced map[objectKey]bool, unnamed map[string]bool, plan []PlannedResource, waiting bool) []PlannedResource {
	candidates := graphMemberKinds(g)
	// Kinds applied for the instance before, which the RGD may no longer
	// have; one the cluster no longer serves has no objects left.
	for _, gk := range ownership.RecordedKinds(live) {
		if m, err := c.mapper.RESTMapping(gk); err == nil {
			candidates = append(candidates, mappedMemberKind(m))
		}
	}
	// Each kind once, or a kind the user may not list is said twice.
	var kinds []memberKind
	for _, k := range candidates {
		if !slices.ContainsFunc(kinds, func(have memberKind) bool { return have.gvr == k.gvr }) {
			kinds = append(kinds, k)
		}
	}
	objs, forbidden := c.listMembers(ctx, live, kinds)
	var out []PlannedResource
	for _, k := range kinds {
		if forbidden[k.gvr] {
			out = append(out, PlannedResource{Kind: k.kind, Action: ActionUnknown, Cluster: c.name,
				Reason: "you may not list " + k.kind + ": which of the instance's objects of this kind kro-agent would prune is not known"})
		}
	}
	// The agent prunes only after a pass that applied every resource.
	later := ""
	if waiting || slices.ContainsFunc(plan, func(p PlannedResource) bool { return p.Action == ActionPending || p.Action == ActionInvalid }) {
		later = "; kro-agent deletes it once every other resource is applied"
	}
	slices.SortFunc(objs, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetLabels()[v1alpha1.LabelNodeID]+"/"+a.GetNamespace()+"/"+a.GetName(), b.GetLabels()[v1alpha1.LabelNodeID]+"/"+b.GetNamespace()+"/"+b.GetName())
	})
	for _, u := range objs {
		node := u.GetLabels()[v1alpha1.LabelNodeID]
		key := objectKey{kind: u.GroupVersionKind().GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}
		if unnamed[node] || produced[key] || u.GetDeletionTimestamp() != nil {
			continue
		}
		out = append(out, PlannedResource{NodeID: node, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(),
			Action: ActionDelete, Cluster: c.name, Reason: whyPruned(g, node, key.kind, plan) + later})
	}
	return out
}

// whyPruned says why the graph g no longer produces an object of node, of
// kind, given the plan's entries.
func whyPruned(g *graph.Graph, node string, kind schema.GroupKind, plan []PlannedResource) string {
	n := g.Node(node)
	if n == nil {
		return fmt.Sprintf("resource %s is no longer in the ResourceGraphDefinition", node)
	}
	for _, p := range plan {
		if p.NodeID == node && p.Action == ActionSkipped {
			return fmt.Sprintf("resource %s is skipped: %s", node, p.Reason)
		}
	}
	switch {
	case n.Kind != nil && n.Kind.GVK.GroupKind() != kind:
		return fmt.Sprintf("resource %s is now a %s", node, n.Kind.GVK.Kind)
	case n.IsCollection():
		return fmt.Sprintf("collection %s no longer produces it", node)
	}
	return fmt.Sprintf("resource %s now renders another object in its place", node)
}

// dryRunTarget is the cluster the instance's resources are applied to: the
// workload cluster the agent placed the live instance on, or this one. An
// instance of a region that is not placed yet has no target to validate
// against; unplaced then says so, for every object of the plan. As the
// agent does, a live instance it reconciled in this cluster stays here
// whatever region the file's label asks for, and one waiting to be placed
// again, its cluster gone, waits for its region without a label.
func (c *cluster) dryRunTarget(ctx context.Context, live, inst *unstructured.Unstructured) (target *cluster, unplaced string, err error) {
	region := inst.GetLabels()[agentv1.LabelRegion]
	if live != nil {
		p, ok := agentv1.PlacementOf(live)
		if ok {
			w, err := c.workloadCluster(ctx, p.Cluster)
			if err != nil {
				return nil, "", fmt.Errorf("%s %s is placed on cluster %s, where its resources would be checked: %w", live.GetKind(), live.GetName(), p.Cluster, err)
			}
			return w, "", nil
		}
		status, _ := live.Object["status"].(map[string]any)
		switch {
		case p.Region != "" && region == "":
			region = p.Region
		case v1alpha1.DecodeInstanceStatus(status).ReconciledLocally(p.Region != ""):
			return c, "", nil
		}
	}
	if region != "" {
		return c, fmt.Sprintf("the agent places the instance on a Ready Cluster of region %q first, and creates this there; it is not placed yet, so nothing was validated against a cluster", region), nil
	}
	return c, "", nil
}

// planObject validates one rendered object with a server-side dry-run
// apply and compares the result with the live object. It returns the
// object as kro-agent would find it after its apply, which is what the
// resources that read it are rendered from: the dry run's answer for an
// object that exists (its new fields, its status as it is now), the live
// object where kro-agent would not apply (an invalid object, one being
// deleted), and nil for one it creates, or whose name an object not
// inst's holds. An object with fields that could not be rendered
// (unresolved) is not sent, nor one whose name an object not inst's
// holds: kro-agent leaves that alone.
func (c *cluster) planObject(ctx context.Context, n *graph.Node, u *unstructured.Unstructured, unresolved []error, inst ownership.Instance) (PlannedResource, *unstructured.Unstructured) {
	p := PlannedResource{NodeID: n.ID, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Object: u.Object}
	ri := c.dyn.Resource(n.Kind.GVR()).Namespace(u.GetNamespace())
	live, readErr := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if readErr != nil {
		if apierrors.IsNotFound(readErr) {
			readErr = nil
		} else {
			p.Reason = "cannot read the live object: " + readErr.Error()
		}
		live = nil
	}
	adopted := ""
	if live != nil && ownership.Whose(live.GetLabels(), inst) != "" {
		if !c.adopts(inst, live) {
			p.Action, p.Reason = ActionInvalid, "it exists and "+ownership.LeftAlone(live, inst, n.ID, ownership.AppliedByAgent(live.GetManagedFields()), c.name == "")
			return p, nil
		}
		adopted = "kro-agent adopts it: it was " + ownership.WhyAdopted(live, inst)
	}
	if live != nil && live.GetDeletionTimestamp() != nil {
		// The agent applies nothing over an object on its way out.
		p.Action, p.deleting = ActionPending, true
		p.Reason = "it is being deleted" + heldByFinalizers(live.GetFinalizers()) + "; kro-agent creates it again once it is gone, and what depends on it waits for that"
		return p, live
	}
	if len(unresolved) > 0 {
		p.Action, p.Reason = unrenderable(unresolved)
		return p, live
	}
	result, err := ri.Apply(ctx, u.GetName(), withOwnershipLabelsOf(u, live), metav1.ApplyOptions{FieldManager: ownership.FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
	if err == nil && live != nil {
		result = withOwnershipLabelsOf(result, u)
	}
	if refusal.IsUnauthorized(err) {
		// Your roles, not the agent's: a user who may create instances
		// need not be one who may write what they make. The plan is made
		// without the API server's check, from the live object, if it
		// could be read.
		if readErr != nil {
			p.Action, p.unread = ActionUnknown, true
			p.Reason = "your roles allow neither a dry run of it nor reading it (kro-agent applies with its own): " + readErr.Error()
			return p, nil
		}
		result, p.Reason, err = overlaid(live, u), uncheckedForRoles, nil
	}
	if err != nil {
		// As the instance's conditions would say it, and what to do.
		p.Action, p.Reason = ActionInvalid, invalidReason(n, err)
		if refusal.IsImmutableChange(err) && live != nil {
			// What would change, as the plan shows changes.
			p.Diff = diff(live, overlaid(live, withOwnershipLabelsOf(u, live)))
			p.Reason += fmt.Sprintf("; the change needs a field the API server lets no one change once the object exists: undo it, or delete %s %s and kro-agent creates it again with the new values",
				n.Kind.GVK.Kind, cache.MetaObjectToName(live)) + orphanAdvice(n.Kind.GVK.GroupKind(), live.GetName(), live.GetNamespace())
		}
		if terminating, ok := refusal.NamespaceUnavailable(err, u.GetNamespace()); ok {
			p.Reason, p.noNamespace = namespaceUnavailable(u.GetNamespace(), terminating), !terminating
		}
		return p, live
	}
	if live == nil {
		p.Action = ActionCreate
		p.Diff = diff(nil, result)
		return p, nil
	}
	p.Diff = diff(live, result)
	p.Action = ActionUnchanged
	if p.Diff != "" {
		p.Action = ActionUpdate
	}
	if adopted != "" {
		p.Reason = joinReasons(p.Reason, adopted)
	}
	return p, result
}

// invalidReason is a refusal of n's object as the instance's conditions
// would say it, followed by the template strings behind the fields it
// names: the instance's author never wrote the object.
func invalidReason(n *graph.Node, err error) string {
	// The diff of Go structs the API server appends to some refusals (of
	// a claim's spec, a Pod's) is noise once the reason is one line; the
	// plan shows a change as a diff of its own.
	reason, _, _ := strings.Cut(refusal.Readable(err).Error(), "\n@@ ")
	if from := n.RenderedFrom(refusal.InvalidFields(err)); from != "" {
		reason += "; " + from
	}
	return reason
}

// adopts tells whether inst takes over live, an object that is not its
// own, here (ownership.Adopts): kro-agent applied it for an earlier
// instance of the name, in the instance's own cluster, or its owner handed
// it to inst.
func (c *cluster) adopts(inst ownership.Instance, live *unstructured.Unstructured) bool {
	return ownership.Adopts(inst, live, ownership.AppliedByAgent(live.GetManagedFields()), c.name == "")
}

// withAgentVersionOf labels u with the version of the kro-agent that
// labelled the instance inst, which is what that kro-agent writes on the
// objects it applies; this plugin may be of another version, and would
// otherwise plan every object relabelled. An instance no kro-agent has
// labelled yet leaves u as it is.
func withAgentVersionOf(u, inst *unstructured.Unstructured) {
	v := inst.GetLabels()[v1alpha1.LabelKroVersion]
	if v == "" {
		return
	}
	labels := u.GetLabels()
	labels[v1alpha1.LabelKroVersion] = v
	u.SetLabels(labels)
}

// withOwnershipLabelsOf is u with the ownership labels of from (those
// kro-agent alone may change), and u's other labels. The dry run of an
// object that exists is sent with the live object's: the guard policy
// lets kro-agent alone change them, and the user's dry run of a change
// kro-agent would make (a collection that grows relabels every item with
// its size; a resource renamed in the RGD, with its node) would be refused
// though kro-agent's apply is not. The result gets the rendered ones back,
// for the diff. A new object, from nil, is sent as rendered: the guard
// does not look at creates.
func withOwnershipLabelsOf(u, from *unstructured.Unstructured) *unstructured.Unstructured {
	if from == nil {
		return u
	}
	labels := map[string]string{}
	for k, v := range u.GetLabels() {
		if !ownership.IsOwnershipKey(k) {
			labels[k] = v
		}
	}
	for k, v := range from.GetLabels() {
		if ownership.IsOwnershipKey(k) {
			labels[k] = v
		}
	}
	out := u.DeepCopy()
	out.SetLabels(labels)
	return out
}

// uncheckedForRoles is the reason of an object the plan could not send
// in a dry run, which the user's roles do not allow.
const uncheckedForRoles = "not checked by the API server, as your roles do not allow its dry run (kro-agent applies with its own): the template's fields laid over the live object"

// namespaceUnavailable says why an object cannot be applied in namespace
// ns, which does not exist or is being deleted (terminating), and when
// kro-agent applies it: the agent waits for the namespace.
func namespaceUnavailable(ns string, terminating bool) string {
	if terminating {
		return fmt.Sprintf("namespace %s is being deleted: kro-agent applies it once the namespace is created again", ns)
	}
	return fmt.Sprintf("namespace %s does not exist: create it (kubectl create namespace %s), or have the instance name one that does; kro-agent applies it as soon as the namespace is created", ns, ns)
}

// unrenderable says what the agent would do with an object some of whose
// fields fail to render (errs), as it reports it: an expression that fails
// on the instance's values stops it (GraphResolved False); a field the
// instance does not set waits for its author; anything else waits for
// other resources, named when one is not there at all (an externalRef's
// object that does not exist).
func unrenderable(errs []error) (action, reason string) {
	why := "some values wait on other resources' status; they are filled in once those exist"
	for _, err := range errs {
		if errors.As(err, new(*resolve.NotObservedError)) {
			why = resolve.Waiting(err) + " (above); its values are filled in once that is there"
			break
		}
	}
	return unchecked(why, errs)
}

// unchecked is what the plan says of an object that waits (why), some of
// whose fields may fail to render (errs): a dry run cannot send it to a
// cluster yet, or some of its values wait on other resources. What the
// instance's own values decide comes first: an invalid object is invalid
// wherever it would go, and an unset field waits for the instance's author
// whether or not the instance is placed; a value missing from what the
// object reads is named.
func unchecked(why string, errs []error) (action, reason string) {
	for _, err := range errs {
		if !errors.Is(err, resolve.ErrPending) {
			return ActionInvalid, "cannot be rendered from the instance's values: " + err.Error()
		}
	}
	for _, err := range errs {
		if errors.Is(err, resolve.ErrUnset) {
			return ActionPending, err.Error()
		}
	}
	// A value missing from what is read (an index past the end of the
	// instance's list, a status field not written), not a resource that
	// does not exist yet: which one.
	for _, err := range errs {
		if resolve.WaitsForValue(err) {
			return ActionPending, resolve.Waiting(err)
		}
	}
	return ActionPending, why
}
