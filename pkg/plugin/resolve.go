package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// cluster is what the inspecting commands talk to.
type cluster struct {
	dyn dynamic.Interface
	// metadata watches lists by their objects' metadata alone.
	metadata  metadata.Interface
	mapper    meta.RESTMapper
	resolver  kinds.Resolver
	discovery discovery.DiscoveryInterface
	namespace string
	// name is the registered Cluster this is, "" for the kubeconfig's.
	name string
	// reads logs what is read for --watch to follow, when it is set.
	reads *readLog
	// given are the objects a dry run was given beside its instances and
	// RGDs (the ConfigMap an externalRef reads): an externalRef naming one
	// reads it as given, as if applied with them.
	given []*unstructured.Unstructured
	// maxCollectionSize bounds the items of a collection a dry run
	// expands, as the agent's flag of that name does; 0 for its default.
	maxCollectionSize int
	// unserved are the kinds RGDs given to a dry run serve once applied
	// that the cluster does not serve yet: an object of one is checked
	// against the schema its RGD generates (planUnserved).
	unserved map[schema.GroupVersionKind]unservedKind
}

// cluster connects to the kubeconfig's cluster; kinds it does not serve
// are looked up in the built-in snapshot.
func (o *Options) cluster() (*cluster, error) {
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	// What the API server and admission webhooks warn of (a dry run's
	// above all) is printed as kubectl prints it, once each.
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NewWarningWriter(o.Streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	// client-go's default of 5 requests a second made a preview of an RGD
	// change with 30 instances wait a minute on the client alone; the API
	// server's priority and fairness, not the client, is what protects it.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 100, 200
	}
	dc, err := o.Config.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	// The mapper is kubectl's (ToRESTMapper), but over discovery kept in
	// memory: the shortcut expander reads every group's resources for
	// each kind it maps, which kubectl does once and status, over every
	// kind RGDs serve, did for each of them from the disk cache (over a
	// second of decoding with 150 RGDs).
	cached := inMemory(dc)
	mapper := kubectlMapper(cached, o.Streams.ErrOut)
	builtin, err := kinds.Builtin()
	if err != nil {
		return nil, err
	}
	ns, _, err := o.Config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	return connect(cfg, cached, mapper, builtin, ns, "")
}

// kubectlMapper maps kinds as kubectl does, short names included (with
// its warning when one is ambiguous), through dc.
func kubectlMapper(dc discovery.CachedDiscoveryInterface, errOut io.Writer) meta.RESTMapper {
	warnings := printers.NewWarningPrinter(errOut, printers.WarningPrinterOptions{})
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(dc), dc, warnings.Print)
}

// inMemory keeps what disk (kubectl's discovery cache) answers in memory.
// It is fresh only while the answers it holds are: the mapper reads a kind
// it does not find as the server's last word only then, and otherwise
// invalidates both and asks the server, as over disk alone, so a kind
// served since kubectl cached discovery is found.
func inMemory(disk discovery.CachedDiscoveryInterface) discovery.CachedDiscoveryInterface {
	return &memoryOverDisk{CachedDiscoveryInterface: memory.NewMemCacheClient(disk), disk: disk}
}

type memoryOverDisk struct {
	discovery.CachedDiscoveryInterface
	disk discovery.CachedDiscoveryInterface
}

func (m *memoryOverDisk) Fresh() bool {
	return m.CachedDiscoveryInterface.Fresh() && m.disk.Fresh()
}

// connect is the cluster cfg reaches, whose kinds are found through dc,
// or in fallback when it does not serve them; name is the registered
// Cluster it is, "" for the kubeconfig's.
func connect(cfg *rest.Config, dc discovery.DiscoveryInterface, mapper meta.RESTMapper, fallback kinds.Resolver, namespace, name string) (*cluster, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &cluster{
		dyn:       dyn,
		metadata:  mc,
		mapper:    mapper,
		resolver:  kinds.Chain{kinds.NewDiscovery(dc), fallback},
		discovery: dc,
		namespace: namespace,
		name:      name,
	}, nil
}

// load finds the instance KIND NAME, and where its resources were placed.
func (c *cluster) load(ctx context.Context, kind, name string) (*subject, error) {
	s, err := c.loadSubject(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	c.follow(ctx, s)
	return s, nil
}

// rgdNamed is the RGD NAME when KIND names RGDs (rgd,
// resourcegraphdefinitions.kro.run, ...), and nil when it names any other
// kind. A KIND that does not resolve is not an RGD's: the RGD kind is
// always served where kro-agent runs, and the instance lookup that follows
// reports the error in full.
func (c *cluster) rgdNamed(ctx context.Context, kind, name string) (*v1alpha1.ResourceGraphDefinition, error) {
	if !c.isRGDKind(kind) {
		return nil, nil
	}
	return c.askedRGD(ctx, name)
}

// askedRGD reads the RGD NAME the user typed; one that is not found says
// which RGD of a name within a typo of it they may have meant.
func (c *cluster) askedRGD(ctx context.Context, name string) (*v1alpha1.ResourceGraphDefinition, error) {
	rgd, err := c.getRGD(ctx, name)
	if !apierrors.IsNotFound(err) {
		return rgd, err
	}
	if hint := c.meantName(ctx, c.metadata.Resource(rgdGVR), name); hint != "" {
		return nil, fmt.Errorf("%w: %s", err, hint)
	}
	return nil, err
}

// isRGDKind tells whether KIND names RGDs.
func (c *cluster) isRGDKind(kind string) bool {
	m, err := c.mapping(kind)
	return err == nil && m.GroupVersionKind.GroupKind() == v1alpha1.ResourceGraphDefinitionGroupKind
}

// subject is an instance with its RGD and compiled graph.
type subject struct {
	instance *unstructured.Unstructured
	mapping  *meta.RESTMapping
	rgd      *v1alpha1.ResourceGraphDefinition
	// graph is nil when the RGD does not compile; graphErr says why.
	graph    *graph.Graph
	graphErr error
	// placement is where the agent placed the instance's resources, nil
	// for the local cluster; workload connects there, or workloadErr says
	// why it cannot.
	placement   *agentv1.Placement
	workload    *cluster
	workloadErr error
	// released is set, and rgd and graph nil, for an instance whose RGD
	// was deleted; unreadable, for one whose RGD the user may not read.
	released   *releasedError
	unreadable *unreadableRGDError
}

// resourceIn is the mapping's resource in namespace ns ("" for all), or
// the resource itself when its kind is cluster-scoped: a cluster-scoped
// kind asked for in a namespace is not found.
func (c *cluster) resourceIn(mapping *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	ri := c.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return ri
	}
	return ri.Namespace(ns)
}

// metadataIn is resourceIn for the metadata client: mapping's objects in
// ns, or in the cluster for a cluster-scoped kind.
func (c *cluster) metadataIn(mapping *meta.RESTMapping, ns string) metadata.ResourceInterface {
	ri := c.metadata.Resource(mapping.Resource)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return ri
	}
	return ri.Namespace(ns)
}

// defaultChunkSize is how many objects one LIST request returns at most,
// as kubectl get's --chunk-size defaults to.
const defaultChunkSize = 500

// listInChunks lists what ri serves that matches opts, chunkSize objects
// per request (0 for one request): the API server then never builds a
// response of thousands of instances at once. A chunk whose continue token
// has expired makes the pager list everything in one request.
func listInChunks(ctx context.Context, ri dynamic.ResourceInterface, opts metav1.ListOptions, chunkSize int64) ([]unstructured.Unstructured, error) {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return ri.List(ctx, opts)
	})
	p.PageSize = chunkSize
	var items []unstructured.Unstructured
	err := p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("listing %T in chunks: not an object", obj)
		}
		items = append(items, *u)
		return nil
	})
	return items, err
}

// loadSubject finds the instance KIND NAME (KIND as kubectl takes it: kind,
// plural or short name, optionally .group) and its RGD.
func (c *cluster) loadSubject(ctx context.Context, kind, name string) (*subject, error) {
	var mapping *meta.RESTMapping
	var inst *unstructured.Unstructured
	err := c.withMapping(kind, func(m *meta.RESTMapping) (err error) {
		mapping = m
		inst, err = c.resourceIn(m, c.namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, c.withHint(ctx, err, mapping, name)
	}
	return c.subjectOf(ctx, inst, mapping)
}

// withHint adds to err, the answer to KIND NAME typed by the user, what
// they may have meant: an RGD's kind within a typo of a kind the server
// does not serve, or where an instance that is not found may be (see
// instanceHint; name "" for none). The RGDs and instances are listed only
// here, on the way to the user.
func (c *cluster) withHint(ctx context.Context, err error, m *meta.RESTMapping, name string) error {
	if unknown := (*unknownKindError)(nil); errors.As(err, &unknown) {
		if name == "" {
			// The NAME of an instance given without its KIND: an
			// instance of exactly that name says more than a kind
			// spelt nearly so.
			unknown.instanceOf, unknown.where = c.kindOfInstanceNamed(ctx, unknown.kind)
		}
		if unknown.instanceOf == "" {
			unknown.meant = c.kindMeant(ctx, unknown.kind)
		}
		return err
	}
	if name != "" && m != nil && apierrors.IsNotFound(err) {
		if hint := c.instanceHint(ctx, m, name); hint != "" {
			return fmt.Errorf("%w: %s", err, hint)
		}
	}
	return err
}

// elsewhereHint names the namespaces an instance of the name asked for is
// in, the first three of many.
func elsewhereHint(namespaces []string) string {
	switch {
	case len(namespaces) == 1:
		return fmt.Sprintf("there is one in namespace %s (add -n %s)", namespaces[0], namespaces[0])
	case len(namespaces) <= 3:
		return "there are ones in namespaces " + strings.Join(namespaces, ", ") + " (add -n NAMESPACE)"
	}
	return fmt.Sprintf("there are ones in %d namespaces, such as %s (add -n NAMESPACE)", len(namespaces), strings.Join(namespaces[:3], ", "))
}

// instanceHint says where the instance name that is not in the namespace
// may be: of that name in other namespaces (a forgotten -n), or of a name
// within a typo of it here; "" when neither, or when the lists cannot be
// read. Only metadata is listed, and only on this error path.
func (c *cluster) instanceHint(ctx context.Context, m *meta.RESTMapping, name string) string {
	ri := c.metadata.Resource(m.Resource)
	ns := "" // a cluster-scoped kind's objects
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		elsewhere, err := ri.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		if err == nil && len(elsewhere.Items) > 0 {
			var where []string
			for _, o := range elsewhere.Items {
				where = append(where, o.Namespace)
			}
			return elsewhereHint(where)
		}
		ns = c.namespace
	}
	return c.meantName(ctx, ri.Namespace(ns), name)
}

// maxNamesOffered bounds the names listed to a KIND given without NAME.
const maxNamesOffered = 10

// whichInstance answers KIND given without NAME to command: with the names
// of the kind's objects in the namespace to choose from (only metadata is
// listed, and only on this error path), or with what is wrong with the kind
// when the server does not serve it, or is the RGDs' and command takes no
// RGD. missing is the answer without names, when they cannot be listed.
func (o *Options) whichInstance(ctx context.Context, command string, takesRGD bool, missing *nameMissingError) error {
	c, err := o.cluster()
	if err != nil {
		return missing
	}
	var m *meta.RESTMapping
	var list *metav1.PartialObjectMetadataList
	err = c.withMapping(missing.kind, func(mapping *meta.RESTMapping) (err error) {
		m = mapping
		list, err = c.metadataIn(m, c.namespace).List(ctx, metav1.ListOptions{Limit: maxNamesOffered + 1})
		return err
	})
	if unknown := (*unknownKindError)(nil); errors.As(err, &unknown) {
		return c.withHint(ctx, err, nil, "")
	}
	if err != nil {
		return missing
	}
	if !takesRGD && m.GroupVersionKind.GroupKind() == v1alpha1.ResourceGraphDefinitionGroupKind {
		return fmt.Errorf("%s takes an instance, not a ResourceGraphDefinition: give the kind an RGD serves and the instance's name (kubectl kro status lists every RGD's instances)", command)
	}
	answer := *missing
	answer.listed, answer.command = true, command
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		answer.namespace = c.namespace
	}
	for i, item := range list.Items {
		if i == maxNamesOffered {
			answer.more = true
			break
		}
		answer.names = append(answer.names, item.Name)
	}
	answer.more = answer.more || list.Continue != ""
	return &answer
}

// kindOfInstanceNamed is the lower-case kind of the first RGD (by name)
// with an instance called name in the namespace, or of the cluster for a
// cluster-scoped kind, and where that is; "" when none has one. Each
// served kind is asked for the name once, and only on this error path.
func (c *cluster) kindOfInstanceNamed(ctx context.Context, name string) (kind, where string) {
	rgds, err := c.listRGDs(ctx)
	if err != nil {
		return "", ""
	}
	slices.SortFunc(rgds, func(a, b v1alpha1.ResourceGraphDefinition) int { return strings.Compare(a.Name, b.Name) })
	for i := range rgds {
		arg := kindArg(&rgds[i])
		if arg == "" {
			continue
		}
		m, err := c.mapping(arg)
		if err != nil {
			continue
		}
		if _, err := c.metadataIn(m, c.namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			namespace := ""
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				namespace = c.namespace
			}
			return strings.ToLower(rgdKind(&rgds[i]).Kind), namespaceWords(namespace)
		}
	}
	return "", ""
}

// meantName is "did you mean NAME?" for the object listed in ri whose name
// is within a typo of name, or "" for none, or when ri cannot be listed.
// Only metadata is listed, and only on the way to a user's error.
func (c *cluster) meantName(ctx context.Context, ri metadata.ResourceInterface, name string) string {
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(list.Items))
	for _, o := range list.Items {
		names = append(names, o.Name)
	}
	if meant, ok := spelling.Closest(name, names); ok {
		return fmt.Sprintf("did you mean %s?", meant)
	}
	return ""
}

// graphless is an instance whose graph the plugin cannot have: what it
// manages is listed flat (flatTree), and its own conditions tell the rest.
type graphless struct {
	instance *unstructured.Unstructured
	mapping  *meta.RESTMapping
	kind     string
	// rgd names the instance's RGD, "" when not even that is known.
	rgd string
}

// releasedError is an instance whose RGD was deleted: kro-agent released
// it, and it has no graph to show; its own conditions say so.
type releasedError struct{ graphless }

func (e *releasedError) Error() string {
	return fmt.Sprintf("%s %s belongs to ResourceGraphDefinition %s, which was deleted: kro-agent no longer manages it, and its resources were left in place",
		e.kind, e.instance.GetName(), e.rgd)
}

// unreadableRGDError is an instance whose RGD the user may not read, as an
// instance's author with roles in its namespace alone: an RGD is
// cluster-scoped. kro-agent manages the instance all the same; what the
// plugin shows of it comes from the instance and the objects it may list.
type unreadableRGDError struct {
	graphless
	err error
}

func (e *unreadableRGDError) Error() string {
	return fmt.Sprintf("%s %s belongs to %s: %v", e.kind, e.instance.GetName(), e.rgdName(), e.err)
}

func (e *unreadableRGDError) Unwrap() error { return e.err }

// rgdName names the RGD for messages.
func (e *unreadableRGDError) rgdName() string {
	if e.rgd == "" {
		return "a ResourceGraphDefinition"
	}
	return "ResourceGraphDefinition " + e.rgd
}

// why says what is missing without the RGD, and what gives it.
func (e *unreadableRGDError) why() string {
	return fmt.Sprintf("%s, which says how %s's resources depend on each other and when each is ready, cannot be read: you may not read resourcegraphdefinitions.kro.run (ask your cluster's admins for it: it is cluster-scoped, so a role in a namespace cannot grant it; %s)",
		e.rgdName(), e.instance.GetName(), rgdViewerHint)
}

// rgdViewerHint names the ClusterRole manifests/agent/rbac.yaml holds for
// people to read RGDs with, for the messages of commands that need them.
const rgdViewerHint = "kro-agent's manifests hold the ClusterRole kro-agent-rgd-viewer for it, to bind with a ClusterRoleBinding"

// subjectOf finds the RGD of the instance inst, of kind mapping, and
// compiles its graph.
func (c *cluster) subjectOf(ctx context.Context, inst *unstructured.Unstructured, mapping *meta.RESTMapping) (*subject, error) {
	s := &subject{instance: inst, mapping: mapping}
	gvk := mapping.GroupVersionKind
	name := inst.GetName()
	if gvk.GroupKind() == v1alpha1.ResourceGraphDefinitionGroupKind {
		served, _, _ := unstructured.NestedString(inst.Object, "spec", "schema", "kind")
		return nil, fmt.Errorf("ResourceGraphDefinition %s is not an instance: it serves %s (kubectl kro status rgd %s lists its instances, kubectl kro tree %s NAME shows one)",
			name, orDash(served), name, strings.ToLower(orDash(served)))
	}
	labels := inst.GetLabels()
	var err error
	if rgdName := labels[v1alpha1.LabelRGDName]; rgdName != "" {
		s.rgd, err = c.getRGD(ctx, rgdName)
		switch {
		case apierrors.IsNotFound(err):
			return nil, &releasedError{graphless{instance: inst, mapping: mapping, kind: gvk.Kind, rgd: rgdName}}
		case apierrors.IsForbidden(err) && isInstance(inst):
			return nil, &unreadableRGDError{graphless{instance: inst, mapping: mapping, kind: gvk.Kind, rgd: rgdName}, err}
		case err != nil:
			return nil, fmt.Errorf("%s %s belongs to ResourceGraphDefinition %s: %w", gvk.Kind, name, rgdName, err)
		}
	}
	// An object a graph manages carries its RGD's name too; only the RGD
	// serving the object's own kind makes it an instance.
	if s.rgd == nil || rgdKind(s.rgd).GroupKind() != gvk.GroupKind() {
		labelled := s.rgd
		s.rgd, err = c.rgdServing(ctx, gvk)
		if err != nil {
			if apierrors.IsForbidden(err) && isInstance(inst) {
				return nil, &unreadableRGDError{graphless{instance: inst, mapping: mapping, kind: gvk.Kind, rgd: labels[v1alpha1.LabelRGDName]}, err}
			}
			if owner := managedBy(labels, labelled); owner != "" {
				return nil, fmt.Errorf("%s %s is not an instance: it is %s", gvk.Kind, name, owner)
			}
			return nil, err
		}
	}
	s.graph, s.graphErr = graph.Compile(s.rgd, graph.Options{Resolver: c.resolver, AllowUnknownKinds: true})
	// What every command's answer about the instance rests on, for --watch.
	c.noteObject(mapping.Resource, inst.GetNamespace(), name, inst)
	c.noteObject(rgdGVR, "", s.rgd.Name, s.rgd)
	return s, nil
}

// managedBy says which instance's resource an object is, from the labels
// the agent puts on every object it manages and the RGD they name, or ""
// for none.
func managedBy(labels map[string]string, rgd *v1alpha1.ResourceGraphDefinition) string {
	node, name, ns := labels[v1alpha1.LabelNodeID], labels[v1alpha1.LabelInstanceName], labels[v1alpha1.LabelInstanceNamespace]
	if node == "" || name == "" || rgd == nil {
		return ""
	}
	kind := rgdKind(rgd).Kind
	return fmt.Sprintf("resource %s of %s %s (kubectl kro tree %s %s%s shows it)",
		node, kind, cache.NewObjectName(ns, name).String(), strings.ToLower(kind), name, namespaceFlag(ns))
}

// withMapping calls use with kind's mapping. Discovery is cached on disk
// (kubectl's cache, for hours), and a kind deleted and created again with
// another scope, or served by a new cluster at the same address, leaves a
// mapping the API server answers with "could not find the requested
// resource"; the cache is then dropped and use called once more.
func (c *cluster) withMapping(kind string, use func(*meta.RESTMapping) error) error {
	m, err := c.mapping(kind)
	if err != nil {
		return err
	}
	err = use(m)
	if !kinds.NotServed(err) {
		return err
	}
	r, ok := c.mapper.(meta.ResettableRESTMapper)
	if !ok {
		return err
	}
	r.Reset()
	if m, err = c.mapping(kind); err != nil {
		return err
	}
	return use(m)
}

func (c *cluster) mapping(kind string) (*meta.RESTMapping, error) {
	gvr, gr := schema.ParseResourceArg(strings.ToLower(kind))
	var gvk schema.GroupVersionKind
	var err error
	if gvr != nil {
		gvk, err = c.mapper.KindFor(*gvr)
	}
	if gvr == nil || err != nil {
		gvk, err = c.mapper.KindFor(gr.WithVersion(""))
	}
	if meta.IsNoMatchError(err) {
		return nil, &unknownKindError{kind: kind, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("looking up kind %q: %w", kind, err)
	}
	return c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// unknownKindError is a KIND argument the server does not serve. The
// mapper's own words ("no matches for /, Resource=x") tell a user nothing
// more, so they are kept only for errors.Is. meant is the kind of an RGD
// spelled nearly so, if there is one.
type unknownKindError struct {
	kind, meant string
	// instanceOf is the lower-case kind of an RGD with an instance named
	// kind, in where ("namespace x", "the cluster").
	instanceOf, where string
	err               error
}

func (e *unknownKindError) Error() string {
	if e.instanceOf != "" {
		return fmt.Sprintf("the server has no kind %q, but %s has a %s of that name: give its kind before it, %s %s", e.kind, e.where, e.instanceOf, e.instanceOf, e.kind)
	}
	if e.meant != "" {
		return fmt.Sprintf("the server has no kind %q: did you mean %s? (kubectl api-resources lists the kinds it serves)", e.kind, e.meant)
	}
	return fmt.Sprintf("the server has no kind %q (kubectl api-resources lists the kinds it serves)", e.kind)
}

func (e *unknownKindError) Unwrap() error { return e.err }

// kindMeant is the kind of an RGD within a typo of kind, as the plugin's
// commands take it (lower case), or "" for none or when the RGDs cannot
// be listed: the kinds RGDs serve are what kubectl kro is asked about.
func (c *cluster) kindMeant(ctx context.Context, kind string) string {
	rgds, err := c.listRGDs(ctx)
	if err != nil {
		return ""
	}
	// Only kinds the server serves: one an RGD declares but that is not
	// served (yet, or any more) would fail the same way.
	served := slices.DeleteFunc(rgds, func(r v1alpha1.ResourceGraphDefinition) bool {
		k := kindArg(&r)
		if k == "" {
			return true
		}
		_, err := c.mapping(k)
		return err != nil
	})
	return closestKind(kind, served)
}

// closestKind is the lower-case kind of the RGD whose kind is nearest to
// typed (its group, after the first dot, left out), if one is within a
// typo of it.
func closestKind(typed string, rgds []v1alpha1.ResourceGraphDefinition) string {
	typed, _, _ = strings.Cut(typed, ".")
	kinds := make([]string, 0, len(rgds))
	for i := range rgds {
		if kind := rgdKind(&rgds[i]).Kind; kind != "" {
			kinds = append(kinds, strings.ToLower(kind))
		}
	}
	if meant, ok := spelling.Closest(typed, kinds); ok {
		return meant
	}
	return ""
}

var rgdGVR = v1alpha1.GroupVersion.WithResource("resourcegraphdefinitions")

func (c *cluster) getRGD(ctx context.Context, name string) (*v1alpha1.ResourceGraphDefinition, error) {
	return readRGD(ctx, c.dyn, name)
}

// readRGD reads the RGD called name through dyn.
func readRGD(ctx context.Context, dyn dynamic.Interface, name string) (*v1alpha1.ResourceGraphDefinition, error) {
	u, err := dyn.Resource(rgdGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rgd); err != nil {
		return nil, err
	}
	return rgd, nil
}

func (c *cluster) listRGDs(ctx context.Context) ([]v1alpha1.ResourceGraphDefinition, error) {
	list, err := c.dyn.Resource(rgdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]v1alpha1.ResourceGraphDefinition, 0, len(list.Items))
	for _, u := range list.Items {
		rgd := v1alpha1.ResourceGraphDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rgd); err == nil {
			out = append(out, rgd)
		}
	}
	return out, nil
}

// rgdServing finds the RGD whose schema defines gvk, for an instance the
// agent has not labelled yet.
func (c *cluster) rgdServing(ctx context.Context, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, error) {
	rgds, err := c.listRGDs(ctx)
	if err != nil {
		return nil, err
	}
	return servingOf(rgds, gvk)
}

// servingOf finds among rgds, listed already, the one whose schema defines
// gvk.
func servingOf(rgds []v1alpha1.ResourceGraphDefinition, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, error) {
	for i := range rgds {
		if rgdKind(&rgds[i]) == gvk {
			return &rgds[i], nil
		}
	}
	return nil, fmt.Errorf("no ResourceGraphDefinition serves %s %s%s", gvk.GroupVersion(), gvk.Kind, servedAlike(rgds, gvk))
}

// servedAlike says which of rgds serves the kind of gvk written otherwise,
// at another apiVersion (kro.run/v1, v1alpha1 without its group) or with
// another case or a typo ("Webapp"): "; ResourceGraphDefinition webapp
// serves it as apiVersion kro.run/v1alpha1, kind WebApp". Without one it
// says where the kinds served are listed.
func servedAlike(rgds []v1alpha1.ResourceGraphDefinition, gvk schema.GroupVersionKind) string {
	kinds := make([]string, 0, len(rgds))
	for i := range rgds {
		kinds = append(kinds, rgdKind(&rgds[i]).Kind)
	}
	meant := slices.IndexFunc(kinds, func(k string) bool { return k != "" && strings.EqualFold(k, gvk.Kind) })
	if meant < 0 {
		if k, ok := spelling.Closest(gvk.Kind, kinds); ok {
			meant = slices.Index(kinds, k)
		}
	}
	if meant < 0 {
		return " (kubectl get rgd lists the kinds served)"
	}
	served := rgdKind(&rgds[meant])
	return fmt.Sprintf("; ResourceGraphDefinition %s serves it as apiVersion %s, kind %s", rgds[meant].Name, served.GroupVersion(), served.Kind)
}

func rgdKind(r *v1alpha1.ResourceGraphDefinition) schema.GroupVersionKind {
	if r.Spec.Schema == nil {
		return schema.GroupVersionKind{}
	}
	return r.Spec.Schema.GroupVersionKind()
}

// listTyped lists the objects of gvr in namespace that opts select, as T.
func listTyped[T any](ctx context.Context, c *cluster, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]T, error) {
	list, err := c.dyn.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(list.Items))
	for _, item := range list.Items {
		var t T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &t); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", item.GetKind(), item.GetName(), err)
		}
		out = append(out, t)
	}
	return out, nil
}
