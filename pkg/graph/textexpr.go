package graph

import (
	"fmt"
	"strconv"
	"strings"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// warnExpressionsInText notes a warning for each string literal of e (at
// path; raw is the field's value) that holds a ${...}: inside an
// expression, ${ } is no expression but text, kept as written
// (${flag ? "${schema.spec.name}-x" : "none"} gives the text
// "${schema.spec.name}-x"), as kro keeps it. The warning gives the
// literal written as CEL that computes what was meant.
func (c *compiler) warnExpressionsInText(env *celenv.Env, e *Expression, path *field.Path, raw string) {
	if !strings.Contains(e.Source, "${") {
		// Outside a literal, ${ does not compile: no literal holds one.
		return
	}
	ast, iss := env.CEL().Parse(e.Source)
	if iss.Err() != nil {
		return
	}
	for _, x := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), textWithExpression) {
		text := string(x.AsLiteral().(types.String))
		meant := textAsCEL(env, text)
		if meant == "" {
			continue
		}
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %s: the text %s stays as written, since ${ } inside an expression is text, not an expression: write %s in its place",
			path, raw, strconv.Quote(text), meant))
	}
}

// textWithExpression matches a string literal holding ${.
func textWithExpression(x celast.NavigableExpr) bool {
	if x.Kind() != celast.LiteralKind {
		return false
	}
	s, ok := x.AsLiteral().(types.String)
	return ok && strings.Contains(string(s), "${")
}

// textAsCEL writes text with ${...} in it as the CEL that joins its parts:
// "${a}-x" as a + "-x". It is "" when text does not parse as a template,
// or when what its ${ } hold does not compile in env: text meant as text,
// such as a shell's ${HOME}.
func textAsCEL(env *celenv.Env, text string) string {
	segs, err := expr.Parse(text)
	if err != nil || !expr.HasExpr(segs) {
		return ""
	}
	var parts []string
	for _, s := range segs {
		if s.IsExpr {
			if _, err := env.Compile(s.Expr); err != nil {
				return ""
			}
		}
		switch {
		case !s.IsExpr && s.Literal == "":
		case !s.IsExpr:
			parts = append(parts, strconv.Quote(s.Literal))
		case len(segs) > 1 && strings.ContainsAny(s.Expr, " ?:+-*/|&<>="):
			parts = append(parts, "("+strings.TrimSpace(s.Expr)+")")
		default:
			parts = append(parts, strings.TrimSpace(s.Expr))
		}
	}
	return strings.Join(parts, " + ")
}
