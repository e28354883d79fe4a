package graph

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/simpleschema"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// DefaultMaxForEachDimensions bounds the iterators of one collection.
const DefaultMaxForEachDimensions = 5

// Options configure Compile.
type Options struct {
	// Resolver tells kinds' schemas and scopes. Required.
	Resolver kinds.Resolver
	// AllowUnknownKinds types resources of kinds the resolver does not know
	// as dyn instead of failing, for offline validation of RGDs that use
	// custom resources; not a kind of a built-in group named like a
	// built-in kind at another version or spelt nearly like one
	// (kinds.Suggestion), which is a mistake. The agent never sets it.
	AllowUnknownKinds bool
	// MaxForEachDimensions bounds forEach dimensions; 0 means the default.
	MaxForEachDimensions int
	// ValidateCRD, when set, checks the generated CRD as the API server
	// will (package crdcheck), so that a schema it would refuse is an
	// error at its RGD field now rather than when the CRD is applied. Its
	// errors' paths are paths into the CRD; an error it returns means it
	// could not check.
	ValidateCRD func(*extv1.CustomResourceDefinition) (field.ErrorList, error)
}

var (
	idPattern        = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	kindPattern      = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)
	versionPattern   = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)
	iteratorPattern  = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	forbiddenLabels  = []string{"kro.run/", "applyset.kubernetes.io/"}
	reservedIDs      = []string{SchemaVar, EachVar, "item", "items", "spec", "status", "metadata", "self", "runtime", "instance", "resources", "dyn", "has", "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
	celReservedWords = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)

// reserved tells a name no resource id or iterator may take: one kro-agent
// or CEL gives a meaning of its own.
func reserved(name string) bool {
	return slices.Contains(reservedIDs, name) || slices.Contains(celReservedWords, name)
}

// serverSetMetadata are the fields of an object's metadata the API server
// sets that make kro-agent's server-side apply of a template fail.
// creationTimestamp and generation it ignores (kubectl's YAML often carries
// a null creationTimestamp).
var serverSetMetadata = []struct{ name, refused string }{
	{"uid", "refuses an apply naming another object's uid, or one that does not exist yet"},
	{"resourceVersion", "refuses an apply that carries one as a conflict as soon as the object has changed"},
	{"managedFields", "refuses an apply that carries them"},
}

// Compile validates rgd and builds its Graph. On failure the error is an
// *Error listing every problem found, each naming its field path.
func Compile(rgd *v1alpha1.ResourceGraphDefinition, opts Options) (*Graph, error) {
	if opts.Resolver == nil {
		return nil, errors.New("graph.Compile: no kind resolver")
	}
	if opts.MaxForEachDimensions == 0 {
		opts.MaxForEachDimensions = DefaultMaxForEachDimensions
	}
	c := &compiler{opts: opts, rgd: rgd, byID: map[string]*Node{}}
	g := c.compile()
	crd := c.specOnlyCRD
	if g != nil {
		crd = g.CRD
	}
	if crd != nil && opts.ValidateCRD != nil {
		errs, err := opts.ValidateCRD(crd)
		if err != nil {
			return nil, fmt.Errorf("validating the CustomResourceDefinition %s generated for ResourceGraphDefinition %s: %w", crd.Name, rgd.Name, err)
		}
		c.errs = append(c.errs, inRGD(errs)...)
	}
	if len(c.errs) > 0 {
		return nil, &Error{Errs: c.errs}
	}
	return g, nil
}

type compiler struct {
	opts Options
	rgd  *v1alpha1.ResourceGraphDefinition
	errs field.ErrorList

	nodes []*Node
	byID  map[string]*Node
	// paths of each node in the RGD, by id.
	paths map[string]*field.Path
	env   *celenv.Env
	// specOnlyCRD is the CRD of an RGD whose kind and spec are valid but
	// whose resources or status are not, with a free-form status: what the
	// API server would refuse in the spec (a validation marker's rule) is
	// told with the rest, not after it is mended.
	specOnlyCRD *extv1.CustomResourceDefinition
	// reservedIDs are the ids refused as reserved words, with their paths:
	// an expression naming one fails for that reason alone.
	reservedIDs map[string]*field.Path
	// warnings are what expressions read that is legal but never comes
	// (warnAbsentReads) or does not do what it is written for
	// (warnGuardedReads), in the order the expressions compile:
	// resources in the RGD's order, then the status.
	warnings []string
}

var (
	schemaPath    = field.NewPath("spec", "schema")
	resourcesPath = field.NewPath("spec", "resources")
)

func (c *compiler) compile() *Graph {
	s := c.rgd.Spec.Schema
	if s == nil {
		c.errs = append(c.errs, field.Required(schemaPath, "an RGD needs a schema"))
		return nil
	}
	c.checkName()
	gvk := c.checkKind(s)
	specFields := c.decodeMap(s.Spec, schemaPath.Child("spec"))
	typeDefs := c.decodeMap(s.Types, schemaPath.Child("types"))
	statusFields := c.decodeMap(s.Status, statusPath)
	specSchema, errs := simpleschema.Build(specFields, typeDefs, schemaPath.Child("spec"), schemaPath.Child("types"))
	c.errs = append(c.errs, errs...)
	specValid := len(c.errs) == 0

	c.collectResources()
	instance := instanceSchema(specSchema, c.opts.Resolver)
	env, err := celenv.New(c.variables(instance)...)
	if err != nil {
		c.errs = append(c.errs, field.InternalError(schemaPath, err))
		return nil
	}
	c.env = env
	for _, n := range c.nodes {
		c.compileNode(n)
	}
	c.checkLiteralNames()
	order := c.sort()
	statusSchema, status := c.compileStatus(statusFields)
	conditions, computed := c.compileConditions(statusFields)
	// The kind, as the generated CRD names it.
	g := &Graph{Instance: gvk, Resource: Plural(s.Kind), Namespaced: s.Scope != v1alpha1.ScopeCluster}
	if len(c.errs) > 0 {
		if specValid {
			free := &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}, XPreserveUnknownFields: ptrTo(true)}
			c.specOnlyCRD = generateCRD(c.rgd, g, specSchema, free)
		}
		return nil
	}
	g.Nodes = order
	g.Status = status
	g.Conditions = conditions
	g.ComputedConditions = computed
	g.InstanceFormats = celenv.FormatsOf(instance)
	g.schemaWarnings = append(schemaBooleanKeyWarnings(specFields, typeDefs, statusFields), openAPIWarnings(specFields, typeDefs)...)
	g.readWarnings = c.warnings
	if spec, ok := instance.Properties["spec"]; ok {
		g.InstanceSpec = celenv.FieldType(&spec)
	}
	_, projected := statusSchema.Properties[StatusObservedGeneration]
	g.ObservedGeneration = !projected
	for _, n := range order {
		n.Formats = celenv.FormatsOf(n.schemaOf())
		if n.Kind != nil && n.Kind.Custom {
			n.Defaults = DefaultsOfPublished(n.Kind.Schema)
		}
	}
	g.CRD = generateCRD(c.rgd, g, specSchema, statusSchema)
	// The spec's alone: expressions do not see the status, which the CRD
	// defaults too (generateCRD).
	root := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema
	g.schemaWarnings = append(g.schemaWarnings, columnWarnings(s.AdditionalPrinterColumns, root, s.Kind)...)
	g.InstanceDefaults = DefaultsOf(&extv1.JSONSchemaProps{Properties: map[string]extv1.JSONSchemaProps{"spec": root.Properties["spec"]}})
	return g
}

// checkKind validates the names of the generated kind.
func (c *compiler) checkKind(s *v1alpha1.Schema) schema.GroupVersionKind {
	if !kindPattern.MatchString(s.Kind) {
		c.errs = append(c.errs, field.Invalid(schemaPath.Child("kind"), s.Kind, "must be UpperCamelCase, such as "+suchAs(s.Kind, true, "WebApplication")))
	}
	gvk := s.GroupVersionKind()
	if !versionPattern.MatchString(s.APIVersion) {
		c.errs = append(c.errs, field.Invalid(schemaPath.Child("apiVersion"), s.APIVersion, "must be a Kubernetes version such as v1alpha1, v1beta2 or v1"+groupApart(s.APIVersion, gvk.Group)))
	}
	for _, msg := range validation.IsDNS1123Subdomain(gvk.Group) {
		c.errs = append(c.errs, field.Invalid(schemaPath.Child("group"), gvk.Group, msg))
	}
	if s.Scope != "" && s.Scope != v1alpha1.ScopeNamespaced && s.Scope != v1alpha1.ScopeCluster {
		c.errs = append(c.errs, field.NotSupported(schemaPath.Child("scope"), s.Scope, []string{string(v1alpha1.ScopeNamespaced), string(v1alpha1.ScopeCluster)}))
	}
	return gvk
}

// notAMap says what raw, which is not a map, is instead: a list (of one
// map, most likely a "- " written before the first field), text, or what
// the JSON decoder says.
func notAMap(raw []byte, err error) string {
	var v any
	if utiljson.Unmarshal(raw, &v) != nil {
		return ": " + err.Error()
	}
	switch v := v.(type) {
	case []any:
		if len(v) == 1 {
			if _, ok := v[0].(map[string]any); ok {
				return `, not a list: it holds one map, so write it without the "- " before its first field`
			}
		}
		return ", not a list"
	case string:
		return ", not text"
	}
	return ": " + err.Error()
}

// groupApart advises on an apiVersion written as an instance's,
// group/version: the version alone goes there, and the group, when it is
// not the one the RGD already gives, in spec.schema.group.
func groupApart(apiVersion, group string) string {
	g, v, ok := strings.Cut(apiVersion, "/")
	if !ok || !versionPattern.MatchString(v) {
		return ""
	}
	advice := "; the group is given apart, by spec.schema.group (" + v1alpha1.GroupVersion.Group + " when not given): write apiVersion: " + v
	if g != group {
		advice += " and group: " + g
	}
	return advice
}

// decodeMap reads a schemaless field that must hold a map.
func (c *compiler) decodeMap(raw runtime.RawExtension, path *field.Path) map[string]any {
	if len(raw.Raw) == 0 || string(raw.Raw) == "null" {
		return nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw.Raw, &m); err != nil {
		c.errs = append(c.errs, field.Invalid(path, string(raw.Raw), "must be a map"+notAMap(raw.Raw, err)))
		return nil
	}
	return m
}

// collectResources checks ids and the shape of each resource and finds its
// kind. Resources with a usable id become nodes even when other parts are
// wrong, so that one mistake does not hide the next.
func (c *compiler) collectResources() {
	c.paths = map[string]*field.Path{}
	for i, r := range c.rgd.Spec.Resources {
		ip := resourcesPath.Index(i)
		if r == nil {
			c.errs = append(c.errs, field.Required(ip, "resource is empty"))
			continue
		}
		if !c.checkID(r.ID, ip.Child("id")) {
			continue
		}
		p := resourcesPath.Key(r.ID)
		n := &Node{ID: r.ID, Index: i}
		c.byID[r.ID] = n
		c.paths[r.ID] = p
		c.nodes = append(c.nodes, n)

		hasTemplate := len(r.Template.Raw) > 0 && string(r.Template.Raw) != "null"
		switch {
		case hasTemplate && r.ExternalRef != nil:
			c.errs = append(c.errs, field.Invalid(p, r.ID, "set exactly one of template and externalRef, not both"))
		case !hasTemplate && r.ExternalRef == nil:
			c.errs = append(c.errs, field.Required(p, "set exactly one of template and externalRef"))
		case hasTemplate:
			n.Template = c.decodeMap(r.Template, p.Child("template"))
			if n.Template != nil {
				n.Kind = c.templateKind(n, p.Child("template"))
				for _, rule := range templateRules {
					rule(c, n, p.Child("template"))
				}
			}
		default:
			n.External = r.ExternalRef.DeepCopy()
			n.Kind = c.externalKind(n, p.Child("externalRef"))
		}
	}
}

// templateRules warn of what the API server refuses in a template beyond
// its kind's schema, for every object so written (a name no object of the
// kind may have, a selector its pods do not match, the rules of a
// built-in kind): each looks at the kinds it knows and passes the others
// by. They run once per RGD generation, as it is compiled.
var templateRules = []func(c *compiler, n *Node, template *field.Path){
	(*compiler).warnNameText,
	(*compiler).warnSelectorMismatch,
	(*compiler).warnJobRestartPolicy,
	(*compiler).warnWorkloadRestartPolicy,
	(*compiler).warnServicePorts,
	(*compiler).warnConfigKeys,
	(*compiler).warnSecretType,
	(*compiler).warnCronSchedule,
	(*compiler).warnClaimSpecs,
	(*compiler).warnIngress,
	(*compiler).warnRoleBindings,
	(*compiler).warnUpdateStrategy,
	(*compiler).warnAutoscaler,
	(*compiler).warnDisruptionBudget,
}

// checkLiteralNames refuses two resources naming one object with literal
// names: every instance would fail on them. Resources with includeWhen may
// exclude each other, and a collection's names use its iterators, so only
// plain resources are compared here; the agent finds the rest when it
// renders an instance (resolve.Renderers).
func (c *compiler) checkLiteralNames() {
	named := map[string]string{}
	for _, n := range c.nodes {
		r := c.rgd.Spec.Resources[n.Index]
		if !n.IsManaged() || len(r.ForEach) > 0 || len(r.IncludeWhen) > 0 {
			continue
		}
		meta, _ := n.Template["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		namespace, _ := meta["namespace"].(string) // none: the instance's
		if name == "" || strings.Contains(name+namespace, "${") {
			continue
		}
		key := n.Kind.GVK.GroupKind().String() + "/" + namespace + "/" + name
		if first, ok := named[key]; ok {
			c.errs = append(c.errs, field.Invalid(c.paths[n.ID].Child("template", "metadata", "name"), name,
				fmt.Sprintf("resource %s names the same %s: each object a graph manages needs a name of its own", first, n.Kind.GVK.Kind)))
			continue
		}
		named[key] = n.ID
	}
}

// checkName checks the RGD's name fits the label every object of its graph
// carries. An RGD read from a file may have none; the API server names the
// ones it stores.
func (c *compiler) checkName() {
	if name := c.rgd.Name; len(name) > validation.LabelValueMaxLength {
		c.errs = append(c.errs, field.Invalid(field.NewPath("metadata", "name"), name, fmt.Sprintf(
			"must be no more than %d characters: the CustomResourceDefinition and every object an instance manages carry it in the label %s",
			validation.LabelValueMaxLength, v1alpha1.LabelRGDName)))
	}
}

func (c *compiler) checkID(id string, path *field.Path) bool {
	switch {
	case id == "":
		c.errs = append(c.errs, field.Required(path, "every resource needs an id"))
	case !idPattern.MatchString(id):
		c.errs = append(c.errs, field.Invalid(path, id, "must be lowerCamelCase (a letter, then letters and digits), such as "+suchAs(id, false, "webDeployment")))
	case len(id) > validation.LabelValueMaxLength:
		c.errs = append(c.errs, field.Invalid(path, id, fmt.Sprintf(
			"must be no more than %d characters: every object the resource manages carries its id in the label %s",
			validation.LabelValueMaxLength, v1alpha1.LabelNodeID)))
	case reserved(id):
		c.errs = append(c.errs, field.Invalid(path, id, "is a reserved word; choose another id"))
		if c.reservedIDs == nil {
			c.reservedIDs = map[string]*field.Path{}
		}
		c.reservedIDs[id] = path
	case c.byID[id] != nil:
		c.errs = append(c.errs, field.Duplicate(path, id))
	default:
		return true
	}
	return false
}

// templateKind checks the template's apiVersion, kind and metadata and
// resolves the kind.
func (c *compiler) templateKind(n *Node, path *field.Path) *kinds.Info {
	t := n.Template
	apiVersion, _ := t["apiVersion"].(string)
	kind, _ := t["kind"].(string)
	ok := true
	if apiVersion == "" || strings.Contains(apiVersion, "${") {
		c.errs = append(c.errs, field.Required(path.Child("apiVersion"), "must be a literal apiVersion such as apps/v1"))
		ok = false
	}
	if kind == "" || strings.Contains(kind, "${") {
		c.errs = append(c.errs, field.Required(path.Child("kind"), "must be a literal kind such as Deployment"))
		ok = false
	}
	meta, _ := t["metadata"].(map[string]any)
	if meta == nil {
		c.errs = append(c.errs, field.Required(path.Child("metadata"), "a template needs metadata with a name"))
	} else {
		switch name := meta["name"].(type) {
		case string:
			if name == "" {
				c.errs = append(c.errs, field.Required(path.Child("metadata", "name"), "a template needs a name (it may use expressions)"))
			}
		case nil:
			if _, generated := meta["generateName"]; generated {
				// Applied by name, again at every reconcile, a generated
				// name would make a new object each time.
				c.errs = append(c.errs, field.Forbidden(path.Child("metadata", "generateName"), "kro-agent applies each object by its name, again whenever it reconciles, so a generated name would make a new object each time; give metadata.name instead (it may use expressions, such as ${schema.metadata.name}-suffix)"))
				break
			}
			c.errs = append(c.errs, field.Required(path.Child("metadata", "name"), "a template needs a name (it may use expressions)"))
		default:
			c.errs = append(c.errs, field.Invalid(path.Child("metadata", "name"), literalShown(name), literalMismatch(name, spec.StringProperty())))
		}
		for _, f := range serverSetMetadata {
			if _, set := meta[f.name]; set {
				c.errs = append(c.errs, field.Forbidden(path.Child("metadata", f.name), fmt.Sprintf("the API server sets it, and %s: remove it (a template copied from a live object, kubectl get -o yaml, carries it)", f.refused)))
			}
		}
		if labels, ok := meta["labels"].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				for _, prefix := range forbiddenLabels {
					if strings.HasPrefix(k, prefix) {
						c.errs = append(c.errs, field.Forbidden(path.Child("metadata", "labels").Key(k),
							fmt.Sprintf("labels under %s are set by kro-agent to track ownership and cannot be written in a template", prefix)))
					}
				}
			}
		}
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			if _, set := annotations[v1alpha1.AnnotationAdoptBy]; set {
				c.errs = append(c.errs, field.Forbidden(path.Child("metadata", "annotations").Key(v1alpha1.AnnotationAdoptBy),
					"an object's owner sets it on an object kro-agent did not make, to hand it to an instance; a template makes the object, and cannot write it"))
			}
		}
	}
	if !ok {
		return nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(path.Child("apiVersion"), apiVersion, err.Error()))
		return nil
	}
	info := c.resolve(gv.WithKind(kind), path.Child("kind"))
	if info == nil {
		return nil
	}
	ns, hasNS := meta["namespace"]
	if hasNS && !info.Namespaced && info.Schema != nil {
		c.errs = append(c.errs, field.Forbidden(path.Child("metadata", "namespace"),
			fmt.Sprintf("%s is cluster-scoped and cannot have a namespace", kindString(info.GVK))))
	}
	if ns == nil || ns == "" {
		c.requireNamespace(info, path.Child("metadata", "namespace"))
	}
	if info.Schema != nil {
		c.checkFields(t, info.Schema, path, nil, kindString(info.GVK))
	}
	return info
}

func (c *compiler) externalKind(n *Node, path *field.Path) *kinds.Info {
	ref := n.External
	if ref.APIVersion == "" {
		c.errs = append(c.errs, field.Required(path.Child("apiVersion"), ""))
	}
	if ref.Kind == "" {
		c.errs = append(c.errs, field.Required(path.Child("kind"), ""))
	}
	hasName, hasSelector := ref.Metadata.Name != "", ref.Metadata.HasSelector()
	if hasName == hasSelector {
		c.errs = append(c.errs, field.Invalid(path.Child("metadata"), ref.Metadata.Name, "set exactly one of name and selector"))
	}
	if ref.APIVersion == "" || ref.Kind == "" {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error()))
		return nil
	}
	info := c.resolve(gv.WithKind(ref.Kind), path.Child("kind"))
	if info != nil && !info.Namespaced && info.Schema != nil && ref.Metadata.Namespace != "" {
		c.errs = append(c.errs, field.Forbidden(path.Child("metadata", "namespace"),
			fmt.Sprintf("%s is cluster-scoped and cannot have a namespace", kindString(info.GVK))))
	}
	if info != nil && ref.Metadata.Namespace == "" && !hasSelector {
		// A selector without a namespace lists every namespace.
		c.requireNamespace(info, path.Child("metadata", "namespace"))
	}
	return info
}

// requireNamespace reports a namespaced kind written without a namespace in
// an RGD whose instances are cluster-scoped: the instance's namespace, which
// such an object takes by default, does not exist.
func (c *compiler) requireNamespace(info *kinds.Info, path *field.Path) {
	s := c.rgd.Spec.Schema
	if s.Scope != v1alpha1.ScopeCluster || !info.Namespaced || info.Schema == nil {
		return
	}
	c.errs = append(c.errs, field.Required(path, fmt.Sprintf(
		"%s is namespaced and instances of %s are cluster-scoped, so there is no instance namespace to default to; set one (it may use expressions)",
		kindString(info.GVK), s.Kind)))
}

// What the error of a kind the cluster does not serve says, for
// MissingKind to find.
const (
	hintNotInstalled = "is its CRD installed?"
	hintUninstalled  = "is deleted or being deleted"
)

// MissingKind reports whether an error message of Compile says that a kind
// is not served (unknown, or its CRD removed): installing the CRD, rather
// than editing the RGD, may be the fix.
func MissingKind(msg string) bool {
	return strings.Contains(msg, hintNotInstalled) || strings.Contains(msg, hintUninstalled)
}

// resolve finds a kind, or reports it unknown. With AllowUnknownKinds an
// unknown kind gives an Info without schema, typed dyn.
func (c *compiler) resolve(gvk schema.GroupVersionKind, path *field.Path) *kinds.Info {
	info, err := c.opts.Resolver.Resolve(gvk)
	if err == nil {
		return info
	}
	// A kind of a built-in group is known even offline: one spelt
	// unlike any built-in kind is not let through as a custom resource's.
	hint := ""
	if errors.Is(err, kinds.ErrNotFound) {
		hint = kinds.Suggestion(gvk)
	}
	if errors.Is(err, kinds.ErrNotFound) && c.opts.AllowUnknownKinds && hint == "" {
		return &kinds.Info{GVK: gvk, Namespaced: true}
	}
	if errors.Is(err, kinds.ErrNotFound) && hint == "" {
		// A kind of a custom group: a version or a spelling the cluster
		// serves is still likelier than a CRD not installed.
		hint = kinds.Suggest(c.opts.Resolver, gvk)
	}
	var uninstalled *kinds.UninstalledError
	switch {
	case errors.As(err, &uninstalled):
		c.errs = append(c.errs, field.NotFound(path, fmt.Sprintf("%s (its CustomResourceDefinition %s %s)", kindString(gvk), uninstalled.CRD, hintUninstalled)))
	case errors.Is(err, kinds.ErrNotFound):
		if hint == "" {
			hint = hintNotInstalled
		}
		c.errs = append(c.errs, field.NotFound(path, kindString(gvk)+" ("+hint+")"))
	default:
		c.errs = append(c.errs, field.InternalError(path, err))
	}
	return nil
}

// checkFields reports template fields the kind's schema does not have: the
// API server would refuse them at apply time, much later and per instance.
func (c *compiler) checkFields(v any, s *spec.Schema, base *field.Path, at expr.Path, kind string) {
	if s == nil || isFreeForm(s) {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			child, ok := s.Properties[k]
			switch {
			case ok:
				c.checkFields(t[k], &child, base, at.Child(k), kind)
			case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
				c.checkFields(t[k], s.AdditionalProperties.Schema, base, at.Child(k), kind)
			case s.AdditionalProperties != nil && s.AdditionalProperties.Allows:
			case len(s.Properties) > 0:
				c.errs = append(c.errs, field.NotFound(at.Child(k).FieldPath(base), fmt.Sprintf("%s has no field %s%s", kind, at.Child(k), unknownFieldHint(k, s, at))))
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, item := range t {
				c.checkFields(item, s.Items.Schema, base, at.Index(i), kind)
			}
		}
	}
}

// unknownFieldHint says what a field the schema s lacks may have been
// meant as: the key YAML wrote for an unquoted on or no, or the field of s
// spelt most like it.
func unknownFieldHint(k string, s *spec.Schema, at expr.Path) string {
	if words := yamlWords(k); words != "" {
		return fmt.Sprintf(" (YAML reads an unquoted %s as the boolean %s: quote the key)", words, k)
	}
	if best, ok := spelling.Closest(k, slices.Sorted(maps.Keys(s.Properties))); ok {
		return fmt.Sprintf("; did you mean %s?", at.Child(best))
	}
	return ""
}

func isFreeForm(s *spec.Schema) bool {
	for _, ext := range []string{"x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource"} {
		if v, ok := s.Extensions[ext].(bool); ok && v {
			return true
		}
	}
	return false
}

// variables are the names in scope for the graph's expressions: the
// instance and every resource (a list for a collection).
func (c *compiler) variables(instance *spec.Schema) []celenv.Var {
	vars := []celenv.Var{{Name: SchemaVar, Schema: instance}}
	for _, n := range c.nodes {
		vars = append(vars, celenv.Var{Name: n.ID, Schema: n.schemaOf(), List: c.isCollection(n)})
	}
	return vars
}

func (c *compiler) isCollection(n *Node) bool {
	r := c.rgd.Spec.Resources[n.Index]
	return len(r.ForEach) > 0 || (r.ExternalRef != nil && r.ExternalRef.Metadata.HasSelector())
}

func kindString(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}
