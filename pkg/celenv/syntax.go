package celenv

import (
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
	return strings.Join(says, ", and ") + ": ${" + rewritten + "}"
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
