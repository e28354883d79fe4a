// Package celenv builds the CEL environment in which every RGD expression is
// compiled and type-checked: the API server's own base environment (the
// Kubernetes CEL libraries and the cel-go extensions it enables) plus the
// math, encoder and bindings (cel.bind) extensions and the functions
// upstream kro adds (package cellib), with one variable per name in scope,
// typed from OpenAPI schemas.
package celenv

import (
	"fmt"
	"slices"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/cellib"
)

// Var is a name in scope for expressions.
type Var struct {
	// Name is the identifier expressions use.
	Name string
	// Schema types the variable; nil makes it dyn (checked at run time only).
	Schema *spec.Schema
	// List makes the variable a list of Schema, as a collection is.
	List bool
	// Type, when set, types the variable instead of Schema. Object types in
	// it must already be declared in the environment being extended (an
	// iterator takes the element type of a list the environment knows).
	Type *cel.Type
}

// Env is a CEL environment with a fixed set of variables. It is immutable
// and safe for concurrent use.
type Env struct {
	set       *environment.EnvSet
	env       *cel.Env
	declTypes []*apiservercel.DeclType
	provider  *apiservercel.DeclTypeProvider
}

var (
	baseOnce sync.Once
	base     *environment.EnvSet
	baseErr  error
)

// libraryTypes are the object types the functions of cellib return.
var libraryTypes = []*apiservercel.DeclType{cellib.ConditionType}

// baseEnvSet is the API server's base environment, extended once per process.
func baseEnvSet() (*environment.EnvSet, error) {
	baseOnce.Do(func() {
		set := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
		base, baseErr = set.Extend(
			environment.VersionedOptions{
				IntroducedVersion: version.MajorMinor(1, 0),
				EnvOptions:        []cel.EnvOption{ext.Math(), ext.Encoders(), ext.Bindings(), cellib.Library(), cel.ASTValidators(mixedLiterals{})},
				DeclTypes:         libraryTypes,
			})
	})
	return base, baseErr
}

// mixedLiterals takes the place of the API server's check that a list or
// map literal holds one type. kro's environment has no such check, and RGDs
// written for it build objects with literals that mix types
// ({"name": p.name, "containerPort": p.port}). Such a literal is typed
// map(string, dyn), and the API server checks the fields it fills when the
// object is applied.
type mixedLiterals struct{}

// Name is the name of the check it replaces: a validator of the same name
// takes the place of the one configured before.
func (mixedLiterals) Name() string { return cel.ValidateHomogeneousAggregateLiterals().Name() }

func (mixedLiterals) Validate(*cel.Env, cel.ValidatorConfig, *celast.AST, *cel.Issues) {}

// New returns an environment declaring vars.
func New(vars ...Var) (*Env, error) {
	b, err := baseEnvSet()
	if err != nil {
		return nil, err
	}
	return (&Env{set: b}).Extend(vars...)
}

// dynType is a DeclType that accepts anything.
var dynType = apiservercel.NewSimpleTypeWithMinSize("dyn", cel.DynType, nil, 0)

func declTypeOf(v Var) *apiservercel.DeclType {
	t := dynType
	if v.Schema != nil {
		// Type names must not be paths an expression could write: CEL
		// resolves a qualified name such as schema.spec to a type before
		// it tries field selection on a variable.
		if dt := namedDeclType(v.Schema, "__"+v.Name+"__"); dt != nil {
			t = dt
		}
	}
	if v.List {
		return apiservercel.NewListType(t, -1)
	}
	return t
}

// Compile parses and type-checks src.
func (e *Env) Compile(src string) (*cel.Ast, error) {
	ast, iss := e.env.Compile(src)
	if iss.Err() != nil {
		return nil, e.explainIssues(src, iss)
	}
	if p, ok := e.env.CELTypeProvider().(fieldsByHeldName); ok {
		p.heldNames(ast.NativeRep())
	}
	return ast, nil
}

// Program turns a checked AST into an evaluable program whose
// comprehensions range over maps in the order of their keys, and whose
// time.now() reads the clock of the evaluation (cellib.ClockVar).
func (e *Env) Program(ast *cel.Ast) (cel.Program, error) {
	opts := orderedRanges(ast)
	if cellib.CallsNow(ast) {
		types := ast.NativeRep().TypeMap()
		opts = append(opts, cellib.ClockDecorator(func(id int64) *cel.Type { return types[id] }))
	}
	return e.env.Program(ast, opts...)
}

// Compiler is e reduced to what compiling and planning an expression
// takes: its cel-go environment, which a program planned in e holds
// already. It is what is kept beside programs to compile more later, at
// no cost in memory; the rest of e (the API server's environment set, the
// declared types' provider) serves to Extend e and to hint at a field an
// expression misspells, which such later compiles, of paths a checked
// expression reads, do not need. (The provider is nil-safe: a Compiler
// finds no declared type, so it gives no hint.)
func (e *Env) Compiler() *Env {
	return &Env{env: e.env}
}

// CEL returns the underlying cel-go environment.
func (e *Env) CEL() *cel.Env { return e.env }

// Extend returns a new environment with vars added to e's.
func (e *Env) Extend(vars ...Var) (*Env, error) {
	var declTypes []*apiservercel.DeclType
	var opts []cel.EnvOption
	for _, v := range vars {
		if v.Type != nil {
			opts = append(opts, cel.Variable(v.Name, v.Type))
			continue
		}
		t := declTypeOf(v)
		if t.IsObject() {
			declTypes = append(declTypes, t)
		}
		if t.IsList() && t.ElemType.IsObject() {
			declTypes = append(declTypes, t.ElemType)
		}
		opts = append(opts, cel.Variable(v.Name, t.CelType()))
	}
	all := append(e.declTypes[:len(e.declTypes):len(e.declTypes)], declTypes...)
	set, err := e.set.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         declTypes,
	})
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	env := set.NewExpressionsEnv()
	if env, err = env.Extend(cel.CustomTypeProvider(fieldsByHeldName{env.CELTypeProvider()})); err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return &Env{set: set, env: env, declTypes: all, provider: apiservercel.NewDeclTypeProvider(slices.Concat(all, libraryTypes)...)}, nil
}
