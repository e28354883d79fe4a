// Package graph compiles a ResourceGraphDefinition into an immutable Graph:
// the instance schema and generated CRD, every resource with its kind and its
// expressions compiled and type-checked, the dependencies between resources
// and their topological order. Everything that can be checked once per RGD
// generation is checked here, so reconciling an instance only evaluates
// programs that already exist.
package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/simpleschema"
)

// Names with a fixed meaning in expressions.
const (
	// SchemaVar is the instance, as expressions see it.
	SchemaVar = "schema"
	// EachVar is the item of a collection in the collection's readyWhen.
	EachVar = "each"
)

// Graph is a compiled RGD. It is immutable and shared by every instance.
type Graph struct {
	// Instance is the group, version and kind of the instances.
	Instance schema.GroupVersionKind
	// Resource is the plural resource name of the instances.
	Resource string
	// Namespaced is false for a cluster-scoped instance kind.
	Namespaced bool
	// CRD is the CustomResourceDefinition serving the instances.
	CRD *extv1.CustomResourceDefinition
	// Nodes are the resources in topological order.
	Nodes []*Node
	// Status are the projected status fields, in a stable order.
	Status []*Field
	// Conditions are the custom instance conditions the RGD declares.
	Conditions []*CustomCondition
	// ComputedConditions are custom conditions written as upstream kro
	// writes them: expressions returning runtime.newCondition(...) or a
	// list of them. They are written beside the built-in conditions and do
	// not count toward Ready.
	ComputedConditions []*Expression
	// InstanceFormats are where instances hold strings that expressions
	// see as timestamps and the like (metadata.creationTimestamp).
	InstanceFormats *celenv.Formats
	// InstanceDefaults are the defaults of the instance's spec, which an
	// instance read from a cache may lack: it fills them in as the API
	// server would.
	InstanceDefaults *Defaults
	// InstanceSpec is the type of the instance's spec, which an instance
	// stored before a breaking change of the schema may not fit.
	InstanceSpec *apiservercel.DeclType
	// ObservedGeneration tells that kro-agent writes the instances'
	// status.observedGeneration (StatusObservedGeneration): the RGD does
	// not project a field of that name, as an RGD written for upstream kro
	// may.
	ObservedGeneration bool

	// schemaWarnings are the schema's part of Warnings: its fields named
	// true or false, its fields written as an OpenAPI schema, and its
	// printer columns naming no field.
	schemaWarnings []string
	// readWarnings are the expressions' part: reads of a field their
	// object never has, and guarded reads of a resource includeWhen may
	// leave out.
	readWarnings []string
}

// AgentWrites reports whether k, a top-level field of an instance's
// status, is one kro-agent writes rather than one the RGD projects.
func (g *Graph) AgentWrites(k string) bool {
	return IsAgentStatusField(k) || g.ObservedGeneration && k == StatusObservedGeneration
}

// Declares reports whether the RGD declares a custom condition of type t
// (SPEC §5), whether or not it counts toward Ready.
func (g *Graph) Declares(t string) bool {
	return slices.ContainsFunc(g.Conditions, func(c *CustomCondition) bool { return c.Type == t })
}

// Negative reports whether t is a custom condition of negative polarity,
// one whose True is the unhappy status.
func (g *Graph) Negative(t string) bool {
	return slices.ContainsFunc(g.Conditions, func(c *CustomCondition) bool { return c.Type == t && c.Polarity == PolarityNegative })
}

// Order returns the ids of the nodes in topological order.
func (g *Graph) Order() []string {
	ids := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// Warnings are the graph's Hints, then its ReadWarnings.
func (g *Graph) Warnings() []string {
	return append(g.Hints(), g.readWarnings...)
}

// ReadWarnings are the template names holding text no name of their kind
// may, the workload selectors their pod templates' labels do not match,
// the labels no label may be, what the API server's validation of a
// built-in kind refuses beyond its schema (containers.go, kindrules.go:
// a container's names, ports, probes and mounts, a quantity, a Job's
// restart policy, a Service's ports, a CronJob's schedule, a claim's
// access modes, text that is not base64 where bytes go), the values their
// field's enum does not hold, the keyed lists with two items of one key,
// and the required fields templates leave out, then the
// expressions reading a field their object never has (a
// Secret's stringData, which the API server never returns), reading a
// resource includeWhen may leave out on one side of ? : only, or holding
// ${...} in a string literal, and the placeholders of other templating
// languages ({{ schema.spec.name }}), in the order the RGD gives them:
// such a name or selector is refused for every instance, what waits for such a value
// waits for good, such a guard never keeps its resource, and such a
// literal or placeholder is text where an expression was meant.
func (g *Graph) ReadWarnings() []string {
	return slices.Clone(g.readWarnings)
}

// Hints flag legal but suspicious things, cheaply: a readyWhen or
// includeWhen that reads nothing is a constant, which is rarely meant; a
// schema field or template key named true or false is what YAML makes of
// an unquoted y or n (a point's x and y become the fields x and true, and
// instances written in YAML fill true where JSON clients and expressions
// ask for y); a field written as an OpenAPI schema ({type: object,
// properties: ...}), which SimpleSchema reads as fields named type and
// properties; a printer column naming no field of the schema, empty for
// every instance; a template's status, which the API server drops from the
// apply of any kind whose status is a subresource (as a rule: copied from
// kubectl get -o yaml); and an object put in the namespace another resource
// makes without reading it, which nothing orders after it. They come in the
// RGD's order: the schema first, then resource by resource.
func (g *Graph) Hints() []string {
	out := slices.Clone(g.schemaWarnings)
	for _, n := range g.Nodes {
		base := field.NewPath("spec", "resources").Key(n.ID).Child("template")
		if _, ok := n.Template["status"]; ok && n.External == nil {
			kind, _ := n.Template["kind"].(string)
			out = append(out, fmt.Sprintf("%s: the API server drops status from kro-agent's apply of a %s where status is a subresource, as it is for every built-in kind and most custom ones: its controller writes it; leave it out of the template",
				base.Child("status"), kind))
		}
		for _, at := range booleanKeys(n.Template, nil) {
			out = append(out, booleanKeyWarning(at, base))
		}
		if hint := g.namespaceOrderHint(n); hint != "" {
			out = append(out, hint)
		}
		for _, conds := range []struct {
			field string
			exprs []*Expression
		}{{"readyWhen", n.ReadyWhen}, {"includeWhen", n.IncludeWhen}} {
			for i, e := range conds.exprs {
				if len(e.References) == 0 {
					out = append(out, fmt.Sprintf("spec.resources[%s].%s[%d]: ${%s} reads nothing, so it is always the same", n.ID, conds.field, i, e.Source))
				}
			}
		}
	}
	return out
}

// booleanKeyWarning says that the key true or false at the end of at,
// below base, is what YAML reads an unquoted word as.
func booleanKeyWarning(at expr.Path, base *field.Path) string {
	b := at[len(at)-1].Key
	return fmt.Sprintf("%s: YAML reads an unquoted %s as the boolean %s, which is the key here: quote the key if you meant the word",
		at.FieldPath(base), yamlWords(b), b)
}

// schemaBooleanKeyWarnings warn of the fields named true or false in the
// decoded spec, types and status of an RGD's schema.
func schemaBooleanKeyWarnings(spec, types, status map[string]any) []string {
	var out []string
	for _, part := range []struct {
		name   string
		fields map[string]any
	}{{"spec", spec}, {"types", types}, {"status", status}} {
		for _, at := range booleanKeys(part.fields, nil) {
			out = append(out, booleanKeyWarning(at, schemaPath.Child(part.name)))
		}
	}
	return out
}

// openAPIWarnings are the hints for the maps of the schema's spec and types
// written as an OpenAPI schema ({type: string}), which SimpleSchema reads
// as objects with a field named type.
func openAPIWarnings(spec, types map[string]any) []string {
	var out []string
	for _, part := range []struct {
		name   string
		fields map[string]any
	}{{"spec", spec}, {"types", types}} {
		for _, at := range simpleschema.WrittenAsOpenAPI(part.fields) {
			p := schemaPath.Child(part.name)
			for _, k := range at {
				p = p.Child(k)
			}
			if len(at) == 0 || part.name == "types" && len(at) == 1 {
				// A whole section or custom type.
				name := part.name
				if len(at) == 1 {
					name = at[0]
				}
				out = append(out, fmt.Sprintf("%s reads as an OpenAPI schema, which SimpleSchema takes for fields named type and properties: declare each field by its name, its type as its value (%s: {name: string, replicas: integer})", p, name))
				continue
			}
			out = append(out, fmt.Sprintf("%s reads as an OpenAPI schema, which SimpleSchema takes for an object with fields named type and properties: declare its fields directly, each by its name, its type as its value (%s: {name: string, replicas: integer})", p, at[len(at)-1]))
		}
	}
	return out
}

// booleanKeys are the paths, under at, of v's keys true and false.
func booleanKeys(v any, at expr.Path) []expr.Path {
	var out []expr.Path
	walk(v, at, func(_ any, p expr.Path) bool {
		if k := lastKey(p); len(p) > len(at) && (k == "true" || k == "false") {
			out = append(out, p)
		}
		return true
	})
	return out
}

// Node returns the node with the given id, or nil.
func (g *Graph) Node(id string) *Node {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// ReadsSecret tells whether in, one of an expression's Inputs, reads the
// data of a Secret of the graph (or the whole of one), or an iterator over
// a list read from one. Such a value is not quoted where an expression is
// explained: an instance's conditions and events, and kubectl kro, reach
// more readers than the Secret does.
func (g *Graph) ReadsSecret(in *Expression) bool {
	for _, ref := range in.References {
		if n := g.Node(ref); n != nil && n.IsSecret() && ReadsSecretData(in.Source, ref) {
			return true
		}
		for _, n := range g.Nodes {
			for _, it := range n.ForEach {
				if it.Name == ref && slices.ContainsFunc(it.List.References, func(id string) bool {
					m := g.Node(id)
					return m != nil && m.IsSecret()
				}) {
					return true
				}
			}
		}
	}
	return false
}

// ReadsSecretData tells whether src, a field path read from a Secret bound
// to name (deployment's own name, or each), reads its data or stringData,
// or the whole object.
func ReadsSecretData(src, name string) bool {
	rest, ok := strings.CutPrefix(src, name+".")
	if !ok {
		return true
	}
	rest = strings.TrimPrefix(rest, "?")
	field := rest[:len(rest)-len(strings.TrimLeft(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"))]
	return field == "data" || field == "stringData" || field == ""
}

// Node is one resource of the graph.
type Node struct {
	ID string
	// Index is the resource's position in the RGD, its authoring order.
	Index int
	// Kind is what the cluster knows of the resource's kind; its Schema is
	// nil when the kind was not known at compile time (offline validation).
	Kind *kinds.Info
	// Template is the object with its ${...} strings, for a template node.
	// Shared: instances render into a copy.
	Template map[string]any
	// External is set for an externalRef node, which is read, never written.
	External *v1alpha1.ExternalRef
	// Reference is an externalRef's metadata as an object,
	// {metadata: {name, namespace, selector}}, with its ${...} strings:
	// what Fields are rendered into.
	Reference map[string]any
	// Fields are the template's (or externalRef's) strings with expressions.
	Fields []*Field
	// ReadyWhen must all be true for the resource to be ready.
	ReadyWhen []*Expression
	// IncludeWhen must all be true for the resource to exist.
	IncludeWhen []*Expression
	// ForEach makes the node a collection: the cartesian product of the
	// iterators' lists.
	ForEach []*Iterator
	// Dependencies are the ids this node needs, in topological order.
	Dependencies []string
	// Formats are where objects of the kind hold strings that expressions
	// see as bytes, timestamps or durations (a Secret's data).
	Formats *celenv.Formats
	// Defaults are those of a custom kind's schema, nil for a built-in
	// kind (the API server's own defaulting fills objects in as they are
	// written) or a schema without any.
	Defaults *Defaults
}

// IsSecret reports whether the node's objects are core Secrets.
func (n *Node) IsSecret() bool {
	return n.Kind != nil && n.Kind.GVK.Group == "" && n.Kind.GVK.Kind == "Secret"
}

// IsCollection reports whether the node expands to many objects.
func (n *Node) IsCollection() bool { return len(n.ForEach) > 0 }

// IsManaged reports whether the agent writes the node's objects and knows
// their kind: a template (not an externalRef) of a kind that was resolved.
func (n *Node) IsManaged() bool { return n.Template != nil && n.Kind != nil }

// Inputs are the field paths e reads (deployment.status.readyReplicas,
// schema.spec.?port.orValue(80)), each compiled on its own, so that a check
// that is false or an expression that fails can be explained with the
// values it saw. They are compiled once, when first asked for: most
// expressions never fail, and an RGD is compiled at admission too.
func (e *Expression) Inputs() []*Expression {
	if e.inputs == nil {
		return nil
	}
	return e.inputs()
}

// Iterator is one forEach dimension.
type Iterator struct {
	Name string
	List *Expression
}

// Expression is one compiled CEL expression.
type Expression struct {
	Source  string
	Program cel.Program
	// Type is the checked result type.
	Type *types.Type
	// References are the names in scope the expression reads (resource ids,
	// schema, iterators), sorted.
	References []string
	// inputs are the field paths the expression reads, compiled on their
	// own when first asked for (Inputs).
	inputs func() []*Expression
	// InstanceFields are the fields of the instance an expression selects
	// (spec.tags for ${schema.spec.tags}), so that one the instance leaves
	// unset can be named when the expression cannot be evaluated.
	InstanceFields []expr.Path
	// InstanceReads are the fields of the instance an expression reads,
	// as InstanceFields, and those it may find missing (spec.tags for
	// ${schema.spec.?tags}), so that it is not given one the instance
	// holds in another type than its schema's.
	InstanceReads []expr.Path
	// callsOmit is set when the expression calls omit(), which only a
	// template field may.
	callsOmit bool
	// readsInstanceConditions is set when the expression calls
	// runtime.condition(schema, ...).
	readsInstanceConditions bool
	// CallsNow is set when the expression calls time.now(): what it gives
	// changes with the time.
	CallsNow bool
	// AbsentRead is set when the expression reads a field its object
	// never has (a Secret's stringData): an evaluation waiting for it says
	// why it waits for good.
	AbsentRead *AbsentRead
}

// Field is a string value holding expressions, at Path in its object.
type Field struct {
	Path expr.Path
	// Segments are the literal and expression parts; Exprs holds the
	// compiled program of each expression segment, in order.
	Segments []expr.Segment
	Exprs    []*Expression
	// Schema is the OpenAPI schema of the field (status fields only: the
	// inferred type written into the CRD).
	Schema *extv1.JSONSchemaProps
	// Expects is the type of the template field the expressions write
	// into, kept when their type leaves some of the value to run time (a
	// standalone dyn, or text where bytes go, which must be base64), so
	// that the value can be checked before it is applied
	// (celenv.ValueFits).
	Expects *apiservercel.DeclType
	// Quantity tells a field of a built-in kind that holds a quantity (a
	// container's memory limit), whose text is checked when it is
	// rendered: the API server's refusal of one names no field.
	Quantity bool
}

// Standalone reports whether the field's whole value is one expression.
func (f *Field) Standalone() bool { return expr.IsStandalone(f.Segments) }

// References returns every name the field's expressions read.
func (f *Field) References() []string {
	var refs []string
	for _, e := range f.Exprs {
		refs = append(refs, e.References...)
	}
	return refs
}

// Polarity says which status of a custom condition is the good one.
type Polarity string

const (
	// PolarityPositive: True is good (the default).
	PolarityPositive Polarity = "Positive"
	// PolarityNegative: True is bad, as in DiskPressure.
	PolarityNegative Polarity = "Negative"
)

// CustomCondition is an instance condition declared by the RGD.
type CustomCondition struct {
	Type   string
	Status *Expression
	Reason string
	// Message is optional; it may embed expressions.
	Message *Field
	ConditionTraits
}

// ConditionTraits say how a custom condition bears on Ready.
type ConditionTraits struct {
	CountsTowardReady bool
	Polarity          Polarity
}

// schemaOf returns the kind's schema, or nil when the kind is unknown.
func (n *Node) schemaOf() *spec.Schema {
	if n.Kind == nil {
		return nil
	}
	return n.Kind.Schema
}
