package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// Actions a dry run predicts for a resource.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionUnchanged = "unchanged"
	ActionPending   = "pending"
	ActionSkipped   = "skipped"
	ActionInvalid   = "invalid"
	// ActionDelete is an object of the instance the graph no longer
	// produces, which kro-agent prunes.
	ActionDelete = "delete"
	// ActionUnknown is what the plan cannot tell: objects of a kind the
	// user may not list.
	ActionUnknown = "unknown"
)

// PlannedResource is what a dry run predicts for one object.
type PlannedResource struct {
	// Instance is the instance the object belongs to, "Kind
	// namespace/name": a file may hold several.
	Instance  string `json:"instance"`
	NodeID    string `json:"nodeID"`
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Action    string `json:"action"`
	// Cluster is the registered workload cluster the object is planned
	// on, "" for the current cluster.
	Cluster string `json:"cluster,omitempty"`
	// GenerateName is the instance's metadata.generateName when the API
	// server named it for the preview: a create gets another name, and
	// names rendered from it change with it.
	GenerateName string         `json:"generateName,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Diff         string         `json:"diff,omitempty"`
	Object       map[string]any `json:"object,omitempty"`

	// deleting marks an object on its way out, which kro-agent waits for
	// to be gone before it creates it again; unread one the user may not
	// read, which the plan could not observe.
	deleting, unread bool
	// notReady says why the object, as kro-agent would find it after its
	// apply, is not ready ("readyWhen ${...} is false; it read ..."); ""
	// when it is.
	notReady string
	// noNamespace marks an object the dry run refused for want of its
	// namespace, which a resource further on in the plan may create.
	noNamespace bool
}

type dryRunOptions struct {
	*Options
	files []string
	printFlags
	recursive, allNamespaces bool
	maxCollectionSize        int
}

func newDryRunCommand(parent *Options) *cobra.Command {
	o := &dryRunOptions{Options: parent}
	cmd := &cobra.Command{
		Use:   "dry-run -f FILE",
		Short: "Preview what kro-agent would do for an instance, or for a change to an RGD",
		Long: `dry-run renders every resource of an instance against its RGD from the cluster, in
topological order, as the agent would; values that wait on another resource's status, or
on a field the instance does not set, are shown as pending. Each rendered object is
validated with a server-side dry-run apply, and the result is compared with what exists
now; one your roles do not let you dry-run apply (kro-agent applies with its own) is
compared without that check, the template's fields laid over the live object. So is the
instance itself for a user who may read it and not write it: its fields are laid over the
stored one and checked against its kind's schema here, as a warning says. Nothing is
written. A file with several instances (YAML documents) gives the plan of
each. Objects of an existing instance that the graph would no longer produce are shown as
deleted: kro-agent prunes them. What a resource reads from another is rendered from that
one as kro-agent's apply would leave it; a resource not ready once applied says so, and
what depends on it says it waits for it, as kro-agent does. An existing instance whose
projected status would say something else, computed from its objects as kro-agent's apply
would leave them, is shown as updated, with the status diff.

Given a changed ResourceGraphDefinition instead, dry-run previews the change before it is
applied: every instance of that RGD in the namespace (every namespace with -A) is
defaulted under the new schema and planned with the new graph, as kro-agent would once the
change is admitted; the admission webhook's warnings go to standard error. What changes
in the kind's schema (fields added, removed, retyped, required; defaults and validation)
is listed, each breaking change marked, and so is what changes in how kubectl names and
prints the kind (short names, categories, printer columns). A new RGD is checked by a
dry-run create, and the CRD it would create is named. An RGD using the kind of another
given RGD that the cluster does not serve yet is checked as validate checks it, and its
objects of that kind against the schema the other generates.

Given RGDs and instances of their kinds together (files, or a directory, with -f), the
instances are planned with those RGDs as if all were applied together, whether the RGD
is new or changed: each instance is defaulted and validated under the kind's new schema
(with the API server's own code: the kind may not be served yet) and stands in for the
stored instance of its name, beside the RGD's other instances. Objects that are neither
RGDs nor instances of a kind an RGD serves (given, or in the cluster) have no plan, and
are named on standard error; an externalRef naming one reads it as given.

It exits 1 when an object is invalid: refused by the API server, or not renderable from
the instance's values.`,
		Example: `  kubectl kro dry-run -f examples/webapp/instance.yaml
  kubectl kro dry-run -f instance.yaml -o yaml
  kubectl kro dry-run -f rgd.yaml -A
  kubectl kro dry-run -f examples/webapp/        # a new RGD and an instance of it, before either is applied
  kubectl kro dry-run -f rgd.yaml -o json | jq -e 'all(.[]; .held | not)'   # in CI: fail on a change kro-agent would hold`,
		Args: filesOnly,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "file, directory or URL of the instances, or of the changed RGDs (and instances of them), to preview; - reads standard input")
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "R", false, "read the directories given with -f and all directories below them")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "with an RGD, preview its instances in every namespace")
	cmd.Flags().IntVar(&o.maxCollectionSize, "max-collection-size", resolve.DefaultMaxCollectionSize, "most items one forEach resource may expand to: give the agent's --max-collection-size when it runs with another")
	addOutputFlag(cmd, &o.printFlags, "yaml prints the rendered objects; json prints the plan (with RGDs, each RGD's preview: schema changes, whether kro-agent holds the change, and the plan)", "json", "yaml")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

const pendingMarker = "<pending: "

func (o *dryRunOptions) run(ctx context.Context) error {
	docs, err := o.read()
	if err != nil {
		return err
	}
	rgds := slices.DeleteFunc(slices.Clone(docs), func(u *unstructured.Unstructured) bool { return !isRGD(u) })
	for _, u := range docs {
		if u.GetName() == "" && u.GetGenerateName() == "" {
			return fmt.Errorf("%s has neither metadata.name nor metadata.generateName: give it a name", u.GetKind())
		}
	}
	if o.maxCollectionSize < 1 {
		return fmt.Errorf("--max-collection-size must be at least 1, not %d", o.maxCollectionSize)
	}
	if len(rgds) == 0 && o.allNamespaces {
		return fmt.Errorf("-A previews the instances of an RGD in every namespace; %s holds instances, previewed in the namespaces they name", o.source())
	}
	c, err := o.cluster()
	if err != nil {
		return err
	}
	c.maxCollectionSize = o.maxCollectionSize
	served, err := c.listRGDs(ctx)
	if apierrors.IsForbidden(err) {
		// An instance's author with roles in a namespace alone: the RGDs
		// are cluster-scoped, and what an instance makes is theirs.
		return fmt.Errorf("listing the ResourceGraphDefinitions the cluster serves: %w\ndry-run renders an instance with its RGD's templates: ask your cluster's admins to let you read resourcegraphdefinitions.kro.run (a role in a namespace cannot grant it; %s), or check the instance against its schema alone with a server-side dry run (kubectl apply --dry-run=server -f FILE)", err, rgdViewerHint)
	}
	if err != nil {
		return fmt.Errorf("listing the ResourceGraphDefinitions the cluster serves: %w", err)
	}
	instances, err := o.instancesAmong(c, slices.DeleteFunc(docs, isRGD), rgds, served)
	if err != nil {
		return err
	}
	if len(rgds) > 0 {
		return o.previewRGDs(ctx, c, rgds, instances)
	}
	var plan []PlannedResource
	for _, inst := range instances {
		p, warning, err := c.dryRun(ctx, inst, served)
		if warning != "" {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: %s\n", warning)
		}
		if err != nil && len(instances) > 1 {
			err = fmt.Errorf("%s %s: %w", inst.GetKind(), displayName(inst), err)
		}
		if err != nil {
			return err
		}
		plan = append(plan, p...)
	}
	if err := o.print(plan, false); err != nil {
		return err
	}
	for _, p := range plan {
		if p.Action == ActionInvalid {
			return ErrInvalid
		}
	}
	return nil
}

// read reads the objects of every file -f names, directories expanded as
// kubectl apply reads them.
func (o *dryRunOptions) read() ([]*unstructured.Unstructured, error) {
	files, err := expandDirectories(o.files, o.recursive)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		hint := ""
		if !o.recursive {
			hint = " (-R reads the directories below a directory too)"
		}
		return nil, fmt.Errorf("%s: no manifest (.yaml, .yml or .json) found%s", o.source(), hint)
	}
	var objs []*unstructured.Unstructured
	for _, file := range files {
		raw, err := readInput(file, o.Streams.In)
		if err != nil {
			return nil, err
		}
		docs, err := documents(file, raw)
		if err != nil {
			return nil, err
		}
		objs = append(objs, docs...)
	}
	return objs, nil
}

// source names what -f gave, for messages.
func (o *dryRunOptions) source() string {
	return strings.Join(o.files, ", ")
}

// instancesAmong keeps the objects that are instances of a kind an RGD
// serves, one of rgds or one of served, the cluster's. The others (the ConfigMap an
// externalRef reads, beside the RGD in its directory) become c's given
// objects, each named on standard error; when no instance or RGD is left,
// the first is the error.
func (o *dryRunOptions) instancesAmong(c *cluster, objs, rgds []*unstructured.Unstructured, served []v1alpha1.ResourceGraphDefinition) ([]*unstructured.Unstructured, error) {
	known := map[schema.GroupVersionKind]bool{}
	for _, u := range rgds {
		known[givenKind(u)] = true
	}
	for i := range served {
		known[rgdKind(&served[i])] = true
	}
	var kept []*unstructured.Unstructured
	for _, u := range objs {
		if known[u.GroupVersionKind()] {
			kept = append(kept, u)
		} else {
			c.given = append(c.given, u)
		}
	}
	for i, u := range c.given {
		gvk := u.GroupVersionKind()
		if len(kept) == 0 && len(rgds) == 0 {
			return nil, fmt.Errorf("%s %s: no ResourceGraphDefinition serves %s %s%s", u.GetKind(), displayName(u), gvk.GroupVersion(), gvk.Kind, servedAlike(served, gvk))
		}
		if i == 0 {
			fmt.Fprintln(o.Streams.ErrOut, "Warning: dry-run plans no object for what is neither an RGD nor an instance of one, given or in the cluster; an externalRef naming one reads it as given:")
		}
		fmt.Fprintf(o.Streams.ErrOut, "  %s %s\n", u.GetKind(), cache.MetaObjectToName(u))
	}
	return kept, nil
}

// givenKind is the kind an RGD read from a file serves, before the API
// server defaults it.
func givenKind(u *unstructured.Unstructured) schema.GroupVersionKind {
	s := &v1alpha1.Schema{}
	s.APIVersion, _, _ = unstructured.NestedString(u.Object, "spec", "schema", "apiVersion")
	s.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "schema", "kind")
	s.Group, _, _ = unstructured.NestedString(u.Object, "spec", "schema", "group")
	return s.GroupVersionKind()
}

// previewRGDs previews changes to RGDs: the plan of each one's instances
// (those given among instances in place of the stored ones of their
// names) and what changes in its kind's schema. -o json prints the
// previews, -o yaml the objects of their plans.
func (o *dryRunOptions) previewRGDs(ctx context.Context, c *cluster, rgds, instances []*unstructured.Unstructured) error {
	given := map[schema.GroupVersionKind][]*unstructured.Unstructured{}
	for _, inst := range instances {
		given[inst.GroupVersionKind()] = append(given[inst.GroupVersionKind()], inst)
	}
	for _, inst := range instances {
		gvk := inst.GroupVersionKind()
		if !slices.ContainsFunc(rgds, func(u *unstructured.Unstructured) bool { return givenKind(u) == gvk }) {
			return fmt.Errorf("%s %s is an instance of an RGD in the cluster, none of those given: with RGDs, dry-run plans the instances of their kinds; preview it apart (kubectl kro dry-run -f FILE)", inst.GetKind(), displayName(inst))
		}
	}
	offline := c.compileGiven(rgds)
	previews := make([]*RGDPreview, 0, len(rgds))
	var plan []PlannedResource
	for _, u := range rgds {
		p, err := c.dryRunRGD(ctx, u, o.allNamespaces, given[givenKind(u)], offline[u.GetName()])
		if err != nil {
			return err
		}
		for _, w := range p.warnings {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: %s\n", w)
		}
		previews = append(previews, p)
		plan = append(plan, p.Plan...)
	}
	switch o.output {
	case "":
		printPlan(o.Streams.Out, plan, true)
		for _, p := range previews {
			fmt.Fprintln(o.Streams.Out, p.describe())
		}
	case "yaml":
		if err := o.print(plan, true); err != nil {
			return err
		}
	default: // json, or a template over it
		if err := o.printObject(o.Streams.Out, previews); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(plan, func(p PlannedResource) bool { return p.Action == ActionInvalid }) {
		return ErrInvalid
	}
	return nil
}

func isRGD(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().GroupKind() == v1alpha1.ResourceGraphDefinitionGroupKind
}

// print prints the plan; headed heads each instance's part with its name
// even when it is the only one.
func (o *dryRunOptions) print(plan []PlannedResource, headed bool) error {
	switch o.output {
	case "yaml":
		for _, p := range plan {
			if p.Object == nil {
				continue
			}
			b, err := yaml.Marshal(p.Object)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Streams.Out, "---\n# %s: %s (%s)\n%s", p.Instance, p.NodeID, p.Action, b)
		}
		return nil
	case "":
		printPlan(o.Streams.Out, plan, headed)
		return nil
	default: // json, or a template over it
		return o.printObject(o.Streams.Out, plan)
	}
}

func printPlan(w io.Writer, plan []PlannedResource, headed bool) {
	// Each instance's plan is headed by its name when there are several.
	several := headed || slices.ContainsFunc(plan, func(p PlannedResource) bool { return p.Instance != plan[0].Instance })
	for i, p := range plan {
		first := i == 0 || p.Instance != plan[i-1].Instance
		switch {
		case first && p.GenerateName != "":
			fmt.Fprintf(w, "%s (named from generateName %q for this preview; a create gets another name):\n", p.Instance, p.GenerateName)
		case first && several:
			fmt.Fprintf(w, "%s:\n", p.Instance)
		}
		var line []string
		if p.NodeID != "" {
			line = append(line, p.NodeID+":")
		}
		if p.Kind != "" {
			line = append(line, p.Kind)
		}
		if p.Name != "" {
			line = append(line, cache.NewObjectName(p.Namespace, p.Name).String())
		}
		if p.Cluster != "" {
			line = append(line, "in cluster "+p.Cluster)
		}
		fmt.Fprintf(w, "%s %s\n", strings.Join(line, " "), strings.ToUpper(p.Action))
		if p.Reason != "" {
			fmt.Fprintf(w, "  %s\n", oneLine(p.Reason))
		}
		if p.Diff != "" {
			for _, line := range strings.Split(strings.TrimRight(p.Diff, "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	}
}

// displayName names an instance of a file in messages: by its name, or by
// the prefix the API server would name it from.
func displayName(inst *unstructured.Unstructured) string {
	if inst.GetName() == "" && inst.GetGenerateName() != "" {
		return inst.GetGenerateName() + "* (generateName)"
	}
	return inst.GetName()
}
