package graph

import (
	"fmt"
	"slices"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// warnGuardedReads warns of each resource n's template reads only on one
// side of a conditional (${schema.spec.cache ? cache.spec.clusterIP : ""}),
// as if n could be made without it, when includeWhen may leave that one
// out: a resource reading one left out is left out with it, so the guard
// never has the effect it was written for. Once per resource read.
func (c *compiler) warnGuardedReads(n *Node, base *field.Path) {
	warned := map[string]bool{}
	for _, f := range n.Fields {
		for _, e := range f.Exprs {
			// Parsed again, once, only for an expression reading such a
			// resource: the checked AST is not kept.
			var parsed *celast.AST
			for _, ref := range e.References {
				if warned[ref] || ref == n.ID || !c.mayBeLeftOut(ref) || c.leftOutWith(n.ID, ref) {
					continue
				}
				if parsed == nil {
					ast, iss := c.env.CEL().Parse(e.Source)
					if iss.Err() != nil {
						break
					}
					parsed = ast.NativeRep()
				}
				if !onlyOnOneSide(parsed, ref) {
					continue
				}
				warned[ref] = true
				c.warnings = append(c.warnings, fmt.Sprintf(
					"%s: %s reads %s only on one side of ? :, as if %s could be made without it; but includeWhen may leave %s out, and then %s, which reads it, is left out too: to make %s without %s, read what it needs from schema (the name %s is given, say), not from %s",
					f.Path.FieldPath(base), expr.Format(f.Segments), ref, n.ID, ref, n.ID, n.ID, ref, ref, ref))
			}
		}
	}
}

// mayBeLeftOut tells whether the resource id has an includeWhen of its own.
func (c *compiler) mayBeLeftOut(id string) bool {
	r := c.resource(id)
	return r != nil && len(r.IncludeWhen) > 0
}

// leftOutWith tells whether the resource id has, among its includeWhen,
// every one other has: it is left out by its own whenever other is, and
// a guard of its reads of other is only cautious.
func (c *compiler) leftOutWith(id, other string) bool {
	r, o := c.resource(id), c.resource(other)
	return r != nil && o != nil && !slices.ContainsFunc(o.IncludeWhen, func(cond string) bool { return !slices.Contains(r.IncludeWhen, cond) })
}

// resource is the RGD's resource id, nil for none. Read from the RGD, since
// a resource may come later in it than the one reading it, and be compiled
// after.
func (c *compiler) resource(id string) *v1alpha1.Resource {
	i := slices.IndexFunc(c.rgd.Spec.Resources, func(r *v1alpha1.Resource) bool { return r != nil && r.ID == id })
	if i < 0 {
		return nil
	}
	return c.rgd.Spec.Resources[i]
}

// onlyOnOneSide tells whether every read of the variable id in ast is in a
// result of a conditional whose other result does not read it.
func onlyOnOneSide(ast *celast.AST, id string) bool {
	found := celast.MatchDescendants(celast.NavigateAST(ast), func(x celast.NavigableExpr) bool {
		return x.Kind() == celast.IdentKind && x.AsIdent() == id && !boundByMacro(x)
	})
	if len(found) == 0 {
		return false
	}
	for _, read := range found {
		if !guardedBranch(ast, read, id) {
			return false
		}
	}
	return true
}

// guardedBranch tells whether x is within a result of a conditional whose
// other result does not read id.
func guardedBranch(ast *celast.AST, x celast.NavigableExpr, id string) bool {
	child := x
	for parent, ok := x.Parent(); ok; parent, ok = parent.Parent() {
		if parent.Kind() == celast.CallKind && parent.AsCall().FunctionName() == operators.Conditional {
			// Args are the condition, the result if true, the result
			// if false.
			args := parent.AsCall().Args()
			if args[1].ID() == child.ID() && !reads(ast, args[2], id) || args[2].ID() == child.ID() && !reads(ast, args[1], id) {
				return true
			}
		}
		child = parent
	}
	return false
}

// reads tells whether x reads the variable id.
func reads(ast *celast.AST, x celast.Expr, id string) bool {
	return len(celast.MatchDescendants(celast.NavigateExpr(ast, x), func(y celast.NavigableExpr) bool {
		return y.Kind() == celast.IdentKind && y.AsIdent() == id
	})) > 0
}
