package celenv

import (
	"regexp"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Object types built from OpenAPI schemas (openapi.SchemaDeclType) name
// their fields as the API server's CEL does: a property that is no CEL
// identifier is escaped (my-field is my__dash__field, a.b is a__dot__b,
// a__b is a__underscores__b, a keyword such as if is __if__). The objects
// expressions read hold the properties under their own names, so a
// selection is checked against the escaped name and then made to read the
// held one (heldNames). An expression may write either the escaped name,
// as CRD validation rules do, or the property's own, quoted in backticks
// (schema.spec.`my-field`, cel-go's syntax for such fields).

// fieldsByHeldName is a type provider that also finds an object's field
// under the name its objects hold it by, where its type names it escaped.
type fieldsByHeldName struct {
	celtypes.Provider
}

// NativeToValue adapts values as the provider wrapped does: an environment
// extended from this one (environment.EnvSet.Extend) takes its provider
// for the adapter of the types it adds.
func (p fieldsByHeldName) NativeToValue(v any) ref.Val {
	if a, ok := p.Provider.(celtypes.Adapter); ok {
		return a.NativeToValue(v)
	}
	return celtypes.DefaultTypeAdapter.NativeToValue(v)
}

func (p fieldsByHeldName) FindStructFieldType(structType, fieldName string) (*celtypes.FieldType, bool) {
	if ft, ok := p.Provider.FindStructFieldType(structType, fieldName); ok {
		return ft, true
	}
	if escaped, ok := apiservercel.Escape(fieldName); ok && escaped != fieldName {
		return p.Provider.FindStructFieldType(structType, escaped)
	}
	return nil, false
}

// heldName is the name objects of structType hold the field written
// fieldName by, when the expression wrote the escaped name the type has.
// A name the wrapped provider does not find was found through Escape: it
// is the held name already. Only object types built from schemas escape
// names; anywhere else a name unescapes to itself.
func (p fieldsByHeldName) heldName(structType, fieldName string) (string, bool) {
	if _, ok := p.Provider.FindStructFieldType(structType, fieldName); !ok {
		return "", false
	}
	held, ok := apiservercel.Unescape(fieldName)
	if !ok || held == fieldName {
		return "", false
	}
	return held, true
}

// heldNames rewrites the field selections of a checked expression that name
// an object's field escaped (x.my__dash__field, has(x.__if__),
// x.?a__dot__b) to select the name the object holds: the checker found
// the field by the escaped name, and the program reads the object as it
// is. The types the checker recorded stay with the expressions' ids.
func (p fieldsByHeldName) heldNames(native *celast.AST) {
	fac := celast.NewExprFactory()
	typeName := func(x celast.Expr) (string, bool) {
		t := heldByOptional(native.GetType(x.ID()))
		if t == nil || t.Kind() != celtypes.StructKind {
			return "", false
		}
		return t.TypeName(), true
	}
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		switch x.Kind() {
		case celast.SelectKind:
			s := x.AsSelect()
			structType, ok := typeName(s.Operand())
			if !ok {
				return
			}
			held, ok := p.heldName(structType, s.FieldName())
			if !ok {
				return
			}
			if s.IsTestOnly() {
				x.SetKindCase(fac.NewPresenceTest(x.ID(), s.Operand(), held))
			} else {
				x.SetKindCase(fac.NewSelect(x.ID(), s.Operand(), held))
			}
		case celast.CallKind:
			c := x.AsCall()
			args := c.Args()
			if c.FunctionName() != operators.OptSelect || len(args) != 2 || args[1].Kind() != celast.LiteralKind {
				return
			}
			structType, ok := typeName(args[0])
			if !ok {
				return
			}
			field, ok := args[1].AsLiteral().(celtypes.String)
			if !ok {
				return
			}
			if held, ok := p.heldName(structType, string(field)); ok {
				args[1].SetKindCase(fac.NewLiteral(args[1].ID(), celtypes.String(held)))
			}
		}
	}))
}

// plainField is a field name an expression can select without quoting it.
var plainField = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// writtenField is how an expression selects a field by held, the name its
// objects hold it by: quoted in backticks when it is no identifier
// (`my-field`), bare when it is one (if, namespace).
func writtenField(held string) string {
	if SelectsBare(held) {
		return held
	}
	return "`" + held + "`"
}

// SelectsBare reports whether an expression can select the field or key
// name with a dot and the name alone (x.name): an identifier, and none of
// the words CEL reads as something else there.
func SelectsBare(name string) bool {
	switch name {
	case "in", "true", "false", "null":
		return false
	}
	return plainField.MatchString(name)
}
