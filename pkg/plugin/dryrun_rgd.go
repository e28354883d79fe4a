package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// RGDPreview is the preview of a change to one RGD: the plan of each of
// its instances, rendered with the changed graph, and what changes in the
// kind's schema. -o json prints a list of them.
type RGDPreview struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Instances is how many instances were planned.
	Instances int `json:"instances"`
	// Held is set when kro-agent would not apply the change: it would
	// break stored instances, and the RGD does not allow that. Plan is
	// what it would do once allowed.
	Held bool `json:"held,omitempty"`
	// SchemaChanges are the changes to the kind's schema, against the CRD
	// the cluster serves now.
	SchemaChanges []graph.SchemaChange `json:"schemaChanges,omitempty"`
	// PresentationChanges are the changes to how kubectl names and prints
	// the kind: short names, categories, printer columns.
	PresentationChanges []string `json:"presentationChanges,omitempty"`
	// NewCRD is the CRD a new RGD creates, serving ServedAs (group and
	// version) Kind; "" for a change to an existing RGD.
	NewCRD   string            `json:"newCRD,omitempty"`
	ServedAs string            `json:"servedAs,omitempty"`
	Plan     []PlannedResource `json:"plan"`

	// where the instances were looked for: "namespace X", "every
	// namespace", or "" for a cluster-scoped kind.
	where string
	// warnings are what the admission webhook would warn of, for an RGD
	// checked offline (its dry run prints the webhook's own).
	warnings []string
}

// dryRunRGD previews applying obj, a ResourceGraphDefinition, as it
// replaces the one of its name in the cluster. The API server defaults it
// and kro-agent's admission webhook validates it in a dry-run update (a
// dry-run create for a new RGD), which stores nothing: what the webhook
// denies is the error, what it warns of (a change that would break stored
// instances) is printed as kubectl prints warnings. A new RGD has no
// instances; the preview names the CRD it would create. Otherwise each
// instance of the RGD (in c's namespace, or in every one when
// allNamespaces) is planned with the new graph, whose scope fills in the
// new schema's defaults as the API server does when it reads an instance
// after the CRD changed: what kro-agent would apply, and prune, once the
// change is in. The instances given, of the RGD's kind from the same
// files, are planned too, in place of the stored ones of their names: as
// if all were applied together, which for a new RGD is the only way to
// see what its instances would make. An RGD that uses the kind of another
// given one, not served yet (off), is checked offline instead.
func (c *cluster) dryRunRGD(ctx context.Context, obj *unstructured.Unstructured, allNamespaces bool, given []*unstructured.Unstructured, off *offlineRGD) (*RGDPreview, error) {
	// current is nil for a new RGD: the preview is its admission and its CRD.
	current, err := c.getRGD(ctx, obj.GetName())
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	var rgd *v1alpha1.ResourceGraphDefinition
	var g *graph.Graph
	var warnings []string
	if off != nil {
		if rgd, g, warnings, err = c.admitOffline(ctx, off, current); err != nil {
			return nil, err
		}
	} else if rgd, g, err = c.admitAndCompile(ctx, obj.DeepCopy(), current); err != nil {
		return nil, err
	}
	given = c.inNamespaces(g, given)
	if current == nil {
		p := &RGDPreview{Name: rgd.Name, Kind: g.Instance.Kind, NewCRD: g.CRD.Name, ServedAs: g.Instance.GroupVersion().String(), Instances: len(given), warnings: warnings}
		p.Plan = planEach(len(given), func(i int) []PlannedResource { return c.planGiven(ctx, rgd, g, given[i], false) })
		return p, nil
	}
	gvk := rgdKind(current)
	p := &RGDPreview{Name: rgd.Name, Kind: gvk.Kind, warnings: warnings}
	stored := storedReader{dyn: c.dyn, metadata: c.metadata}
	if crd := stored.crd(ctx, g.CRD.Name); crd != nil {
		p.SchemaChanges = graph.SchemaChanges(crd, g.CRD)
		p.PresentationChanges = graph.PresentationChanges(crd, g.CRD)
		p.Held = g.BreakageWarning(rgd, crd, stored.holdsInstances(ctx, crd)) != ""
	}
	var instances []unstructured.Unstructured
	err = c.withMapping(gvk.Kind+"."+gvk.Version+"."+gvk.Group, func(m *meta.RESTMapping) error {
		ns := c.namespace
		switch {
		case m.Scope.Name() != meta.RESTScopeNameNamespace:
			ns = ""
		case allNamespaces:
			ns, p.where = metav1.NamespaceAll, "every namespace"
		default:
			p.where = namespacesPhrase(ns, given)
		}
		var err error
		instances, err = listInChunks(ctx, c.resourceIn(m, ns), metav1.ListOptions{}, defaultChunkSize)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the instances of ResourceGraphDefinition %s: %w", rgd.Name, err)
	}
	// The stored instances, and those given in their place or beside them,
	// in the order of their names.
	type subject struct {
		obj   *unstructured.Unstructured
		given bool
	}
	var subjects []subject
	for i := range instances {
		stored := &instances[i]
		if stored.GetDeletionTimestamp() != nil {
			continue // kro-agent deletes its resources whatever the graph
		}
		if !slices.ContainsFunc(given, func(u *unstructured.Unstructured) bool { return sameObject(u, stored) }) {
			subjects = append(subjects, subject{obj: stored})
		}
	}
	for _, u := range given {
		subjects = append(subjects, subject{obj: u, given: true})
	}
	slices.SortStableFunc(subjects, func(a, b subject) int {
		return strings.Compare(a.obj.GetNamespace()+"/"+a.obj.GetName(), b.obj.GetNamespace()+"/"+b.obj.GetName())
	})
	p.Instances = len(subjects)
	p.Plan = planEach(len(subjects), func(i int) []PlannedResource {
		if subjects[i].given {
			return c.planGiven(ctx, rgd, g, subjects[i].obj, true)
		}
		return c.planChanged(ctx, rgd, g, gvk, subjects[i].obj)
	})
	return p, nil
}

// planEach plans n instances with plan, a few at a time, since each waits
// mostly on the API server's dry runs; the plans are joined in the order
// of the instances. It is [] (in JSON too) for none.
func planEach(n int, plan func(i int) []PlannedResource) []PlannedResource {
	plans := make([][]PlannedResource, n)
	sem := make(chan struct{}, planWorkers)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			plans[i] = plan(i)
		}()
	}
	wg.Wait()
	return append([]PlannedResource{}, slices.Concat(plans...)...)
}

// sameObject reports whether a and b name the same object of one kind.
func sameObject(a, b *unstructured.Unstructured) bool {
	return a.GetName() != "" && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

// namespacesPhrase names the namespaces a preview's instances are in: ns,
// where they were listed, and those of the instances given, which a file
// may put elsewhere.
func namespacesPhrase(ns string, given []*unstructured.Unstructured) string {
	namespaces := []string{ns}
	for _, u := range given {
		if !slices.Contains(namespaces, u.GetNamespace()) {
			namespaces = append(namespaces, u.GetNamespace())
		}
	}
	if len(namespaces) == 1 {
		return "namespace " + ns
	}
	slices.Sort(namespaces)
	last := len(namespaces) - 1
	return "namespaces " + strings.Join(namespaces[:last], ", ") + " and " + namespaces[last]
}

// inNamespaces puts each of the instances given into its namespace as
// kubectl apply would: none for a cluster-scoped kind, the current one
// where the file names none.
func (c *cluster) inNamespaces(g *graph.Graph, given []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(given))
	for i, u := range given {
		out[i] = u.DeepCopy()
		switch {
		case !g.Namespaced:
			out[i].SetNamespace("")
		case u.GetNamespace() == "":
			out[i].SetNamespace(c.namespace)
		}
	}
	return out
}

// planGiven plans inst, an instance given beside the RGD rgd (compiled as
// g), as if both were applied: defaulted and validated under g's schema as
// the API server would do once it serves it (which it may not yet: served
// is false for a new RGD), and in place of the stored instance of its
// name, if there is one.
func (c *cluster) planGiven(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph, inst *unstructured.Unstructured, served bool) []PlannedResource {
	inst = inst.DeepCopy()
	generateName := ""
	if inst.GetName() == "" {
		generateName = inst.GetGenerateName() // which Admit names it from
	}
	one := func(action, reason string) []PlannedResource {
		return []PlannedResource{instanceEntry(g.Instance.Kind, inst, action, reason, generateName)}
	}
	errs, err := offline.Admit(ctx, g.CRD, inst)
	switch {
	case err != nil:
		return one(ActionUnknown, err.Error())
	case len(errs) > 0:
		return one(ActionInvalid, "the instance itself is refused: "+refusal.Readable(apierrors.NewInvalid(g.Instance.GroupKind(), inst.GetName(), errs)).Error())
	}
	// The stored instance of its name, whose UID it keeps; a new one gets
	// one as the API server would give it.
	var live *unstructured.Unstructured
	if served && generateName == "" {
		ri := c.dyn.Resource(g.Instance.GroupVersion().WithResource(g.Resource))
		if g.Namespaced {
			live, err = ri.Namespace(inst.GetNamespace()).Get(ctx, inst.GetName(), metav1.GetOptions{})
		} else {
			live, err = ri.Get(ctx, inst.GetName(), metav1.GetOptions{})
		}
		if err != nil {
			live = nil
		}
	}
	if live != nil {
		inst.SetUID(live.GetUID())
	} else {
		inst.SetUID(uuid.NewUUID())
	}
	planned, err := c.plan(ctx, planSubject{rgd: rgd, graph: g, gvk: g.Instance, instance: inst, live: live, generateName: generateName})
	if err != nil {
		return one(ActionUnknown, err.Error())
	}
	return planned
}

// admitAndCompile is obj as the API server admits it in a dry run (an
// update of current, or a create when current is nil), compiled.
func (c *cluster) admitAndCompile(ctx context.Context, obj *unstructured.Unstructured, current *v1alpha1.ResourceGraphDefinition) (*v1alpha1.ResourceGraphDefinition, *graph.Graph, error) {
	admitted, err := c.admitRGD(ctx, obj, current)
	if err != nil {
		return nil, nil, err
	}
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(admitted.Object, rgd); err != nil {
		return nil, nil, fmt.Errorf("reading ResourceGraphDefinition %s as admitted: %w", obj.GetName(), err)
	}
	// The webhook validated it; a cluster without it has not.
	g, err := graph.Compile(rgd, graph.Options{Resolver: c.resolver, ValidateCRD: offline.Validate})
	if err != nil {
		return nil, nil, fmt.Errorf("ResourceGraphDefinition %s is invalid:\n%w", rgd.Name, err)
	}
	return rgd, g, nil
}

// admitRGD sends obj through the API server's defaulting and admission as
// a dry run, which stores nothing: an update of current, or the create of
// a new RGD when current is nil. A denial is the error; warnings are
// printed as kubectl prints them.
func (c *cluster) admitRGD(ctx context.Context, obj *unstructured.Unstructured, current *v1alpha1.ResourceGraphDefinition) (*unstructured.Unstructured, error) {
	ri := c.dyn.Resource(rgdGVR)
	if current == nil {
		obj.SetResourceVersion("")
		admitted, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "kubectl-kro", FieldValidation: metav1.FieldValidationStrict})
		if err != nil {
			return nil, fmt.Errorf("ResourceGraphDefinition %s is refused: %w", obj.GetName(), err)
		}
		return admitted, nil
	}
	obj.SetResourceVersion(current.ResourceVersion)
	admitted, err := ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "kubectl-kro", FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		return nil, fmt.Errorf("the change to ResourceGraphDefinition %s is refused: %w", obj.GetName(), err)
	}
	return admitted, nil
}

// planWorkers is how many instances a preview of an RGD change plans at
// once.
const planWorkers = 4

// planChanged plans live, an instance of the RGD rgd changes, with g, the
// new graph. An instance that cannot be planned (its workload cluster
// unreachable) says so in its one entry, and does not hide the others'
// plans.
func (c *cluster) planChanged(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph, gvk schema.GroupVersionKind, live *unstructured.Unstructured) []PlannedResource {
	// The new schema's defaults are filled in as the agent fills them in
	// (resolve.NewScope), as the API server does on read once the CRD
	// has them.
	planned, err := c.plan(ctx, planSubject{rgd: rgd, graph: g, gvk: gvk, instance: live, live: live})
	if err != nil {
		return []PlannedResource{instanceEntry(gvk.Kind, live, ActionUnknown, err.Error(), "")}
	}
	return planned
}

// instanceEntry is the one entry of an instance's plan that could not be
// made: what happens to the instance itself, and why.
func instanceEntry(kind string, inst *unstructured.Unstructured, action, reason, generateName string) PlannedResource {
	return PlannedResource{
		Instance: instanceName(kind, inst), GenerateName: generateName,
		Kind: kind, Name: inst.GetName(), Namespace: inst.GetNamespace(), Action: action, Reason: reason,
	}
}

// describe is what a preview says after the plans: its summary, then
// each change to the kind's schema, and to how kubectl shows it.
func (p *RGDPreview) describe() string {
	s := p.summary()
	if len(p.SchemaChanges) > 0 {
		s += fmt.Sprintf("\nThe schema of %s changes:", p.Kind)
		for _, c := range p.SchemaChanges {
			s += "\n  " + c.Description
			if c.Breaking {
				s += " (breaking)"
			}
		}
	}
	if len(p.PresentationChanges) > 0 {
		s += fmt.Sprintf("\nHow kubectl names and prints %s changes:", p.Kind)
		for _, c := range p.PresentationChanges {
			s += "\n  " + c
		}
	}
	return s
}

// summary is the line of a preview that says how many instances the change
// touches, and how.
func (p *RGDPreview) summary() string {
	where := ""
	if p.where != "" {
		where = " in " + p.where
	}
	head := "ResourceGraphDefinition " + p.Name
	switch {
	case p.NewCRD != "" && p.Instances == 0:
		return fmt.Sprintf("%s is new: applying it creates CustomResourceDefinition %s, serving %s %s; it has no instance to preview yet (give instances of it with -f too)", head, p.NewCRD, p.ServedAs, p.Kind)
	case p.NewCRD != "":
		head = fmt.Sprintf("%s is new (applying it creates CustomResourceDefinition %s, serving %s %s)", head, p.NewCRD, p.ServedAs, p.Kind)
		where = " given"
	case p.Instances == 0:
		return fmt.Sprintf("%s: no instance of %s%s to preview", head, p.Kind, where)
	}
	actions := map[string]int{}
	changed := map[string]bool{}
	for _, r := range p.Plan {
		actions[r.Action]++
		if r.Action != ActionUnchanged && r.Action != ActionSkipped {
			changed[r.Instance] = true
		}
	}
	var counts []string
	for _, a := range []string{ActionCreate, ActionUpdate, ActionDelete, ActionPending, ActionInvalid, ActionUnknown} {
		if actions[a] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", actions[a], a))
		}
	}
	s := fmt.Sprintf("%s: %s of %s%s, %d with changes", head, plural(p.Instances, "instance"), p.Kind, where, len(changed))
	if len(counts) > 0 {
		s += " (" + strings.Join(counts, ", ") + ")"
	}
	if p.Held {
		s += fmt.Sprintf("; kro-agent does not apply this change, which breaks stored instances, without the annotation %s: \"true\": the plan is what it would do with it", v1alpha1.AnnotationAllowBreakingChanges)
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
