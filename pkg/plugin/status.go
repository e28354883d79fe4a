package plugin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// InstanceStatusRow is one line of `kubectl kro status`.
type InstanceStatusRow struct {
	Namespace string `json:"namespace,omitempty"`
	// APIVersion and Kind are the instance's, as in its manifest.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	State      string `json:"state"`
	Ready      string `json:"ready"`
	Reason     string `json:"reason,omitempty"`
	// Message is the Ready condition's message when it is not True.
	Message string `json:"message,omitempty"`
	// RGD is the ResourceGraphDefinition the instance belongs to, by the
	// label kro-agent sets on it.
	RGD string `json:"rgd,omitempty"`
	// Cluster is the workload cluster the instance is placed on, "" when
	// its resources are in this cluster.
	Cluster string       `json:"cluster,omitempty"`
	Created *metav1.Time `json:"created,omitempty"`
	// Labels are the instance's, for -L and --show-labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// reasonStale is the REASON of an instance whose Ready condition describes
// a generation before its own.
const reasonStale = "Stale"

type statusOptions struct {
	*Options
	printFlags
	color         string
	allNamespaces bool
	noHeaders     bool
	// selector is a label query the listed instances must match.
	selector string
	// notReady keeps the instances whose Ready condition is not True.
	notReady bool
	// chunkSize is how many instances one LIST request returns at most.
	chunkSize int64
	watch     bool
	interval  time.Duration
	// file names the one instance (or RGD) to show, as kubectl get -f.
	file string
	// labelColumns are labels shown as columns of the table, and
	// showLabels shows every label, as kubectl get -L and --show-labels.
	labelColumns []string
	showLabels   bool
	// sortBy orders the instances by the value a JSONPath gives of each
	// one's -o json document, as kubectl get --sort-by; sortKey is it
	// parsed.
	sortBy  string
	sortKey *jsonpath.JSONPath
	// toldUnread is set once the user has been told that the RGDs could
	// not be read, and what is listed instead: once, not at every redraw.
	toldUnread bool
}

func newStatusCommand(parent *Options) *cobra.Command {
	o := &statusOptions{Options: parent}
	cmd := &cobra.Command{
		Use:   "status [KIND [NAME] | KIND/NAME | -f FILE]",
		Short: "One line per instance: state, Ready, reason and age",
		Long: `status lists instances with their state, Ready condition, reason and age: of every kind
an RGD generated when no KIND is given (also of RGDs that are not Active, whose instances
are the ones to look at), of one kind, of one RGD (rgd NAME), or one instance; --selector
keeps the instances whose labels match, --not-ready those whose Ready condition is not
True (False, Unknown, or not reported yet: what to look at in a fleet) or is stale (REASON
Stale: it describes a generation before the instance's); -o wide adds the RGD and the Ready condition's
message; -L adds a column for each label named, --show-labels one of every label, and
--sort-by orders the instances by a field of their -o json, as kubectl get does; -o name
prints them as kubectl get -o name does
(webapp.kro.run/demo), for kubectl to take, and with --watch each as it appears. --watch
redraws the table whenever it changes (with -o json|yaml, prints the list again): it
watches the instances (and the RGDs) by their metadata and reads them again only then.`,
		Example: `  kubectl kro status -A
  kubectl kro status webapp
  kubectl kro status rgd webapp
  kubectl kro status webapp -l team=payments -A
  kubectl kro status rgd webapp -o name | xargs kubectl describe
  kubectl kro status -A --not-ready -o wide
  kubectl kro status -A --sort-by=.created -L team
  kubectl kro status --not-ready -o name | xargs -n1 kubectl kro why-not-ready   # the root cause of each
  kubectl kro status webapp demo --watch
  kubectl kro status -f examples/webapp/instance.yaml
  kubectl kro status -A -o jsonpath='{range [*]}{.namespace}/{.name}{"\t"}{.state}{"\n"}{end}'`,
		Args: func(_ *cobra.Command, args []string) error {
			if o.file != "" {
				if o.allNamespaces {
					return fmt.Errorf("-f %s names one instance, in its namespace; -A lists those of every namespace: give one or the other", o.file)
				}
				return notBoth(args, o.file)
			}
			_, err := statusArgs(args)
			return err
		},
		ValidArgsFunction: completeInstances(parent, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := statusArgs(args)
			if err != nil {
				return err
			}
			if o.sortBy != "" {
				if o.sortKey, err = parseSortBy(o.sortBy); err != nil {
					return err
				}
			}
			for _, key := range o.labelColumns {
				if errs := validation.IsQualifiedName(key); len(errs) > 0 {
					return fmt.Errorf("--label-columns %q: not a label name: %s", key, strings.Join(errs, "; "))
				}
			}
			if o.file != "" {
				kind, name, err := o.namedInFile(cmd, o.file)
				if err != nil {
					return err
				}
				args = []string{kind, name}
			}
			if _, err := labels.Parse(o.selector); err != nil {
				return fmt.Errorf("--selector %q: %w", o.selector, err)
			}
			if o.chunkSize < 0 {
				return fmt.Errorf("--chunk-size %d: must be 0 (no chunks) or more", o.chunkSize)
			}
			return o.run(cmd.Context(), args)
		},
	}
	addOutputFlag(cmd, &o.printFlags, "", "json", "yaml", "wide", "name")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list instances in every namespace")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print the table without its header line, and on standard output nothing when there is no instance")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label query the instances must match, as kubectl get takes (-l team=payments, -l 'env in (prod,staging)')")
	cmd.Flags().BoolVar(&o.notReady, "not-ready", false, "list only the instances whose Ready condition is not True, or is stale")
	cmd.Flags().StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "labels to show as columns of the table, each headed by its name's last part in capitals, as kubectl get -L (-L team,app.kubernetes.io/part-of)")
	cmd.Flags().BoolVar(&o.showLabels, "show-labels", false, "show every label of each instance in the table's last column, as kubectl get --show-labels")
	cmd.Flags().StringVar(&o.sortBy, "sort-by", "", "order the instances by a field of each one's -o json document, a JSONPath as kubectl get --sort-by takes (--sort-by=.created, --sort-by=.state, --sort-by=.labels.team)")
	cmd.Flags().Int64Var(&o.chunkSize, "chunk-size", defaultChunkSize, "list instances in chunks of this many, as kubectl get does, rather than all at once; 0 lists each kind in one request")
	addNamingFileFlag(cmd, &o.file, "the instance or RGD")
	addWatchFlags(cmd, &o.watch, &o.interval)
	addColorFlag(cmd, &o.color)
	return cmd
}

// statusArgs reads nothing, a KIND, or one instance (KIND NAME or
// KIND/NAME), the latter always returned as KIND NAME.
func statusArgs(args []string) ([]string, error) {
	if len(args) == 0 || len(args) == 1 && !strings.Contains(args[0], "/") {
		return args, nil
	}
	kind, name, err := instanceArgs(args)
	if err != nil {
		return nil, err
	}
	return []string{kind, name}, nil
}

func (o *statusOptions) run(ctx context.Context, args []string) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	if !o.watch {
		rows, lists, err := o.collect(ctx, c, args)
		if err != nil {
			return err
		}
		if len(rows) == 0 && o.table() {
			// Told on standard error, as kubectl get tells it: a
			// pipeline reading the table reads no line for no instance.
			fmt.Fprintln(o.Streams.ErrOut, o.noneFound(lists))
			return nil
		}
		return o.print(rows, lists)
	}
	return o.watchStatus(ctx, c, args)
}

// table is whether the rows are printed as a table, not in an -o format.
func (o *statusOptions) table() bool {
	return o.output == "" || o.output == "wide"
}

// print writes rows as the table, or in the -o format; lists are those
// they were read from. A table of no instance says so, as the frame
// --watch draws, unless --no-headers asks for rows alone.
func (o *statusOptions) print(rows []InstanceStatusRow, lists []watchedList) error {
	switch o.output {
	case "", "wide":
	case "name":
		printNames(o.Streams.Out, rows)
		return nil
	default:
		return o.printObject(o.Streams.Out, rows)
	}
	if len(rows) == 0 {
		if !o.noHeaders {
			fmt.Fprintln(o.Streams.Out, o.noneFound(lists))
		}
		return nil
	}
	printStatus(o.Streams.Out, rows, o.columns(), newPalette(o.Streams.Out, o.color), time.Now())
	return nil
}

// noneFound says that no instance was found in lists, and in which
// namespace when they were looked for in one: the -n or -A forgotten is
// the usual reason.
func (o *statusOptions) noneFound(lists []watchedList) string {
	what := "No instances found"
	if o.notReady {
		what += " that are not Ready"
	}
	// A list of a cluster-scoped kind, or of every namespace, is in none.
	if i := slices.IndexFunc(lists, func(l watchedList) bool { return l.namespace != "" }); i >= 0 {
		return fmt.Sprintf("%s in namespace %s.", what, lists[i].namespace)
	}
	return what + "."
}

// watchStatus prints the instances, and again each time what it shows
// changes, until ctx ends.
func (o *statusOptions) watchStatus(ctx context.Context, c *cluster, args []string) error {
	listed := map[string]bool{}
	return redrawOnChange(ctx, newListWatch(c.metadata, o.Streams.ErrOut), o.Streams.Out, o.output, o.interval, func() (*watchView, error) {
		rows, lists, err := o.collect(ctx, c, args)
		if err != nil {
			return nil, err
		}
		if o.output == "name" {
			return o.newNames(rows, lists, listed), nil
		}
		shown := o.columns()
		if o.output != "" && o.output != "wide" {
			shown.showLabels = true // -o json and the like print every label
		}
		return &watchView{key: statusKey(rows, shown), lists: lists, draw: func() error { return o.print(rows, lists) }}, nil
	})
}

// collect reads the table's rows, and the lists it read them from, for
// --watch to follow.
func (o *statusOptions) collect(ctx context.Context, c *cluster, args []string) ([]InstanceStatusRow, []watchedList, error) {
	ns := c.namespace
	if o.allNamespaces {
		ns = metav1.NamespaceAll
	}
	kinds, asked, err := c.statusKinds(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	if asked.unread != nil && !o.toldUnread {
		o.toldUnread = true
		fmt.Fprintf(o.Streams.ErrOut, "Warning: %v\nstatus lists ResourceGraphDefinitions to find the kinds they serve, and they are cluster-scoped; listed instead are the instances of the kinds of group %s that you may list, where RGDs put their kinds unless they name another group (kubectl kro status KIND lists the instances of one; reading RGDs lists those of every kind: %s)\n",
			asked.unread, v1alpha1.GroupVersion.Group, rgdViewerHint)
	}
	var lists []watchedList
	for _, read := range []*watchedList{asked.rgds, asked.crds} {
		if read != nil {
			lists = append(lists, *read)
		}
	}
	if asked.instance != "" && o.selector != "" {
		return nil, nil, fmt.Errorf("an instance's NAME and --selector cannot be given together: the selector picks the instances of %s", args[0])
	}
	// Empty, not nil: -o json prints [] when there is no instance.
	rows := []InstanceStatusRow{}
	listed := map[schema.GroupVersionResource]bool{}
	// unlisted are the kinds found by discovery that the user may not
	// list, and the first refusal: the answer when they may list none (-A,
	// with roles in namespaces alone).
	var unlisted []string
	var refused error
	for _, k := range kinds {
		var m *meta.RESTMapping
		var items []unstructured.Unstructured
		// byLabels: the RGDs cannot be read (nor the CRDs), and only
		// the objects labelled as instances are.
		byLabels := asked.unread != nil
		err := c.withMapping(k, func(mapping *meta.RESTMapping) error {
			m = mapping
			if asked.kind {
				// Asked for by name, a kind no RGD serves has no
				// instances; its objects would be listed as if they were.
				// Unless an RGD generated it and was deleted since: its
				// instances were released, and their conditions say so.
				_, err := c.rgdServing(ctx, mapping.GroupVersionKind)
				switch {
				case err == nil, c.generatedByRGD(ctx, mapping):
				case apierrors.IsForbidden(err):
					byLabels = true
				default:
					return err
				}
			}
			ri := c.resourceIn(mapping, ns)
			if asked.instance != "" {
				u, err := ri.Get(ctx, asked.instance, metav1.GetOptions{})
				if err != nil {
					return err
				}
				items = []unstructured.Unstructured{*u}
				return nil
			}
			items, err = listInChunks(ctx, ri, metav1.ListOptions{LabelSelector: o.selector}, o.chunkSize)
			if err == nil && byLabels {
				all := len(items)
				items = slices.DeleteFunc(items, func(u unstructured.Unstructured) bool { return !isInstance(&u) })
				if asked.kind && all > 0 && len(items) == 0 {
					return fmt.Errorf("no ResourceGraphDefinition serves %s, as far as can be told without reading them (you may not): none of the %d found is labelled as an instance", mapping.GroupVersionKind.Kind, all)
				}
			}
			return err
		})
		if err != nil {
			if asked.rgd != "" {
				return nil, nil, fmt.Errorf("ResourceGraphDefinition %s: %w", asked.rgd, err)
			}
			if asked.kind {
				// The KIND and NAME the user typed: what they may
				// have meant, when it is not found.
				name := asked.instance
				if o.allNamespaces {
					name = "" // not looked for in one namespace
				}
				return nil, nil, c.withHint(ctx, err, m, name)
			}
			if asked.unread != nil && apierrors.IsForbidden(err) {
				// Found by discovery, not asked for: another team's, say.
				if m != nil {
					k = m.Resource.GroupResource().String()
				}
				unlisted = append(unlisted, k)
				refused = cmp.Or(refused, err)
				continue
			}
			if m != nil {
				return nil, nil, err
			}
			continue // a kind the server does not serve (any more)
		}
		if listed[m.Resource] {
			continue // a released kind an RGD created again serves already
		}
		listed[m.Resource] = true
		list := watchedList{gvr: m.Resource, selector: o.selector, name: asked.instance, seen: seenOf(items)}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			list.namespace = ns
		}
		lists = append(lists, list)
		for i := range items {
			u := &items[i]
			state, _, _ := unstructured.NestedString(u.Object, "status", "state")
			row := InstanceStatusRow{Namespace: u.GetNamespace(), APIVersion: m.GroupVersionKind.GroupVersion().String(), Kind: m.GroupVersionKind.Kind, Name: u.GetName(), State: orDash(state), Ready: "Unknown", Created: ptrTime(u.GetCreationTimestamp())}
			if p, ok := agentv1.PlacementOf(u); ok {
				row.Cluster = p.Cluster
			}
			row.Labels = u.GetLabels()
			row.RGD = row.Labels[v1alpha1.LabelRGDName]
			if c := findCondition(u, v1alpha1.ConditionReady); c != nil {
				row.Ready = string(c.Status)
				if c.Status != metav1.ConditionTrue {
					row.Reason, row.Message = c.Reason, c.Message
				}
			}
			if stale := staleConditions(u); stale != "" {
				// Ready says what was so before the latest change.
				row.Reason, row.Message = reasonStale, stale+": kro-agent has not processed the latest change"
			}
			if o.notReady && row.Ready == string(metav1.ConditionTrue) && row.Reason != reasonStale {
				continue
			}
			rows = append(rows, row)
		}
	}
	if len(listed) == 0 && refused != nil {
		return nil, nil, fmt.Errorf("you may list the instances of none of the kinds of group %s there are (%s): %w", v1alpha1.GroupVersion.Group, strings.Join(unlisted, ", "), refused)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		return a.Namespace+"/"+a.Kind+"/"+a.Name < b.Namespace+"/"+b.Kind+"/"+b.Name
	})
	if o.sortKey != nil {
		sortRowsBy(rows, o.sortKey)
	}
	return rows, lists, nil
}

// parseSortBy parses a --sort-by JSONPath; as kubectl takes it, the braces
// may be left out (.created stands for {.created}).
func parseSortBy(expr string) (*jsonpath.JSONPath, error) {
	if !strings.HasPrefix(expr, "{") {
		expr = "{" + expr + "}"
	}
	j := jsonpath.New("sort-by").AllowMissingKeys(true)
	if err := j.Parse(expr); err != nil {
		return nil, fmt.Errorf("--sort-by %q: %w", expr, err)
	}
	return j, nil
}

// sortRowsBy orders rows, stably, by the value key gives of each row's -o
// json document, as text (every field of a row is text; its times are
// RFC 3339, which sorts as text); a row without one comes first, as in
// kubectl get.
func sortRowsBy(rows []InstanceStatusRow, key *jsonpath.JSONPath) {
	type keyed struct {
		row   InstanceStatusRow
		value string
		found bool
	}
	keyedRows := make([]keyed, len(rows))
	for i, r := range rows {
		keyedRows[i].row = r
		doc, err := jsonDocument(r)
		if err != nil {
			continue
		}
		if found, err := key.FindResults(doc); err == nil && len(found) > 0 && len(found[0]) > 0 {
			keyedRows[i].value, keyedRows[i].found = fmt.Sprint(found[0][0].Interface()), true
		}
	}
	slices.SortStableFunc(keyedRows, func(a, b keyed) int {
		if a.found != b.found {
			if a.found {
				return 1
			}
			return -1
		}
		return strings.Compare(a.value, b.value)
	})
	for i := range keyedRows {
		rows[i] = keyedRows[i].row
	}
}

// releasedKinds are the kinds of RGDs deleted since they generated them:
// kro-agent leaves the CRD and the instances in place, released, and the
// instances' conditions say so. They are named by their CRDs (plural.group)
// and found by the labels kro-agent sets on the CRDs it generates; none
// where CRDs cannot be listed. crds is what was read of the CRDs, for
// --watch.
func (c *cluster) releasedKinds(ctx context.Context, rgds []v1alpha1.ResourceGraphDefinition) (released []string, crds *watchedList) {
	selector := v1alpha1.LabelOwned + "=true"
	list, err := c.metadata.Resource(kinds.CRDResource).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil
	}
	live := make(map[string]bool, len(rgds))
	for i := range rgds {
		live[string(rgds[i].UID)] = true
	}
	for _, crd := range list.Items {
		if id := crd.Labels[v1alpha1.LabelRGDID]; id != "" && !live[id] {
			released = append(released, crd.Name)
		}
	}
	return released, &watchedList{gvr: kinds.CRDResource, selector: selector, seen: seenOf(list.Items)}
}

// generatedByRGD tells whether the mapping's kind is served by a CRD an RGD
// generated (kro-agent labels those); false as well when the CRD cannot be
// read.
func (c *cluster) generatedByRGD(ctx context.Context, m *meta.RESTMapping) bool {
	crd, err := c.metadata.Resource(kinds.CRDResource).Get(ctx, m.Resource.GroupResource().String(), metav1.GetOptions{})
	return err == nil && crd.Labels[v1alpha1.LabelOwned] == "true" && crd.Labels[v1alpha1.LabelRGDName] != ""
}

// statusAsked is what status was asked for beyond the kinds to list.
type statusAsked struct {
	// kind: one kind, given by the user, whose errors are the answer.
	kind bool
	// instance: one instance of it.
	instance string
	// rgd: the instances of this RGD, given as rgd NAME.
	rgd string
	// rgds is what was read of RGDs to find the kinds, nil when a kind
	// was given: a change there can change the kinds.
	rgds *watchedList
	// crds is what was read of the CRDs RGDs generated, to find the kinds
	// of RGDs deleted since; nil when they were not read.
	crds *watchedList
	// unread is why the RGDs could not be listed, when the kinds are
	// those of kro.run's group found by discovery instead.
	unread error
}

// statusKinds are the kinds status lists for args: every kind an RGD
// generated for none or for "rgd" alone, the kind of RGD NAME for "rgd
// NAME", or the kind given.
func (c *cluster) statusKinds(ctx context.Context, args []string) ([]string, statusAsked, error) {
	if len(args) == 0 || len(args) == 1 && c.isRGDKind(args[0]) {
		rgds, err := c.listRGDs(ctx)
		if apierrors.IsForbidden(err) && len(args) == 0 {
			// An instance's author with roles in a namespace alone. The
			// kinds RGDs serve are in kro.run unless they name another
			// group: discovery, which everyone may read, lists those.
			if kinds := c.kindsOfGroup(v1alpha1.GroupVersion.Group); len(kinds) > 0 {
				return kinds, statusAsked{unread: err}, nil
			}
		}
		if apierrors.IsForbidden(err) {
			return nil, statusAsked{}, fmt.Errorf("%w\nstatus lists ResourceGraphDefinitions to find the kinds of instances there are, and they are cluster-scoped: name the kind (kubectl kro status KIND lists its instances, as far as you may list them)", err)
		}
		if err != nil {
			return nil, statusAsked{}, err
		}
		// Also the kinds of RGDs that are not Active: their instances
		// are the ones that need looking at (FAILED while the graph is
		// not accepted). A kind not served is skipped.
		var kinds []string
		for i := range rgds {
			if k := kindArg(&rgds[i]); k != "" {
				kinds = append(kinds, k)
			}
		}
		asked := statusAsked{rgds: &watchedList{gvr: rgdGVR, seen: seenOf(rgds)}}
		released, crds := c.releasedKinds(ctx, rgds)
		asked.crds = crds
		return append(kinds, released...), asked, nil
	}
	if c.isRGDKind(args[0]) {
		rgd, err := c.askedRGD(ctx, args[1])
		if err != nil {
			return nil, statusAsked{}, err
		}
		k := kindArg(rgd)
		if k == "" {
			return nil, statusAsked{}, fmt.Errorf("ResourceGraphDefinition %s has no spec.schema: it serves no kind", rgd.Name)
		}
		read := []v1alpha1.ResourceGraphDefinition{*rgd}
		return []string{k}, statusAsked{rgd: rgd.Name, rgds: &watchedList{gvr: rgdGVR, name: rgd.Name, seen: seenOf(read)}}, nil
	}
	asked := statusAsked{kind: true}
	if len(args) == 2 {
		asked.instance = args[1]
	}
	return args[:1], asked, nil
}

// kindsOfGroup are the resources the cluster serves in group, but RGDs
// themselves, as KIND arguments (plural.version.group), from discovery.
func (c *cluster) kindsOfGroup(group string) []string {
	groups, err := c.discovery.ServerGroups()
	if err != nil {
		return nil
	}
	var args []string
	seen := map[string]bool{}
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		// Each version: an RGD's kind is served in its own.
		kinds.EachResource(c.discovery, g, func(v metav1.GroupVersionForDiscovery, r metav1.APIResource) {
			if r.Name == rgdGVR.Resource || seen[r.Name] {
				return // the RGDs themselves, or seen in another version
			}
			seen[r.Name] = true
			args = append(args, r.Name+"."+v.Version+"."+group)
		})
	}
	return args
}

// kindArg is the kind rgd serves as a KIND argument that names its version
// and group, or "" when it has no schema.
func kindArg(rgd *v1alpha1.ResourceGraphDefinition) string {
	gvk := rgdKind(rgd)
	if gvk.Kind == "" {
		return ""
	}
	return strings.ToLower(gvk.Kind) + "." + gvk.Version + "." + gvk.Group
}

// tableColumns says which of the optional parts of the status table to print.
type tableColumns struct {
	namespace, header bool
	// wide adds the RGD and the Ready condition's message.
	wide bool
	// labels are labels shown as columns; showLabels adds every label.
	labels     []string
	showLabels bool
}

// columns are the table's columns the flags ask for.
func (o *statusOptions) columns() tableColumns {
	return tableColumns{namespace: o.allNamespaces, header: !o.noHeaders, wide: o.output == "wide", labels: o.labelColumns, showLabels: o.showLabels}
}

// labelCells are the cells of a row's labels the columns show, tab
// separated after a leading tab; "" for none. An instance without a
// label of a column has an empty cell there, as in kubectl get -L.
func (cols tableColumns) labelCells(rowLabels map[string]string) string {
	var b strings.Builder
	for _, key := range cols.labels {
		b.WriteString("\t" + rowLabels[key])
	}
	if cols.showLabels {
		b.WriteString("\t" + labels.FormatLabels(rowLabels))
	}
	return b.String()
}

// newNames is what status --watch -o name shows of rows: the names of the
// instances listed now and not at the last read (listed, which it
// updates), one per line, as a stream a script reads line by line; a
// change of state is no news there.
func (o *statusOptions) newNames(rows []InstanceStatusRow, lists []watchedList, listed map[string]bool) *watchView {
	now := make([]string, len(rows))
	var appeared []string
	for i, r := range rows {
		now[i] = r.objectName()
		if !listed[now[i]] {
			appeared = append(appeared, now[i])
		}
	}
	clear(listed)
	for _, name := range now {
		listed[name] = true
	}
	return &watchView{key: strings.Join(now, "\n"), lists: lists, draw: func() error {
		for _, name := range appeared {
			if _, err := fmt.Fprintln(o.Streams.Out, name); err != nil {
				return err
			}
		}
		return nil
	}}
}

// printNames prints each instance's objectName, a line each, for a script
// to hand to kubectl.
func printNames(w io.Writer, rows []InstanceStatusRow) {
	for _, r := range rows {
		fmt.Fprintln(w, r.objectName())
	}
}

// objectName is the instance as kubectl get -o name prints it.
func (r InstanceStatusRow) objectName() string {
	return objectName(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind(), r.Name)
}

// objectName is an object as kubectl get -o name prints it: kind.group/name,
// or kind/name in the core group.
func objectName(gk schema.GroupKind, name string) string {
	return strings.ToLower(gk.String()) + "/" + name
}

func printStatus(w io.Writer, rows []InstanceStatusRow, cols tableColumns, p palette, now time.Time) {
	// CLUSTER only when some instance is placed on a workload cluster:
	// without multi-cluster placement it would be a column of dashes.
	showCluster := slices.ContainsFunc(rows, func(r InstanceStatusRow) bool { return r.Cluster != "" })
	tw := newTable(w)
	header := "KIND\tNAME\tSTATE\tREADY\tREASON\tAGE"
	if showCluster {
		header = "KIND\tNAME\tCLUSTER\tSTATE\tREADY\tREASON\tAGE"
	}
	if cols.namespace {
		header = "NAMESPACE\t" + header
	}
	if cols.wide {
		header += "\tRGD\tMESSAGE"
	}
	for _, key := range cols.labels {
		header += "\t" + strings.ToUpper(key[strings.LastIndex(key, "/")+1:])
	}
	if cols.showLabels {
		header += "\tLABELS"
	}
	if cols.header {
		fmt.Fprintln(tw, header)
	}
	for _, r := range rows {
		line := r.Kind + "\t" + r.Name
		if showCluster {
			line += "\t" + orDash(r.Cluster)
		}
		line += fmt.Sprintf("\t%s\t%s\t%s\t%s", p.verdict(r.State), p.verdict(r.Ready), orDash(r.Reason), age(r.Created, now))
		if cols.wide {
			line += "\t" + orDash(r.RGD) + "\t" + orDash(oneLine(r.Message))
		}
		line += cols.labelCells(r.Labels)
		if cols.namespace {
			line = orDash(r.Namespace) + "\t" + line
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// statusKey is what --watch compares to tell that what it printed changed:
// every cell of the rows but their age, the label cells cols shows among
// them.
func statusKey(rows []InstanceStatusRow, cols tableColumns) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s/%s/%s=%s,%s,%s,%s,%s,%s%s;", r.Namespace, r.Kind, r.Name, r.Cluster, r.State, r.Ready, r.Reason, r.RGD, r.Message, cols.labelCells(r.Labels))
	}
	return b.String()
}
