package celenv

import (
	"regexp"
	"slices"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// foreignOperators are operators of other languages that expressions get
// written with, and what CEL writes for each. CEL's parser reports them as
// unrecognised tokens or input it did not expect, naming neither.
var foreignOperators = map[string]string{
	"=": "==", "===": "==", "!==": "!=", "<>": "!=",
	"&": "&&", "|": "||",
	"and": "&&", "or": "||", "not": "!",
}

// operatorChars make up CEL's comparison and logical operators, and the
// foreign ones above.
const operatorChars = "=!<>&|"

// syntaxHint rewrites the operators of other languages in src (outside its
// string literals) to CEL's, and takes away the ${ } written around names
// inside it, and, when that makes an expression that parses, says what
// CEL writes, with src so written. It is "" when src has neither, or when
// they are not all that is wrong.
func (e *Env) syntaxHint(src string) string {
	if hint := e.pipeHint(src); hint != "" {
		return hint
	}
	if hint := e.lambdaHint(src); hint != "" {
		return hint
	}
	if inner, ok := strings.CutPrefix(strings.TrimSpace(src), "{"); ok && strings.HasSuffix(inner, "}") {
		// ${{ x }}, as GitHub Actions writes it, which CEL reads as a
		// map without its values.
		inner = strings.TrimSpace(strings.TrimSuffix(inner, "}"))
		if _, iss := e.env.Parse(inner); iss.Err() == nil && inner != "" {
			return offered("${{ }} is written ${ }", inner)
		}
	}
	var out strings.Builder
	var replaced []string
	// braces holds, for each { open, whether it came with a $ before it:
	// its } is then taken away too.
	var braces []bool
	nested := false
	replace := func(token string) {
		cel, foreign := foreignOperators[token]
		if !foreign {
			out.WriteString(token)
			return
		}
		out.WriteString(cel)
		note := cel + " for " + token
		for _, r := range replaced {
			if r == note {
				return
			}
		}
		replaced = append(replaced, note)
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			end, err := expr.StringEnd(src, i)
			if err != nil {
				// Unterminated: the rest is the literal.
				end = len(src) - 1
			}
			out.WriteString(src[i : end+1])
			i = end + 1
		case c == '$' && strings.HasPrefix(src[i:], "${"):
			braces = append(braces, true)
			nested = true
			i += 2
		case c == '{':
			braces = append(braces, false)
			out.WriteByte(c)
			i++
		case c == '}' && len(braces) > 0:
			if !braces[len(braces)-1] {
				out.WriteByte(c)
			}
			braces = braces[:len(braces)-1]
			i++
		case isIdentStart(c):
			start := i
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			word := src[start:i]
			if before := strings.TrimRight(src[:start], " \t\n"); strings.HasSuffix(before, ".") || strings.HasPrefix(src[i:], "(") {
				// A field or a function of that name.
				out.WriteString(word)
				continue
			}
			replace(word)
		case strings.IndexByte(operatorChars, c) >= 0:
			start := i
			for i < len(src) && strings.IndexByte(operatorChars, src[i]) >= 0 {
				i++
			}
			replace(src[start:i])
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(replaced) == 0 && !nested {
		return ""
	}
	rewritten := out.String()
	if _, iss := e.env.Parse(rewritten); iss.Err() != nil {
		return ""
	}
	var says []string
	if nested {
		says = append(says, "inside ${...} values are named without ${ }")
	}
	if len(replaced) > 0 {
		says = append(says, "CEL writes "+strings.Join(replaced, ", "))
	}
	return offered(strings.Join(says, ", and "), rewritten)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// filters are the functions templating languages (Helm, Jinja) apply with
// a pipe, x | lower, and the method CEL calls on x for each.
var filters = map[string]string{"lower": "lowerAscii()", "upper": "upperAscii()", "trim": "trim()"}

// pipeHint answers the two operators of templating languages that CEL
// writes as calls: x | lower (each pipe to a filter above) and a ?? b,
// with src so written, when that parses. "" when src has neither.
func (e *Env) pipeHint(src string) string {
	pipes, coalesce := operatorsOutsideStrings(src)
	var rewritten, says string
	switch {
	case len(pipes) > 0:
		receiver := strings.TrimSpace(src[:pipes[0]])
		if !simpleOperand.MatchString(receiver) {
			receiver = "(" + receiver + ")"
		}
		for i, at := range pipes {
			end := len(src)
			if i+1 < len(pipes) {
				end = pipes[i+1]
			}
			method, ok := filters[strings.TrimSpace(src[at+1:end])]
			if !ok {
				return ""
			}
			receiver += "." + method
		}
		rewritten, says = receiver, "CEL has no pipes: call the function on the value"
	case len(coalesce) == 1:
		left, right := strings.TrimSpace(src[:coalesce[0]]), strings.TrimSpace(src[coalesce[0]+2:])
		if m := lastField.FindStringSubmatch(left); m != nil {
			rewritten = m[1] + ".?" + m[2] + ".orValue(" + right + ")"
		} else if m := lastIndex.FindStringSubmatch(left); m != nil {
			rewritten = m[1] + "[?" + m[2] + "].orValue(" + right + ")"
		} else {
			return ""
		}
		says = "CEL has no ??: select what may be absent with .? (or [?...]) and give the default with orValue"
	default:
		return ""
	}
	if _, iss := e.env.Parse(rewritten); iss.Err() != nil {
		return ""
	}
	return offered(says, rewritten)
}

var (
	// simpleOperand is an operand a method is called on without
	// parentheses: a name, its fields and indexes.
	simpleOperand = regexp.MustCompile(`^[A-Za-z_][\w.]*(\[[^\[\]]*\])*$`)
	// lastField and lastIndex split an operand at its last field or index.
	lastField = regexp.MustCompile(`^(.+)\.([A-Za-z_]\w*)$`)
	lastIndex = regexp.MustCompile(`^(.+)\[([^\[\]]+)\]$`)
)

// operatorsOutsideStrings returns where src has a single | and where ??,
// outside its string literals.
func operatorsOutsideStrings(src string) (pipes, coalesce []int) {
	literals := stringLiterals(src)
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case len(literals) > 0 && i == literals[0][0]:
			i = literals[0][1] - 1
			literals = literals[1:]
		case c == '|' && (i+1 >= len(src) || src[i+1] != '|') && (i == 0 || src[i-1] != '|'):
			pipes = append(pipes, i)
		case c == '?' && i+1 < len(src) && src[i+1] == '?':
			coalesce = append(coalesce, i)
			i++
		}
	}
	return pipes, coalesce
}

// lambda is a macro's variable written as another language's lambda:
// exists(i => ...), map(i -> ...).
var lambda = regexp.MustCompile(`([(,]\s*)([A-Za-z_]\w*)\s*(?:=>|->)\s*`)

// lambdaHint rewrites the lambdas of src (outside its string literals) as
// the two arguments CEL's macros take, exists(i, ...), and says so with
// src so written, when that parses. "" when src has none.
func (e *Env) lambdaHint(src string) string {
	literals := stringLiterals(src)
	var out strings.Builder
	last := 0
	for _, loc := range lambda.FindAllStringSubmatchIndex(src, -1) {
		if slices.ContainsFunc(literals, func(l [2]int) bool { return loc[0] < l[1] && l[0] < loc[1] }) {
			continue
		}
		out.WriteString(src[last:loc[0]])
		out.WriteString(src[loc[2]:loc[3]] + src[loc[4]:loc[5]] + ", ")
		last = loc[1]
	}
	if last == 0 {
		return ""
	}
	out.WriteString(src[last:])
	rewritten := out.String()
	if _, iss := e.env.Parse(rewritten); iss.Err() != nil {
		return ""
	}
	return offered("CEL's macros take the variable and the expression as two arguments", rewritten)
}

// offered is a hint's words and the expression CEL writes, on one line: a
// line break outside a string literal, which CEL reads as a space, is
// written as one, so that the hint stays on its error's first line (an
// expression from a YAML block holds them).
func offered(says, rewritten string) string {
	if strings.ContainsAny(rewritten, "\r\n") {
		literals := stringLiterals(rewritten)
		b := []byte(rewritten)
		for i, c := range b {
			if (c == '\n' || c == '\r') && !slices.ContainsFunc(literals, func(l [2]int) bool { return l[0] <= i && i < l[1] }) {
				b[i] = ' '
			}
		}
		rewritten = string(b)
	}
	return says + ": ${" + rewritten + "}"
}

// stringLiterals are the spans, [start, end), of src's string literals.
func stringLiterals(src string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(src); i++ {
		if c := src[i]; c == '"' || c == '\'' {
			end, err := expr.StringEnd(src, i)
			if err != nil {
				return append(spans, [2]int{i, len(src)})
			}
			spans = append(spans, [2]int{i, end + 1})
			i = end
		}
	}
	return spans
}
