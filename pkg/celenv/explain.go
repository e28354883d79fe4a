package celenv

// How a compile error is told: cel-go's words, reworded in the types this
// package names, with what was most likely meant.

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	celcommon "github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// isSyntaxError is whether ce is cel-go's error for source that does not
// parse.
func isSyntaxError(ce *celcommon.Error) bool { return strings.HasPrefix(ce.Message, "Syntax error: ") }

// collectionSelection is cel-go's words for a field selected on a list;
// for a collection's objects, named by their internal type, they do not
// say what to do.
var collectionSelection = regexp.MustCompile(`type 'list\(__(\w+)__\)' does not support field selection`)

// undefinedField is cel-go's words for a field an object type lacks.
var undefinedField = regexp.MustCompile(`^undefined field '([^']+)'$`)

// movingOverload is cel-go's words for a function or operator that takes
// no value computed from time.now() given one.
var movingOverload = regexp.MustCompile(`^found no matching overload for '[^']+' applied to '.*\b(` +
	regexp.QuoteMeta(cellib.NowTimestampType.TypeName()) + `|` + regexp.QuoteMeta(cellib.NowDurationType.TypeName()) + `)\b`)

// movingHint says what a value computed from time.now() takes: what keeps
// how it depends on the time, so that kro-agent knows when to look again.
const movingHint = "a value computed from time.now() can be compared with timestamps or durations, moved by durations, or written with string(...); other uses would change unseen"

// mismatchedOperands is cel-go's words for an operator given operands of
// two types it does not take together.
var mismatchedOperands = regexp.MustCompile(`^found no matching overload for '(_\+_|_-_|_\*_|_/_|_%_|_==_|_!=_|_<_|_<=_|_>_|_>=_)' applied to '\((\w+), (\w+)\)'$`)

// arithmetic are the operators, other than +, that work on numbers alone,
// as cel-go names them, and as an expression writes them.
var arithmetic = map[string]string{"_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%"}

// operandHint says how to give an operator operands of one type, where
// one is a string and the other a scalar (CEL converts nothing by itself),
// or, for +, two numbers of different types; "" otherwise.
func operandHint(op, left, right string) string {
	if sym, ok := arithmetic[op]; ok {
		switch {
		case left != right && isNumber(left) && isNumber(right):
			return sym + " works on numbers of one type only: convert one of them, with " + left + "(...) or " + right + "(...)"
		case left == "string" && isNumber(right):
			return sym + " works on numbers, not text: convert the string with " + right + "(...)"
		case right == "string" && isNumber(left):
			return sym + " works on numbers, not text: convert the string with " + left + "(...)"
		}
		return ""
	}
	other := left
	switch {
	case left == "string" && isScalar(right):
		other = right
	case right == "string" && isScalar(left):
	case op == "_+_" && left != right && isScalar(left) && isScalar(right) && left != "bool" && right != "bool":
		return "+ adds numbers of one type only: convert one of them, with " + left + "(...) or " + right + "(...)"
	default:
		return ""
	}
	if op == "_+_" {
		hint := "+ joins strings and adds numbers, never one to the other: convert the " + other + " with string(...)"
		if other != "bool" {
			// A number kept as text (a ConfigMap's value, an annotation)
			// is as likely meant to be added to.
			hint += " to join them, or the string with " + other + "(...) to add them"
		}
		return hint
	}
	return "CEL compares values of one type only: convert the string with " + other + "(...), or the " + other + " with string(...)"
}

// isNumber is whether t, as cel-go names a type, is a number.
func isNumber(t string) bool { return t == "int" || t == "uint" || t == "double" }

// isScalar is whether t, as cel-go names a type, is a scalar string(...)
// converts, other than a string.
func isScalar(t string) bool {
	return t == "int" || t == "uint" || t == "double" || t == "bool"
}

// operatorOverload is cel-go's words for an operator given operands of
// types it does not take, whatever the types.
var operatorOverload = regexp.MustCompile(`^found no matching overload for '(_\+_|_==_|_!=_|_<_|_<=_|_>_|_>=_)' applied to '\((.+)\)'$`)

// optionalOperandHint says how to use the value of an optional, as .?
// selects one (x.?endpoint != "", which kro's documentation once wrote),
// where the other operand of op is no optional: operands are the types
// cel-go lists. "" when that is not the mistake.
func optionalOperandHint(op, operands string) string {
	left, right, ok := splitTypes(operands)
	if !ok {
		return ""
	}
	const optional = "optional_type("
	other := right
	switch {
	case strings.HasPrefix(left, optional) && !strings.HasPrefix(right, optional):
	case strings.HasPrefix(right, optional) && !strings.HasPrefix(left, optional):
		other = left
	default:
		return ""
	}
	uses := "compares"
	if op == "_+_" {
		uses = "adds"
	}
	take := "take its value with .orValue(v), v standing for a field that is not there"
	if zero, ok := zeroLiterals[other]; ok {
		take = fmt.Sprintf("take its value with .orValue(%s), %s when the field is not there", zero, zero)
	}
	return fmt.Sprintf(".? selects an optional, which %s only with another optional: %s, or ask whether it is there with .hasValue()", uses, take)
}

// structuredToString is cel-go's words for string(...) given a map, a list
// or an object, which it converts no more than it does in Go.
var structuredToString = regexp.MustCompile(`^found no matching overload for 'string' applied to '\((map\(|list\(|__\w+__)`)

// structuredToStringHint says how a map, list or object becomes text.
const structuredToStringHint = "string(...) converts a scalar; json.marshal(...) writes a map, list or object as JSON text"

// mismatchedBranches is cel-go's words for a conditional whose two results
// it cannot give one type.
var mismatchedBranches = regexp.MustCompile(`^found no matching overload for '_\?_:_' applied to '\(bool, (.+)\)'$`)

// branchesHint says how to give both results of ? : one type, as CEL
// requires; "" when the checker refused them for another reason.
func branchesHint(results string) string {
	yes, no, ok := splitTypes(results)
	if !ok || yes == no {
		return ""
	}
	hint := fmt.Sprintf("both results of ? : must have one type, not %s and %s", yes, no)
	switch {
	case yes == "string" && isScalar(no):
		return hint + ": convert the " + no + " with string(...)"
	case no == "string" && isScalar(yes):
		return hint + ": convert the " + yes + " with string(...)"
	}
	return hint
}

// splitTypes splits cel-go's list of two operand types, "A, B", at the
// comma outside the types' parentheses.
func splitTypes(s string) (string, string, bool) {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 && strings.HasPrefix(s[i:], ", ") {
				return s[:i], s[i+2:], true
			}
		}
	}
	return "", "", false
}

// undeclaredReference is cel-go's words for a name, or a function, the
// environment does not declare; the container is always the empty one here.
var undeclaredReference = regexp.MustCompile(`^(undeclared reference to '([^']+)') \(in container ''\)$`)

// yamlBooleans are the words YAML 1.1, as kubectl reads manifests, turns
// into booleans, also as keys (a schema field written on becomes true),
// the shortest of each first.
var yamlBooleans = []struct{ word, boolean string }{
	{"y", "true"}, {"yes", "true"}, {"on", "true"},
	{"n", "false"}, {"no", "false"}, {"off", "false"},
}

// YAMLBoolean is the boolean, "true" or "false", YAML makes of word, in
// any case, if it makes one.
func YAMLBoolean(word string) (string, bool) {
	for _, b := range yamlBooleans {
		if strings.EqualFold(b.word, word) {
			return b.boolean, true
		}
	}
	return "", false
}

// YAMLBooleanWords are the words YAML reads as the boolean b ("true" or
// "false"), the shortest first.
func YAMLBooleanWords(b string) []string {
	var words []string
	for _, w := range yamlBooleans {
		if w.boolean == b {
			words = append(words, w.word)
		}
	}
	return words
}

// maxFieldsListed bounds the fields an error lists when none is spelt
// like the one selected.
const maxFieldsListed = 12

// explainIssues rewords what the checker says in terms of the types this
// package names and, for a field an object does not have, says which it
// has; positions and caret lines are kept.
func (e *Env) explainIssues(src string, iss *cel.Issues) error {
	errs := iss.Errors()
	if len(errs) == 0 {
		return iss.Err()
	}
	sorted := slices.Clone(errs)
	slices.SortStableFunc(sorted, func(a, b *celcommon.Error) int {
		return cmp.Or(cmp.Compare(a.Location.Line(), b.Location.Line()), cmp.Compare(a.Location.Column(), b.Location.Column()))
	})
	source := celcommon.NewTextSource(src)
	lines := make([]string, 0, len(sorted))
	// When an operator of another language is all that keeps src from
	// parsing, the first syntax error says what CEL writes, and the
	// parser's errors after it, which follow from it, are left out.
	syntaxHint, syntaxTold := "", false
	if slices.ContainsFunc(sorted, isSyntaxError) {
		syntaxHint = e.syntaxHint(src)
	}
	for _, ce := range sorted {
		if syntaxHint != "" && isSyntaxError(ce) {
			if !syntaxTold {
				reworded := *ce
				reworded.Message += ": " + syntaxHint
				lines = append(lines, reworded.ToDisplayString(source))
				syntaxTold = true
			}
			continue
		}
		reworded := *ce
		reworded.Message = UserTypeNames(collectionSelection.ReplaceAllString(ce.Message,
			"${1} is a collection (forEach), a list of its objects: select one (${1}[0]) or use a macro such as ${1}.all(x, ...) or ${1}.map(x, ...)"))
		if m := undefinedField.FindStringSubmatch(ce.Message); m != nil {
			if hint := e.fieldHint(src, ce.ExprID, m[1]); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		if m := mismatchedOperands.FindStringSubmatch(ce.Message); m != nil {
			if hint := operandHint(m[1], m[2], m[3]); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		if m := operatorOverload.FindStringSubmatch(ce.Message); m != nil {
			if hint := optionalOperandHint(m[1], m[2]); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		if structuredToString.MatchString(ce.Message) {
			reworded.Message += ": " + structuredToStringHint
		}
		if m := mismatchedBranches.FindStringSubmatch(ce.Message); m != nil {
			if hint := branchesHint(UserTypeNames(m[1])); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		if movingOverload.MatchString(ce.Message) {
			reworded.Message += ": " + movingHint
		}
		if containsOnList.MatchString(ce.Message) || comparedWithNull.MatchString(ce.Message) {
			if hint := e.rewriteHint(src, ce.ExprID); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		if noFields.MatchString(ce.Message) {
			if hint := e.lengthHint(src, ce.ExprID); hint != "" {
				// Of a collection too: its length is what was asked.
				reworded.Message = UserTypeNames(ce.Message) + ": " + hint
			}
		}
		if m := undeclaredReference.FindStringSubmatch(ce.Message); m != nil {
			reworded.Message = m[1]
			if hint := e.referenceHint(src, ce.ExprID, m[2]); hint != "" {
				reworded.Message += ": " + hint
			}
		}
		lines = append(lines, reworded.ToDisplayString(source))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// exprAt is the expression with id in src, as the checker numbered it,
// and the source positions of src; false when src does not parse.
func (e *Env) exprAt(src string, id int64) (celast.NavigableExpr, *celast.SourceInfo, bool) {
	parsed, iss := e.env.Parse(src)
	if iss.Err() != nil {
		return nil, nil, false
	}
	native := parsed.NativeRep()
	found := celast.MatchDescendants(celast.NavigateAST(native), func(x celast.NavigableExpr) bool { return x.ID() == id })
	if len(found) != 1 {
		return nil, nil, false
	}
	return found[0], native.SourceInfo(), true
}

// fieldHint says which fields the object has that the selection with
// expression id in src reads field of: the one most like field, or all of
// them when they are few. It is "" when the object's type is not known (a
// dyn value, or one the checker could not type for another error).
func (e *Env) fieldHint(src string, id int64, field string) string {
	found, info, ok := e.exprAt(src, id)
	if !ok {
		return ""
	}
	// selected is the object a field is read of, with the operator that
	// reads it: o.field, or o.?field.
	var selected celast.Expr
	op := "."
	switch x := found; {
	case x.Kind() == celast.SelectKind:
		selected = x.AsSelect().Operand()
	case x.Kind() == celast.CallKind && x.AsCall().FunctionName() == operators.OptSelect && len(x.AsCall().Args()) == 2:
		selected, op = x.AsCall().Args()[0], ".?"
	default:
		return ""
	}
	operand, err := parser.Unparse(selected, info)
	if err != nil {
		return ""
	}
	scope, ok := macroScope(e.env, found, info)
	if !ok {
		return ""
	}
	checked, iss := scope.Compile(operand)
	if iss.Err() != nil {
		return ""
	}
	object, ok := e.provider.FindDeclType(heldByOptional(checked.OutputType()).TypeName())
	if !ok || !object.IsObject() || len(object.Fields) == 0 {
		return ""
	}
	// The names the object holds its fields by, which its type escapes
	// where they are no identifiers, and how an expression writes them.
	written := map[string]string{}
	for escaped := range object.Fields {
		if held, ok := apiservercel.Unescape(escaped); ok {
			written[held] = writtenField(held)
		}
	}
	names := slices.Sorted(maps.Keys(written))
	if b, ok := YAMLBoolean(field); ok && slices.Contains(names, b) {
		return fmt.Sprintf("%s has a field %s instead: YAML reads the key %s as the boolean %s, quote it (\"%s\": ...) where the schema declares it", operand, b, field, b, field)
	}
	// o.my-field reads o.my, less field.
	if held := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !isSplitAt(n, field) }); len(held) == 1 {
		return fmt.Sprintf("did you mean %s%s%s? A field name that is no identifier is written in backticks", operand, op, written[held[0]])
	}
	if best, ok := spelling.Closest(field, names); ok {
		return fmt.Sprintf("did you mean %s%s%s?", operand, op, written[best])
	}
	if len(names) > maxFieldsListed {
		return ""
	}
	list := make([]string, len(names))
	for i, n := range names {
		list[i] = written[n]
	}
	return fmt.Sprintf("%s has %s", operand, strings.Join(list, ", "))
}

// isSplitAt reports whether a field name is one an expression written
// without backticks would read as prefix and an operator after it: the
// name my-field read as my - field, a.b as a then b.
func isSplitAt(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	return ok && rest != "" && strings.ContainsRune("-./", rune(rest[0]))
}

// referenceHint says what the name, or function, that the expression with
// id in src refers to and the environment does not declare may have been
// meant as: the declared one most like it, or, for a name, every name the
// expression may read when they are few (macros' variables included). It
// is "" when nothing near is declared.
func (e *Env) referenceHint(src string, id int64, name string) string {
	found, info, ok := e.exprAt(src, id)
	if !ok {
		return ""
	}
	scope, ok := macroScope(e.env, found, info)
	if !ok {
		return ""
	}
	if name == "nil" && found.Kind() == celast.IdentKind {
		// Go's nil in a comparison, x != nil.
		if parent, ok := found.Parent(); ok && parent.Kind() == celast.CallKind {
			if test, ok := presenceTest(parent.AsCall(), info); ok {
				if _, iss := scope.Compile(test); iss.Err() == nil {
					return "CEL writes null, and a field is never null: CEL asks whether it is set with has(...): " + test
				}
			}
		}
	}
	var names []string
	switch found.Kind() {
	case celast.IdentKind:
		for _, v := range scope.Variables() {
			if isIdentifier(v.Name()) {
				names = append(names, v.Name())
			}
		}
	case celast.CallKind:
		for fn := range scope.Functions() {
			// Operators (_+_, @in) are no spelling of a call.
			if !strings.HasPrefix(fn, "_") && !strings.HasPrefix(fn, "@") {
				names = append(names, fn)
			}
		}
	default:
		return ""
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if forms, ok := foreignFunctions[name]; ok && found.Kind() == celast.CallKind {
		for _, form := range forms {
			if call, ok := rewrittenCall(found, info, form); ok {
				if _, iss := scope.Compile(call); iss.Err() == nil {
					return "CEL calls it " + formFunction(form) + ": " + call
				}
			}
		}
		return "CEL calls it " + formFunction(forms[0])
	}
	if found.Kind() == celast.CallKind {
		// A function of a library called without its namespace
		// (sha256 for hash.sha256, marshal for json.marshal).
		var namespaced []string
		for _, fn := range names {
			if strings.HasSuffix(fn, "."+name) {
				namespaced = append(namespaced, fn)
			}
		}
		if len(namespaced) > 0 {
			return fmt.Sprintf("did you mean %s?", strings.Join(namespaced, " or "))
		}
	}
	if best, ok := spelling.Closest(name, names); ok {
		return fmt.Sprintf("did you mean %s?", best)
	}
	if found.Kind() != celast.IdentKind || len(names) == 0 || len(names) > maxFieldsListed {
		return ""
	}
	return "it can read " + strings.Join(names, ", ")
}

// containsOnList is cel-go's words for contains called on a list or a map,
// which CEL asks with in; comparedWithNull for a value compared with null,
// which a field the schema declares never is (absent, it is not there).
var (
	containsOnList   = regexp.MustCompile(`^found no matching overload for 'contains' applied to '(list|map)\(`)
	comparedWithNull = regexp.MustCompile(`^found no matching overload for '_[!=]=_' applied to '\((.+, null|null, .+)\)'$`)
)

// rewriteHint says how CEL writes the call with id in src that cel-go
// refused: x.contains(a) of a list as a in x, and x == null as !has(x)
// (x != null as has(x)). "" when the rewrite does not compile either.
func (e *Env) rewriteHint(src string, id int64) string {
	found, info, ok := e.exprAt(src, id)
	if !ok || found.Kind() != celast.CallKind {
		return ""
	}
	scope, ok := macroScope(e.env, found, info)
	if !ok {
		return ""
	}
	var hint, rewritten string
	switch call := found.AsCall(); call.FunctionName() {
	case "contains":
		rewritten, ok = rewrittenCall(found, info, "$a in $r")
		hint = "CEL asks whether a list holds a value with in"
	case operators.Equals, operators.NotEquals:
		rewritten, ok = presenceTest(call, info)
		hint = "a field is never null: CEL asks whether it is set with has(...)"
	}
	if !ok || rewritten == "" {
		return ""
	}
	if _, iss := scope.Compile(rewritten); iss.Err() != nil {
		return ""
	}
	return hint + ": " + rewritten
}

// presenceTest writes x == null (or nil, as Go writes it) as !has(x), and
// x != null as has(x), for a field x; false for anything else.
func presenceTest(call celast.CallExpr, info *celast.SourceInfo) (string, bool) {
	args := call.Args()
	if len(args) != 2 {
		return "", false
	}
	isNull := func(x celast.Expr) bool {
		return x.Kind() == celast.LiteralKind && x.AsLiteral() == celtypes.NullValue || x.Kind() == celast.IdentKind && x.AsIdent() == "nil"
	}
	operand := args[0]
	switch {
	case isNull(args[1]):
	case isNull(args[0]):
		operand = args[1]
	default:
		return "", false
	}
	if operand.Kind() != celast.SelectKind || operand.AsSelect().IsTestOnly() {
		return "", false
	}
	text, err := parser.Unparse(operand, info)
	if err != nil {
		return "", false
	}
	if call.FunctionName() == operators.Equals {
		return "!has(" + text + ")", true
	}
	return "has(" + text + ")", true
}

// noFields is cel-go's words for a field selected of a value that has
// none: a list, a string, a number.
var noFields = regexp.MustCompile(`^type '.+' does not support field selection$`)

// lengthHint says how CEL gives the length that the selection with id in
// src asks for as other languages do (items.length); "" for another field.
func (e *Env) lengthHint(src string, id int64) string {
	found, info, ok := e.exprAt(src, id)
	if !ok || found.Kind() != celast.SelectKind {
		return ""
	}
	switch found.AsSelect().FieldName() {
	case "length", "len", "size", "count", "Length", "Count":
	default:
		return ""
	}
	operand, err := parser.Unparse(found.AsSelect().Operand(), info)
	if err != nil {
		return ""
	}
	return "CEL gives a length with size: size(" + operand + ")"
}

// foreignFunctions are functions of other languages that expressions get
// written with, and the CEL that does what each does: forms where $r
// stands for the call's receiver (or its first argument) and $a for its
// other arguments. The first form that compiles is offered.
var foreignFunctions = map[string][]string{
	"len": {"size($r)"}, "length": {"size($r)"}, "count": {"size($r)"},
	"str": {"string($r)"}, "toString": {"string($r)"}, "String": {"string($r)"},
	"upper": {"$r.upperAscii()"}, "toUpper": {"$r.upperAscii()"}, "toUpperCase": {"$r.upperAscii()"}, "ToUpper": {"$r.upperAscii()"},
	"lower": {"$r.lowerAscii()"}, "toLower": {"$r.lowerAscii()"}, "toLowerCase": {"$r.lowerAscii()"}, "ToLower": {"$r.lowerAscii()"},
	"substr": {"$r.substring($a)"}, "strip": {"$r.trim()"}, "replaceAll": {"$r.replace($a)"},
	"includes": {"$r.contains($a)", "$a in $r"},
	"isEmpty":  {"size($r) == 0"}, "keys": {"$r.map(k, k)"},
	"parseInt": {"int($r)"}, "atoi": {"int($r)"}, "Atoi": {"int($r)"},
}

// formFunction is the CEL function, or operator, a form calls.
func formFunction(form string) string {
	if strings.HasPrefix(form, "$a in ") {
		return "in"
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(form, "$r."), "(")
	return name
}

// rewrittenCall writes the call x, of a function of another language, in
// form (see foreignFunctions). False when x has nothing to call it on.
func rewrittenCall(x celast.NavigableExpr, info *celast.SourceInfo, form string) (string, bool) {
	call := x.AsCall()
	operands := call.Args()
	if call.IsMemberFunction() {
		operands = append([]celast.Expr{call.Target()}, operands...)
	}
	if len(operands) == 0 {
		return "", false
	}
	texts := make([]string, len(operands))
	for i, o := range operands {
		t, err := parser.Unparse(o, info)
		if err != nil {
			return "", false
		}
		if i == 0 && strings.HasPrefix(form, "$r.") && o.Kind() == celast.CallKind && strings.HasPrefix(o.AsCall().FunctionName(), "_") {
			t = "(" + t + ")" // an operator's result, a method called on it
		}
		texts[i] = t
	}
	return strings.NewReplacer("$r", texts[0], "$a", strings.Join(texts[1:], ", ")).Replace(form), true
}

// macroScope returns env with the variables that the macros enclosing x
// bind declared with the types the checker gives them: items.map(i, ...)
// binds i to an element of items, cel.bind(v, init, ...) binds v to init.
// It is false when a range or an init cannot be typed.
func macroScope(env *cel.Env, x celast.NavigableExpr, info *celast.SourceInfo) (*cel.Env, bool) {
	// The comprehensions whose loop or result x is in, innermost first:
	// their range and init are outside the scope of their variables.
	var enclosing []celast.ComprehensionExpr
	for child := x; ; {
		parent, ok := child.Parent()
		if !ok {
			break
		}
		if c := parent.AsComprehension(); parent.Kind() == celast.ComprehensionKind && child.ID() != c.IterRange().ID() && child.ID() != c.AccuInit().ID() {
			enclosing = append(enclosing, c)
		}
		child = parent
	}
	typeOf := func(env *cel.Env, e celast.Expr) (*cel.Type, bool) {
		src, err := parser.Unparse(e, info)
		if err != nil {
			return nil, false
		}
		checked, iss := env.Compile(src)
		if iss.Err() != nil {
			return nil, false
		}
		return checked.OutputType(), true
	}
	for _, c := range slices.Backward(enclosing) {
		rangeType, ok := typeOf(env, c.IterRange())
		if !ok {
			return nil, false
		}
		vars := iterationVars(c, rangeType)
		// The accumulator of a macro that iterates is hidden (@result);
		// cel.bind's is the name it binds.
		if accu := c.AccuVar(); isIdentifier(accu) {
			accuType, ok := typeOf(env, c.AccuInit())
			if !ok {
				return nil, false
			}
			vars = append(vars, cel.Variable(accu, accuType))
		}
		var err error
		if env, err = env.Extend(vars...); err != nil {
			return nil, false
		}
	}
	return env, true
}

// isIdentifier tells a name an expression can write from the ones macros
// make up for themselves (@result, #unused).
func isIdentifier(name string) bool {
	return name != "" && !strings.HasPrefix(name, "@") && !strings.HasPrefix(name, "#") && name != "__result__"
}

// iterationVars declares the variables of comprehension c over a range
// of type t: for one variable, a list's element or a map's key; for two,
// a list's index and element or a map's key and value. Over a dyn range
// they are dyn.
func iterationVars(c celast.ComprehensionExpr, t *cel.Type) []cel.EnvOption {
	first, second := cel.DynType, cel.DynType
	switch params := t.Parameters(); {
	case t.Kind() == celtypes.ListKind && len(params) == 1 && c.HasIterVar2():
		first, second = cel.IntType, params[0]
	case t.Kind() == celtypes.ListKind && len(params) == 1:
		first = params[0]
	case t.Kind() == celtypes.MapKind && len(params) == 2:
		first, second = params[0], params[1]
	}
	var vars []cel.EnvOption
	if isIdentifier(c.IterVar()) {
		vars = append(vars, cel.Variable(c.IterVar(), first))
	}
	if c.HasIterVar2() {
		vars = append(vars, cel.Variable(c.IterVar2(), second))
	}
	return vars
}
