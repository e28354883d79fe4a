package expr

import (
	"fmt"
	"strings"
)

// Segment is a piece of a string: literal text or one expression.
type Segment struct {
	// Literal is the text of a literal segment.
	Literal string
	// Expr is the CEL source of an expression segment, without ${ and }.
	Expr string
	// IsExpr tells the two kinds apart (an empty literal is legal).
	IsExpr bool
}

// Parse splits s into literal and expression segments. A string with no
// expression gives one literal segment.
func Parse(s string) ([]Segment, error) {
	var segs []Segment
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end, err := closingBrace(s, i+2)
			if err != nil {
				return nil, err
			}
			src := strings.TrimSpace(s[i+2 : end])
			if src == "" {
				return nil, fmt.Errorf("empty expression ${} at offset %d", i)
			}
			if lit.Len() > 0 {
				segs = append(segs, Segment{Literal: lit.String()})
				lit.Reset()
			}
			segs = append(segs, Segment{Expr: src, IsExpr: true})
			i = end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 || len(segs) == 0 {
		segs = append(segs, Segment{Literal: lit.String()})
	}
	return segs, nil
}

// closingBrace finds the } that closes the expression starting at start,
// skipping braces inside nested maps and CEL string literals.
func closingBrace(s string, start int) (int, error) {
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			end, err := StringEnd(s, i)
			if err != nil {
				return 0, err
			}
			i = end
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i, nil
			}
			depth--
		}
	}
	return 0, fmt.Errorf("unterminated expression: %q has no closing }", s[start-2:])
}

// StringEnd returns the index of the quote that closes the CEL string literal
// opening at i, including triple-quoted strings and backslash escapes.
func StringEnd(s string, i int) (int, error) {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], strings.Repeat(q, 3)) {
		if end := strings.Index(s[i+3:], strings.Repeat(q, 3)); end >= 0 {
			return i + 3 + end + 2, nil
		}
		return 0, fmt.Errorf("unterminated string literal in expression %q", s[i:])
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case s[i]:
			return j, nil
		}
	}
	return 0, fmt.Errorf("unterminated string literal in expression %q", s[i:])
}

// IsStandalone reports whether segs are exactly one expression.
func IsStandalone(segs []Segment) bool {
	return len(segs) == 1 && segs[0].IsExpr
}

// HasExpr reports whether any segment is an expression.
func HasExpr(segs []Segment) bool {
	for _, s := range segs {
		if s.IsExpr {
			return true
		}
	}
	return false
}

// Format writes segments back as source text, the inverse of Parse: a
// literal ${ is escaped as $${.
func Format(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.IsExpr {
			b.WriteString("${" + s.Expr + "}")
		} else {
			b.WriteString(strings.ReplaceAll(s.Literal, "${", "$${"))
		}
	}
	return b.String()
}
