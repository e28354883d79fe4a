package graph

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// secretStringData is the field of a Secret that the API server takes on
// a write and never returns: it merges its strings into data,
// base64-encoded, and stores no stringData. An expression reading it
// finds nothing, ever, so what needs the value waits for good, while the
// OpenAPI schema, and so the type check, knows the field.
const secretStringData = "stringData"

// WriteOnlyRead is an expression's read of a field the API server never
// returns.
type WriteOnlyRead struct {
	// Key is the key CEL finds missing: stringData.
	Key string
	// Advice says why it is missing and what to read instead.
	Advice string
}

// warnWriteOnlyReads notes a warning for each read, in e at path (raw is
// the field's value), of a Secret's stringData, and keeps the first on e
// for the evaluation that waits for it to say why: the RGD is legal, and
// upstream kro takes it, but the value never comes.
func (c *compiler) warnWriteOnlyReads(e *Expression, path *field.Path, raw string) {
	var ast *cel.Ast
	for _, ref := range e.References {
		n := c.byID[ref]
		if n == nil || !n.IsSecret() || n.IsCollection() {
			continue
		}
		if ast == nil {
			// Parsed again, only for an expression reading a Secret:
			// the checked AST is not kept.
			var iss *cel.Issues
			if ast, iss = c.env.CEL().Parse(e.Source); iss.Err() != nil {
				return
			}
		}
		for _, p := range selections(ast, ref, true) {
			if p[0].IsIndex || p[0].Key != secretStringData {
				continue
			}
			advice := fmt.Sprintf("no Secret read back has %s: the API server writes it into data, base64-encoded; read %s", secretStringData, readFromData(ref, p[1:]))
			if e.WriteOnlyRead == nil {
				e.WriteOnlyRead = &WriteOnlyRead{Key: secretStringData, Advice: advice}
			}
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s reads %s.%s, but %s", path, raw, ref, secretStringData, advice))
		}
	}
}

// readFromData is how to read, from a Secret's data, what rest of its
// stringData held: data's values are bytes, which string(...) decodes.
func readFromData(id string, rest expr.Path) string {
	sel := id + ".data"
	if len(rest) == 0 || rest[0].IsIndex {
		return sel + ", whose values are bytes (string(" + sel + "[\"key\"]))"
	}
	key := rest[0].Key
	if celIdent.MatchString(key) {
		sel += "." + key
	} else {
		sel += "[" + strconv.Quote(key) + "]"
	}
	return "string(" + sel + ")"
}

// celIdent is a name CEL selects with a dot.
var celIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
