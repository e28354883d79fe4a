package graph

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// compileNode compiles every expression of one resource and records its
// dependencies.
func (c *compiler) compileNode(n *Node) {
	r := c.rgd.Spec.Resources[n.Index]
	p := c.paths[n.ID]
	deps := map[string]bool{}
	addDeps := func(refs []string) {
		for _, ref := range refs {
			if c.byID[ref] != nil {
				deps[ref] = true
			}
		}
	}

	env := c.env
	if len(r.ForEach) > 0 {
		env = c.compileForEach(n, r.ForEach, p.Child("forEach"))
		for _, it := range n.ForEach {
			addDeps(it.List.References)
		}
	}

	switch {
	case n.Template != nil:
		fields, errs := expr.Find(n.Template, p.Child("template"))
		c.errs = append(c.errs, errs...)
		for _, f := range fields {
			if cf := c.compileField(env, f, p.Child("template"), n.schemaOf()); cf != nil {
				n.Fields = append(n.Fields, cf)
				addDeps(cf.References())
			}
		}
		c.checkIteratorsInName(n, p)
		c.checkLiterals(n.Template, nil, n.schemaOf(), p.Child("template"), n.Kind != nil && n.Kind.Custom)
		c.warnForeignPlaceholders(env, n.Template, nil, p.Child("template"))
		c.warnLabelText(n.Template, nil, p.Child("template"))
		c.warnContainers(n, p.Child("template"))
		c.warnQuantities(n.Template, nil, p.Child("template"))
		c.warnGuardedReads(n, p.Child("template"))
	case n.External != nil:
		c.compileExternal(n, p.Child("externalRef"), addDeps)
	}

	for i, src := range r.IncludeWhen {
		ip := p.Child("includeWhen").Index(i)
		before := len(c.errs)
		e := c.compileCondition(c.env, src, ip)
		if e == nil {
			// An iterator, not in scope here, is the error to explain.
			if it, cond := readsIterator(n, env, src); it != nil {
				c.errs = append(c.errs[:before], field.Invalid(ip, src, fmt.Sprintf(
					"includeWhen decides whether the whole collection exists, so it cannot read the iterator %s; to leave some items out, filter its list: %s: ${%s.filter(%s, %s)}",
					it.Name, it.Name, it.List.Source, it.Name, cond)))
			}
			continue
		}
		if slices.Contains(e.References, n.ID) {
			c.errs = append(c.errs, field.Invalid(ip, src, "includeWhen cannot reference the resource it decides on"))
			continue
		}
		n.IncludeWhen = append(n.IncludeWhen, e)
		addDeps(e.References)
	}

	c.compileReadyWhen(n, env, r.ReadyWhen, p.Child("readyWhen"))

	for id := range deps {
		n.Dependencies = append(n.Dependencies, id)
	}
	sort.Strings(n.Dependencies)
}

// readsIterator returns the first of n's iterators that the condition src
// (an includeWhen or readyWhen, where they are not in scope) reads when
// compiled where they are (env, with extra declared), with the expression
// inside its ${...}; nil when it reads none, or does not compile there
// either. It is asked only once src failed to compile, so a valid RGD
// compiles each condition once.
func readsIterator(n *Node, env *celenv.Env, src string, extra ...celenv.Var) (*Iterator, string) {
	if len(n.ForEach) == 0 {
		return nil, ""
	}
	segs, err := expr.Parse(src)
	if err != nil || !expr.IsStandalone(segs) {
		return nil, ""
	}
	if len(extra) > 0 {
		if env, err = env.Extend(extra...); err != nil {
			return nil, ""
		}
	}
	ast, err := env.Compile(segs[0].Expr)
	if err != nil {
		return nil, ""
	}
	refs := references(ast)
	for _, it := range n.ForEach {
		if slices.Contains(refs, it.Name) {
			return it, segs[0].Expr
		}
	}
	return nil, ""
}

// compileForEach compiles the iterators' list expressions and returns the
// environment of the node's template, where the iterators are in scope.
func (c *compiler) compileForEach(n *Node, dims []v1alpha1.ForEachDimension, path *field.Path) *celenv.Env {
	if len(dims) > c.opts.MaxForEachDimensions {
		c.errs = append(c.errs, field.TooMany(path, len(dims), c.opts.MaxForEachDimensions))
	}
	var vars []celenv.Var
	seen := map[string]bool{}
	for i, dim := range dims {
		dp := path.Index(i)
		if len(dim) != 1 {
			c.errs = append(c.errs, field.Invalid(dp, dim, "each forEach entry maps one iterator name to a list expression"))
			continue
		}
		for name, src := range dim {
			np := dp.Key(name)
			switch {
			case !iteratorPattern.MatchString(name):
				c.errs = append(c.errs, field.Invalid(np, name, "iterator names are lowerCamelCase identifiers, such as "+suchAs(name, false, "queue")))
				continue
			case name == "true" || name == "false":
				// YAML 1.1, as kubectl reads manifests, turns these keys
				// into booleans: an iterator written n arrives as false.
				c.errs = append(c.errs, field.Invalid(np, name, yamlBoolKey(name)))
				continue
			case c.byID[name] != nil:
				c.errs = append(c.errs, field.Invalid(np, name, fmt.Sprintf("iterator name clashes with the id of resource %s; choose another", name)))
				continue
			case reserved(name):
				c.errs = append(c.errs, field.Invalid(np, name, "is a reserved word; choose another iterator name"))
				continue
			case seen[name]:
				c.errs = append(c.errs, field.Duplicate(np, name))
				continue
			}
			seen[name] = true
			e := c.compileStandalone(c.env, src, np)
			elem, ok := c.iteratorElem(n, e, src, np)
			if ok {
				n.ForEach = append(n.ForEach, &Iterator{Name: name, List: e})
			} else {
				// Declared all the same, untyped, so that the template's
				// uses of it are not reported too.
				elem = cel.DynType
			}
			vars = append(vars, celenv.Var{Name: name, Type: elem})
		}
	}
	if len(vars) == 0 {
		return c.env
	}
	env, err := c.env.Extend(vars...)
	if err != nil {
		c.errs = append(c.errs, field.InternalError(path, err))
		return c.env
	}
	return env
}

// iteratorElem checks an iterator's compiled list expression (nil when it
// did not compile) and returns the type of its elements.
func (c *compiler) iteratorElem(n *Node, e *Expression, src string, np *field.Path) (*cel.Type, bool) {
	if e == nil {
		return nil, false
	}
	if slices.Contains(e.References, n.ID) {
		c.errs = append(c.errs, field.Invalid(np, src, "a collection cannot iterate over itself"))
		return nil, false
	}
	elem, ok := celenv.ListElem(e.Type)
	if !ok {
		msg := fmt.Sprintf("forEach needs a list, but the expression has type %s", celenv.TypeString(e.Type))
		receiver := e.Source
		if strings.ContainsAny(receiver, " +-*/?:|&<>=!") {
			receiver = "(" + receiver + ")"
		}
		switch e.Type.Kind() {
		case types.MapKind:
			msg += fmt.Sprintf("; to iterate over its keys (in their sorted order), write ${%s.map(k, k)}", receiver)
		case types.IntKind:
			msg += fmt.Sprintf("; for that many items, numbered from 0, write ${lists.range(%s)}", e.Source)
		case types.StringKind:
			msg += fmt.Sprintf("; for one item per comma-separated part of it, write ${%s.split(\",\")}, or for one item, ${[%s]}", receiver, e.Source)
		}
		c.errs = append(c.errs, field.Invalid(np, src, msg))
		return nil, false
	}
	return elem, true
}

// checkIteratorsInName makes sure every item of a collection gets its own
// name: each iterator must appear in metadata.name.
func (c *compiler) checkIteratorsInName(n *Node, p *field.Path) {
	if len(n.ForEach) == 0 {
		return
	}
	var refs []string
	compiled := false
	for _, f := range n.Fields {
		if f.Path.String() == "metadata.name" {
			refs, compiled = f.References(), true
		}
	}
	if !compiled && strings.Contains(nameOf(n.Template), "${") {
		// The name's expressions did not compile and that error is
		// reported already; which iterators they use is unknown.
		return
	}
	for _, it := range n.ForEach {
		if !slices.Contains(refs, it.Name) {
			c.errs = append(c.errs, field.Invalid(p.Child("template", "metadata", "name"), nameOf(n.Template),
				fmt.Sprintf("forEach iterator %q must be used in metadata.name, or the collection's items would share one name", it.Name)))
		}
	}
}

func nameOf(t map[string]any) string {
	meta, _ := t["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}

// compileReadyWhen compiles readiness checks, which may read only the
// resource itself (`each` for a collection's items).
func (c *compiler) compileReadyWhen(n *Node, iterEnv *celenv.Env, srcs []string, path *field.Path) {
	if len(srcs) == 0 {
		return
	}
	self := n.ID
	env := c.env
	if len(n.ForEach) > 0 || n.IsExternalCollection() {
		// Judged item by item.
		self = EachVar
		var err error
		env, err = c.env.Extend(celenv.Var{Name: EachVar, Schema: n.schemaOf()})
		if err != nil {
			c.errs = append(c.errs, field.InternalError(path, err))
			return
		}
	}
	notSelf := func(ip *field.Path, src, ref string) *field.Error {
		if ref == n.ID && self == EachVar {
			// The collection by its id, as one object's readyWhen reads it.
			msg := fmt.Sprintf("%s is a collection, whose readyWhen judges each item by itself, as each", n.ID)
			if meant := renamed(src, n.ID, EachVar); compiles(env, meant) {
				msg += ": " + meant
			}
			return field.Invalid(ip, src, msg)
		}
		msg := fmt.Sprintf("readyWhen may reference only the resource itself (%s), not %s", self, ref)
		if ref == SchemaVar {
			if meant, where := readFromTemplate(n, env, src, self); meant != "" {
				msg += fmt.Sprintf("; the template writes %s, so read it there: %s", where, meant)
			}
		}
		return field.Invalid(ip, src, msg)
	}
	for i, src := range srcs {
		ip := path.Index(i)
		before := len(c.errs)
		e := c.compileCondition(env, src, ip)
		if e == nil {
			// Reading an iterator, or another resource, is the error to
			// fix first: how that resource is typed (a collection to
			// index, a field it lacks) does not matter here.
			if it, _ := readsIterator(n, iterEnv, src, celenv.Var{Name: EachVar, Schema: n.schemaOf()}); it != nil {
				c.errs = append(c.errs[:before], field.Invalid(ip, src, fmt.Sprintf(
					"readyWhen judges each item of the collection by its object alone (each), so it cannot read the iterator %s; read the item's own fields instead, where its template writes %s (each.metadata.name, each.data...)",
					it.Name, it.Name)))
			} else if others := c.otherResources(env, src, self); len(others) > 0 {
				c.errs = c.errs[:before]
				for _, ref := range others {
					c.errs = append(c.errs, notSelf(ip, src, ref))
				}
			} else if alias := selfAlias(env, src, self); alias != "" {
				// each, written as a collection's readyWhen reads its
				// items, where the resource is one object; or self, as
				// other tools' readiness rules name their object.
				msg := fmt.Sprintf("each stands for an item of a collection, and %s is no collection: its readyWhen reads it by its id, %s", self, self)
				if alias != EachVar {
					msg = fmt.Sprintf("%s names nothing here: a readyWhen reads its resource as %s", alias, self)
				}
				if meant := renamed(src, alias, self); compiles(env, meant) {
					msg += ": " + meant
				}
				c.errs = append(c.errs[:before], field.Invalid(ip, src, msg))
			}
			continue
		}
		for _, ref := range e.References {
			if ref != self {
				c.errs = append(c.errs, notSelf(ip, src, ref))
			}
		}
		n.ReadyWhen = append(n.ReadyWhen, e)
	}
}

// plainSelection matches an expression that only selects fields: a.b.c.
var plainSelection = regexp.MustCompile(`^[\w.]+$`)

// readFromTemplate rewrites a readyWhen src of n that reads the instance
// (schema.spec.replicas) to read, instead, the fields of n's template that
// are written from the same values (${schema.spec.replicas} as spec.replicas:
// deploy.spec.replicas), which a readyWhen may read. It returns the
// expression so written and where the template writes each value, or ""
// when a value src reads is not written whole into a template field.
func readFromTemplate(n *Node, env *celenv.Env, src, self string) (string, string) {
	meant := src
	var where []string
	for _, f := range n.Fields {
		if !f.Standalone() || len(f.Exprs) != 1 {
			continue
		}
		from := strings.TrimSpace(f.Exprs[0].Source)
		if !strings.HasPrefix(from, SchemaVar+".") || !plainSelection.MatchString(from) {
			continue
		}
		// Where src selects the same path (not a longer name, nor a
		// field below it).
		at := regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(from) + `($|[^\w.(])`)
		if !at.MatchString(meant) {
			continue
		}
		meant = at.ReplaceAllString(meant, "${1}"+self+"."+f.Path.String()+"${2}")
		where = append(where, fmt.Sprintf("%s into %s", from, f.Path))
	}
	if len(where) == 0 || slices.Contains(names(env, meant), SchemaVar) || !compiles(env, meant) {
		return "", ""
	}
	return meant, strings.Join(where, " and ")
}

// selfAlias is the name src reads its resource by, in a readyWhen whose
// resource is self, where that name is no variable: each for one object,
// self or this (other tools' name for the object judged). It is "" when
// src names none of them.
func selfAlias(env *celenv.Env, src, self string) string {
	read := names(env, src)
	for _, alias := range []string{EachVar, "self", "this"} {
		if alias != self && slices.Contains(read, alias) {
			return alias
		}
	}
	return ""
}

// renamed is src with the variable from, where it is selected from
// (from.field), written as to: a name ending in from (peach.x) or a field
// named from (x.each.y) stays.
func renamed(src, from, to string) string {
	return regexp.MustCompile(`(^|[^\w.])`+regexp.QuoteMeta(from)+`\.`).ReplaceAllString(src, "${1}"+to+".")
}

// compiles tells whether the ${...} expression src compiles in env, with
// no error noted: to check a suggestion before it is made.
func compiles(env *celenv.Env, src string) bool {
	segs, err := expr.Parse(src)
	if err != nil || !expr.IsStandalone(segs) {
		return false
	}
	_, err = buildExpr(env, segs[0].Expr)
	return err == nil
}

// otherResources lists the resource ids other than self that the ${...}
// expression src names, read from its parsed form alone: it may not check.
func (c *compiler) otherResources(env *celenv.Env, src, self string) []string {
	return slices.DeleteFunc(names(env, src), func(id string) bool { return id == self || c.byID[id] == nil })
}

// names lists, sorted, the names the ${...} expression src reads (not
// those its macros bind), from its parsed form alone: it may not check.
func names(env *celenv.Env, src string) []string {
	segs, err := expr.Parse(src)
	if err != nil || !expr.IsStandalone(segs) {
		return nil
	}
	ast, iss := env.CEL().Parse(segs[0].Expr)
	if iss.Err() != nil {
		return nil
	}
	var out []string
	for _, x := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.IdentKind)) {
		if !boundByMacro(x) && !slices.Contains(out, x.AsIdent()) {
			out = append(out, x.AsIdent())
		}
	}
	sort.Strings(out)
	return out
}

// inputsOf compiles each maximal field path an expression reads
// (deployment.status.?availableReplicas, each.spec.replicas) into an
// expression of its own.
func inputsOf(env *celenv.Env, src string) []*Expression {
	ast, err := env.Compile(src)
	if err != nil {
		return nil
	}
	native := ast.NativeRep()
	isPath := func(x celast.NavigableExpr) bool {
		return x.Kind() == celast.SelectKind && !x.AsSelect().IsTestOnly() ||
			x.Kind() == celast.CallKind && x.AsCall().FunctionName() == operators.OptSelect
	}
	seen := map[string]bool{}
	var out []*Expression
	for _, x := range celast.MatchDescendants(celast.NavigateAST(native), isPath) {
		if parent, ok := x.Parent(); ok && (isPath(parent) || parent.Kind() == celast.SelectKind) {
			continue // part of a longer path, or of a has() test
		}
		// x.?a.orValue(d) is read as the value the check used.
		if parent, ok := x.Parent(); ok && parent.Kind() == celast.CallKind && parent.AsCall().FunctionName() == "orValue" &&
			parent.AsCall().IsMemberFunction() && parent.AsCall().Target().ID() == x.ID() {
			x = parent
		}
		src, err := parser.Unparse(x, native.SourceInfo())
		if err != nil || seen[src] {
			continue
		}
		seen[src] = true
		// A path the compiler derived that does not compile on its own
		// only means there is nothing to show for it.
		if in, err := buildExpr(env, src); err == nil {
			out = append(out, in)
		}
	}
	return out
}

// compileCondition compiles a standalone expression that must be boolean.
func (c *compiler) compileCondition(env *celenv.Env, src string, path *field.Path) *Expression {
	e := c.compileStandalone(env, src, path)
	if e != nil && !celenv.IsBool(e.Type) {
		msg := fmt.Sprintf("must be a boolean expression, but has type %s", celenv.TypeString(e.Type))
		if test := celenv.TruthTest(e.Source, e.Type); test != "" {
			msg += "; test it, as in ${" + test + "}"
		}
		c.errs = append(c.errs, field.Invalid(path, src, msg))
		return nil
	}
	return e
}

// compileStandalone compiles a value that must be one ${...} expression.
func (c *compiler) compileStandalone(env *celenv.Env, src string, path *field.Path) *Expression {
	segs, err := expr.Parse(src)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(path, src, err.Error()))
		return nil
	}
	if !expr.IsStandalone(segs) {
		msg := "must be a single ${...} expression"
		if !expr.HasExpr(segs) {
			if b := strings.ToLower(strings.TrimSpace(src)); b == "true" || b == "false" {
				// A condition's status written as the Kubernetes
				// condition status it gives ("True").
				msg += ": write ${" + b + "}"
			} else if _, err := env.Compile(src); err == nil {
				// An expression written without its ${ }.
				msg += ": write ${" + src + "}"
			}
		}
		c.errs = append(c.errs, field.Invalid(path, src, msg))
		return nil
	}
	e := c.compileExpr(env, segs[0].Expr, path, src)
	if e != nil && e.callsOmit {
		c.errs = append(c.errs, field.Invalid(path, src, "omit() leaves a template field out of its object; it has no meaning here"))
		return nil
	}
	return e
}

// compileField compiles the expressions of one string field and checks
// their types against the field's schema (nil: no check).
func (c *compiler) compileField(env *celenv.Env, f expr.Field, base *field.Path, kindSchema *spec.Schema) *Field {
	fp := f.Path.FieldPath(base)
	raw := expr.Format(f.Segments)
	out := &Field{Path: f.Path, Segments: f.Segments}
	for _, seg := range f.Segments {
		if !seg.IsExpr {
			continue
		}
		e := c.compileExpr(env, seg.Expr, fp, raw)
		if e == nil {
			return nil
		}
		out.Exprs = append(out.Exprs, e)
	}
	target, known := schemaAt(kindSchema, f.Path)
	out.Quantity = known && kinds.IsQuantity(target)
	if f.Standalone() {
		if known {
			want := celenv.FieldType(target)
			got := out.Exprs[0].Type
			if why, ok := env.Fit(want, got); !ok {
				msg := fmt.Sprintf("expression has type %s, but the field expects %s", celenv.TypeString(got), celenv.TypeName(want))
				if why != "" {
					msg += ", " + why
				} else if hint := celenv.ConversionHint(want, got); hint != "" {
					msg += "; " + hint
				}
				c.errs = append(c.errs, field.Invalid(fp, raw, msg))
				return nil
			}
			// Text written where bytes go must be base64, which only its
			// value tells.
			if celenv.HoldsDyn(got) || celenv.TakesBytes(want) && got.Kind() == types.StringKind {
				out.Expects = want
			}
		}
		return out
	}
	for _, e := range out.Exprs {
		if !celenv.IsString(e.Type) {
			msg := fmt.Sprintf("${%s} is embedded in text, so it must be a string, but has type %s", e.Source, celenv.TypeString(e.Type))
			if hint := celenv.ConversionHint(apiservercel.StringType, e.Type); hint != "" {
				msg += "; " + hint
			}
			c.errs = append(c.errs, field.Invalid(fp, raw, msg))
			return nil
		}
	}
	// Text around the expressions makes the value a string, which the
	// API server would refuse in a field of another type at every apply.
	if known {
		want := celenv.FieldType(target)
		if _, ok := env.Fit(want, types.StringType); !ok {
			c.errs = append(c.errs, field.Invalid(fp, raw, fmt.Sprintf("text with ${...} in it is a string, but the field expects %s; write the whole value as one ${...} expression of that type",
				celenv.TypeName(want))))
			return nil
		}
		if celenv.TakesBytes(want) {
			out.Expects = want
			c.warnTextNeverBase64(f, base, raw)
		}
	}
	return out
}

// compileExpr parses, checks and plans one CEL expression, reporting a
// failure at path.
func (c *compiler) compileExpr(env *celenv.Env, src string, path *field.Path, raw string) *Expression {
	e, err := buildExpr(env, src)
	if err != nil {
		if id, at, ok := c.namesReservedID(src); ok {
			// Its own error (a syntax error for a CEL keyword, an
			// undeclared name for a reserved one) would say it again.
			c.errs = append(c.errs, field.Invalid(path, raw, fmt.Sprintf("names resource %s, whose id is a reserved word (%s): rename the resource, here too", id, at)))
			return nil
		}
		c.errs = append(c.errs, field.Invalid(path, raw, strings.TrimSpace(err.Error())))
		return nil
	}
	c.warnAbsentReads(e, path, raw)
	c.warnExpressionsInText(env, e, path, raw)
	if e.readsInstanceConditions {
		// Anything else reading them would feed the instance's status
		// back into what it is computed from.
		c.errs = append(c.errs, field.Invalid(path, raw,
			"runtime.condition(schema, ...) reads the instance's own conditions, which only conditions written as ${runtime.newCondition(...)} under spec.schema.status.conditions may do"))
		return nil
	}
	return e
}

// namesReservedID finds, in an expression that failed to compile, a
// resource whose id was refused as a reserved word, selected from as
// resources are (var.metadata, in[0]), and the path of that id.
func (c *compiler) namesReservedID(src string) (string, *field.Path, bool) {
	for _, id := range slices.Sorted(maps.Keys(c.reservedIDs)) {
		if regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(id) + `[.\[]`).MatchString(src) {
			return id, c.reservedIDs[id], true
		}
	}
	return "", nil, false
}

func buildExpr(env *celenv.Env, src string) (*Expression, error) {
	ast, err := env.Compile(src)
	if err != nil {
		return nil, err
	}
	return expressionOf(env, src, ast)
}

// expressionOf plans a checked expression.
func expressionOf(env *celenv.Env, src string, ast *cel.Ast) (*Expression, error) {
	prg, err := env.Program(ast)
	if err != nil {
		return nil, err
	}
	e := &Expression{Source: src, Program: prg, Type: ast.OutputType(), References: references(ast),
		callsOmit: callsOmit(ast), readsInstanceConditions: readsInstanceConditions(ast), CallsNow: cellib.CallsNow(ast)}
	compiler := env.Compiler()
	e.inputs = sync.OnceValue(func() []*Expression { return inputsOf(compiler, src) })
	if slices.Contains(e.References, SchemaVar) {
		e.InstanceFields = selections(ast, SchemaVar, false)
		e.InstanceReads = selections(ast, SchemaVar, true)
	}
	return e, nil
}

// selections lists the paths an expression selects from the variable
// root with plain selections and constant keys: for the instance,
// schema.spec.tags is spec.tags, schema.metadata.labels["team"] is
// metadata.labels.team. With orMissing, a selection that may find nothing
// (.?x, [?"x"], has(x)) goes on into the field; without, it ends the path
// before it. Anything computed ends it.
func selections(ast *cel.Ast, root string, orMissing bool) []expr.Path {
	isRoot := func(x celast.NavigableExpr) bool {
		return x.Kind() == celast.IdentKind && x.AsIdent() == root && !boundByMacro(x)
	}
	seen := map[string]bool{}
	var out []expr.Path
	for _, x := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), isRoot) {
		var p expr.Path
		for parent, ok := x.Parent(); ok; parent, ok = x.Parent() {
			key, mustExist, ok := selectedKey(parent, x)
			if !ok || !mustExist && !orMissing {
				break
			}
			p = p.Child(key)
			x = parent
		}
		if len(p) > 0 && !seen[p.String()] {
			seen[p.String()] = true
			out = append(out, p)
		}
	}
	return out
}

// selectedKey returns the key parent selects from its operand x, if it
// selects one by a constant: x.key or x["key"], which must exist, or
// x.?key, x[?"key"] or has(x.key), which may be missing.
func selectedKey(parent, x celast.NavigableExpr) (key string, mustExist, ok bool) {
	switch parent.Kind() {
	case celast.SelectKind:
		s := parent.AsSelect()
		return s.FieldName(), !s.IsTestOnly(), true
	case celast.CallKind:
		c := parent.AsCall()
		args := c.Args()
		fn := c.FunctionName()
		if fn != operators.Index && fn != operators.OptIndex && fn != operators.OptSelect || len(args) != 2 || args[0].ID() != x.ID() || args[1].Kind() != celast.LiteralKind {
			return "", false, false
		}
		key, ok := args[1].AsLiteral().Value().(string)
		return key, fn == operators.Index, ok
	}
	return "", false, false
}

// callsOmit reports whether the expression calls omit().
func callsOmit(ast *cel.Ast) bool {
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if slices.Contains(ref.OverloadIDs, cellib.OmitOverload) {
			return true
		}
	}
	return false
}

// references lists the variables an expression reads: names in its scope,
// not the variables its macros bind (x in list.exists(x, ...)), which the
// checker resolves like any other identifier.
func references(ast *cel.Ast) []string {
	native := ast.NativeRep()
	idents := map[int64]celast.NavigableExpr{}
	for _, x := range celast.MatchDescendants(celast.NavigateAST(native), celast.KindMatcher(celast.IdentKind)) {
		idents[x.ID()] = x
	}
	seen := map[string]bool{}
	for id, ref := range native.ReferenceMap() {
		if ref.Name == "" || ref.Value != nil {
			continue
		}
		if x, ok := idents[id]; ok && boundByMacro(x) {
			continue
		}
		seen[ref.Name] = true
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// boundByMacro reports whether an identifier is a variable of an enclosing
// comprehension: used in its body, named as its iteration or accumulator
// variable. The list it ranges over and its initial value are outside it.
func boundByMacro(ident celast.NavigableExpr) bool {
	name := ident.AsIdent()
	child := ident
	for parent, ok := ident.Parent(); ok; parent, ok = parent.Parent() {
		if parent.Kind() == celast.ComprehensionKind {
			c := parent.AsComprehension()
			inBody := child.ID() != c.IterRange().ID() && child.ID() != c.AccuInit().ID()
			if inBody && (name == c.IterVar() || name == c.AccuVar() || c.HasIterVar2() && name == c.IterVar2()) {
				return true
			}
		}
		child = parent
	}
	return false
}

// schemaAt walks a kind's schema along p. known is false when the schema
// says nothing about the value there (no schema, free-form, int-or-string).
func schemaAt(s *spec.Schema, p expr.Path) (target *spec.Schema, known bool) {
	for _, step := range p {
		if s == nil || isFreeForm(s) {
			return nil, false
		}
		if step.IsIndex {
			if s.Items == nil || s.Items.Schema == nil {
				return nil, false
			}
			s = s.Items.Schema
			continue
		}
		if prop, ok := s.Properties[step.Key]; ok {
			s = &prop
			continue
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			s = s.AdditionalProperties.Schema
			continue
		}
		return nil, false
	}
	if s == nil {
		return nil, false
	}
	return s, true
}

// yamlBoolKey explains an iterator named true or false, which is what YAML
// 1.1 makes of a key like n or y.
func yamlBoolKey(name string) string {
	short := celenv.YAMLBooleanWords(name)[0]
	return fmt.Sprintf("iterator name %s is a reserved word; if it was written %s, YAML read it as the boolean %s: quote it (\"%s\": ...) or choose a longer name", name, yamlWords(name), name, short)
}

// yamlWords lists the words YAML reads as the boolean b, "n, no or off";
// "" when b is not "true" or "false".
func yamlWords(b string) string {
	words := celenv.YAMLBooleanWords(b)
	if len(words) == 0 {
		return ""
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
