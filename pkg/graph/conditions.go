package graph

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// compileComputedCondition compiles a custom condition written as upstream
// kro writes it: one expression returning runtime.newCondition(...) or a
// list of them. The types it names literally are checked here, against the
// built-in ones and every other entry's; computed ones when it runs.
func (c *compiler) compileComputedCondition(src string, ep *field.Path, seen map[string]bool) *Expression {
	// An entry is never text, so the line break a YAML block scalar ends
	// with is not part of it.
	segs, err := expr.Parse(strings.TrimSpace(src))
	if err != nil {
		c.errs = append(c.errs, field.Invalid(ep, src, err.Error()))
		return nil
	}
	if !expr.IsStandalone(segs) {
		c.errs = append(c.errs, field.Invalid(ep, src, "must be a single ${...} expression returning runtime.newCondition(...) or a list of them"))
		return nil
	}
	ast, err := c.env.Compile(segs[0].Expr)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(ep, src, strings.TrimSpace(err.Error())))
		return nil
	}
	e, err := expressionOf(c.env, segs[0].Expr, ast)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(ep, src, err.Error()))
		return nil
	}
	if e.callsOmit {
		c.errs = append(c.errs, field.Invalid(ep, src, "omit() leaves a template field out of its object; it has no meaning here"))
		return nil
	}
	c.warnAbsentReads(e, ep, src)
	if !IsConditions(e.Type) {
		c.errs = append(c.errs, field.Invalid(ep, src, fmt.Sprintf("must return runtime.newCondition(...) or a list of them, but has type %s", celenv.TypeString(e.Type))))
		return nil
	}
	before := len(c.errs)
	for _, t := range literalConditionTypes(ast) {
		if msg := CheckConditionType(t); msg != "" {
			c.errs = append(c.errs, field.Invalid(ep, src, msg))
			continue
		}
		if seen[t] {
			c.errs = append(c.errs, field.Invalid(ep, src, fmt.Sprintf("the condition type %s is declared more than once", t)))
		}
		seen[t] = true
	}
	for _, t := range instanceConditionsRead(ast) {
		if t != "" && !IsBuiltinCondition(t) {
			c.errs = append(c.errs, field.Invalid(ep, src, fmt.Sprintf(
				"runtime.condition(schema, %q): custom conditions cannot read each other; schema has only the built-in conditions %s",
				t, strings.Join(builtinConditionTypes, ", "))))
		}
	}
	if len(c.errs) > before {
		return nil
	}
	return e
}

// IsConditions reports whether t is what a computed condition returns: a
// condition or a list of them.
func IsConditions(t *types.Type) bool {
	if t.Kind() == types.ListKind {
		t = t.Parameters()[0]
	}
	return t.TypeName() == cellib.ConditionType.TypeName()
}

// CheckConditionType says what is wrong with a custom condition's type, or
// returns "" when it may be used.
func CheckConditionType(t string) string {
	if IsBuiltinCondition(t) {
		return fmt.Sprintf("%s is a built-in condition type, which kro-agent derives itself; name this condition differently "+
			"(to make Ready wait for a check, declare it as {type, status: ${boolean expression}}, which counts toward Ready)", t)
	}
	if errs := validation.IsQualifiedName(t); len(errs) > 0 {
		msg := fmt.Sprintf("%q is not a condition type: %s", t, strings.Join(errs, "; "))
		if meant := suchAs(t, true, ""); meant != "" {
			msg += "; condition types are UpperCamelCase, such as " + meant
		}
		return msg
	}
	return ""
}

// literalConditionTypes lists the types given as text to
// runtime.newCondition.
func literalConditionTypes(ast *cel.Ast) []string {
	var out []string
	for _, call := range calls(ast, cellib.NewConditionFunction) {
		arg := call.Args()[0]
		if arg.Kind() != celast.MapKind {
			continue
		}
		for _, e := range arg.AsMap().Entries() {
			entry := e.AsMapEntry()
			if text, ok := stringLiteral(entry.Key()); ok && text == "type" {
				if t, ok := stringLiteral(entry.Value()); ok {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// instanceConditionsRead lists the types runtime.condition(schema, type)
// reads: the instance's own conditions; "" for a type computed at run time.
func instanceConditionsRead(ast *cel.Ast) []string {
	var out []string
	for _, call := range calls(ast, cellib.ConditionFunction) {
		args := call.Args()
		if args[0].Kind() != celast.IdentKind || args[0].AsIdent() != SchemaVar {
			continue
		}
		t, _ := stringLiteral(args[1])
		out = append(out, t)
	}
	return out
}

// readsInstanceConditions reports whether an expression calls
// runtime.condition(schema, ...).
func readsInstanceConditions(ast *cel.Ast) bool {
	return len(instanceConditionsRead(ast)) > 0
}

// calls finds the calls of the global function fn.
func calls(ast *cel.Ast, fn string) []celast.CallExpr {
	var out []celast.CallExpr
	for _, x := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.FunctionMatcher(fn)) {
		if call := x.AsCall(); !call.IsMemberFunction() {
			out = append(out, call)
		}
	}
	return out
}

func stringLiteral(x celast.Expr) (string, bool) {
	if x.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := x.AsLiteral().(types.String)
	return string(s), ok
}
