// Package jsonscan finds the members of a JSON object without decoding
// their values: where each one starts and ends in the input. The agent's
// informers use it to keep what the API server sends as bytes, cutting out
// only what they do not hold (managedFields) and reading only the few
// strings they route events by.
//
// It checks what it walks over as encoding/json would: an input it accepts
// is valid JSON.
package jsonscan

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Member is one member of a JSON object, as offsets into the object's
// bytes: the member runs from Start (its name's opening quote) to End
// (just after its value), and its value from ValueStart to End.
type Member struct {
	Name       string
	Start      int
	ValueStart int
	End        int
}

// Members returns the members of the JSON object in data, in order.
// Surrounding whitespace is allowed; anything else around the object, or
// an object that is not valid JSON, is an error.
func Members(data []byte) ([]Member, error) {
	return whole(data, '{', '}', "object")
}

// Leading returns the first n members of the JSON object in data, or all
// of them when it has fewer, and checks only what it reads up to there.
// It is for reading the members a producer writes first out of an object
// already checked whole as part of another, such as the manager and the
// operation of each managedFields entry the API server sends.
func Leading(data []byte, n int) ([]Member, error) {
	s := scanner{data: data}
	s.space()
	if !s.next('{') {
		return nil, s.errorf("expected an object")
	}
	var members []Member
	if err := s.container('}', 1, &members, func() bool { return len(members) < n }); err != nil {
		return nil, err
	}
	return members[:min(n, len(members))], nil
}

// EachElement calls f with each element of the JSON array in data, in
// order, until f returns false, and checks only what it reads up to there:
// for finding one element of an array already checked whole as part of
// another value.
func EachElement(data []byte, f func(element []byte) bool) error {
	s := scanner{data: data}
	s.space()
	if !s.next('[') {
		return s.errorf("expected an array")
	}
	var elements []Member
	return s.container(']', 1, &elements, func() bool {
		e := elements[len(elements)-1]
		elements = elements[:0]
		return f(data[e.ValueStart:e.End])
	})
}

// Elements returns the elements of the JSON array in data, in order, as
// slices of data. Surrounding whitespace is allowed; anything else around
// the array, or an array that is not valid JSON, is an error.
func Elements(data []byte) ([][]byte, error) {
	spans, err := whole(data, '[', ']', "array")
	if err != nil {
		return nil, err
	}
	elements := make([][]byte, len(spans))
	for i, e := range spans {
		elements[i] = data[e.ValueStart:e.End]
	}
	return elements, nil
}

// whole scans data as one object or array (what names it in errors), with
// nothing but whitespace around it, and returns its members or elements.
func whole(data []byte, open, close byte, what string) ([]Member, error) {
	s := scanner{data: data}
	s.space()
	if !s.next(open) {
		return nil, s.errorf("expected an %s", what)
	}
	var spans []Member
	if err := s.container(close, 1, &spans, nil); err != nil {
		return nil, err
	}
	s.space()
	if s.i != len(data) {
		return nil, s.errorf("unexpected data after the %s", what)
	}
	return spans, nil
}

// Without returns the object in data without the members drop picks, as
// a new slice; members are those Members returned for data.
func Without(data []byte, members []Member, drop func(Member) bool) []byte {
	out := make([]byte, 0, len(data))
	out = append(out, '{')
	first := true
	for _, m := range members {
		if drop(m) {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, data[m.Start:m.End]...)
	}
	return append(out, '}')
}

// String decodes a JSON string value, such as a member's value.
func String(v []byte) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		plain := true
		for _, c := range v[1 : len(v)-1] {
			if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
				plain = false
				break
			}
		}
		if plain {
			return string(v[1 : len(v)-1]), nil
		}
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", err
	}
	return s, nil
}

type scanner struct {
	data []byte
	i    int
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) next(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// maxDepth bounds nesting as encoding/json does (the outer object counts
// as one), so a hostile input cannot exhaust the stack.
const maxDepth = 10000

// value checks one value; depth is how many containers enclose it,
// the outer object included.
func (s *scanner) value(depth int) error {
	if s.i >= len(s.data) {
		return s.errorf("unexpected end of input")
	}
	c := s.data[s.i]
	if (c == '{' || c == '[') && depth+1 > maxDepth {
		return s.errorf("nested too deeply")
	}
	switch {
	case c == '{':
		s.i++
		return s.container('}', depth+1, nil, nil)
	case c == '[':
		s.i++
		return s.container(']', depth+1, nil, nil)
	case c == '"':
		return s.str()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return s.errorf("unexpected character %q", s.data[s.i])
}

// container scans the rest of an object or an array after its opening
// bracket, through its closing one; depth is how many containers enclose
// its values. An object's members, or an array's elements as members
// without a name, are appended to members unless it is nil; then, unless
// it is nil, more tells whether to go on scanning.
func (s *scanner) container(closing byte, depth int, members *[]Member, more func() bool) error {
	s.space()
	if s.next(closing) {
		return nil
	}
	for {
		s.space()
		var m Member
		if closing == '}' {
			m.Start = s.i
			var err error
			if members != nil {
				m.Name, err = s.name()
			} else {
				err = s.str()
			}
			if err != nil {
				return err
			}
			s.space()
			if !s.next(':') {
				return s.errorf("expected ':' after a member name")
			}
			s.space()
			m.ValueStart = s.i
		} else {
			m.Start, m.ValueStart = s.i, s.i
		}
		if err := s.value(depth); err != nil {
			return err
		}
		if members != nil {
			m.End = s.i
			*members = append(*members, m)
			if more != nil && !more() {
				return nil
			}
		}
		s.space()
		if s.next(',') {
			continue
		}
		if s.next(closing) {
			return nil
		}
		return s.errorf("expected ',' or '%c'", closing)
	}
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return s.errorf("expected %s", lit)
	}
	s.i += len(lit)
	return nil
}

// number checks the grammar of a JSON number.
func (s *scanner) number() error {
	s.next('-')
	switch {
	case s.next('0'):
	case s.digits() == 0:
		return s.errorf("expected a digit")
	}
	if s.next('.') && s.digits() == 0 {
		return s.errorf("expected a digit after '.'")
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		if s.digits() == 0 {
			return s.errorf("expected a digit in the exponent")
		}
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str checks a JSON string: closed, no control characters, valid escapes.
// Invalid UTF-8 is allowed, as encoding/json allows it.
func (s *scanner) str() error {
	if !s.next('"') {
		return s.errorf("expected a string")
	}
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return nil
		case c < 0x20:
			return s.errorf("control character in a string")
		case c == '\\':
			s.i++
			if s.i >= len(s.data) {
				return s.errorf("unexpected end of input in a string")
			}
			switch s.data[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if s.i >= len(s.data) || !isHex(s.data[s.i]) {
						return s.errorf("invalid \\u escape")
					}
					s.i++
				}
			default:
				return s.errorf("invalid escape")
			}
		default:
			s.i++
		}
	}
	return s.errorf("unexpected end of input in a string")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// name reads a member name.
func (s *scanner) name() (string, error) {
	start := s.i
	if err := s.str(); err != nil {
		return "", err
	}
	return String(s.data[start:s.i])
}
