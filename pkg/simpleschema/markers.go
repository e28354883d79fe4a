package simpleschema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// marker is one `key=value` annotation after the `|` of a field.
type marker struct {
	key   string
	value string
}

// Marker keys. The set is closed: anything else is an error.
const (
	markerRequired    = "required"
	markerDefault     = "default"
	markerDescription = "description"
	markerEnum        = "enum"
	markerMinimum     = "minimum"
	markerMaximum     = "maximum"
	markerPattern     = "pattern"
	markerMinLength   = "minLength"
	markerMaxLength   = "maxLength"
	markerMinItems    = "minItems"
	markerMaxItems    = "maxItems"
	markerUniqueItems = "uniqueItems"
	markerValidation  = "validation"
	markerImmutable   = "immutable"
	markerListType    = "listType"
	markerListMapKey  = "listMapKey"
)

var knownMarkers = []string{
	markerRequired, markerDefault, markerDescription, markerEnum, markerMinimum, markerMaximum,
	markerPattern, markerMinLength, markerMaxLength, markerMinItems, markerMaxItems,
	markerUniqueItems, markerValidation, markerImmutable, markerListType, markerListMapKey,
}

// markerAliases are the names other schema languages (JSON Schema,
// kubebuilder, pydantic) give SimpleSchema's markers, lower case, too far
// from them for a spelling mistake.
var markerAliases = map[string]string{
	"min": markerMinimum, "max": markerMaximum, "ge": markerMinimum, "le": markerMaximum,
	"minlen": markerMinLength, "maxlen": markerMaxLength,
	"regex": markerPattern, "regexp": markerPattern,
	"desc": markerDescription, "doc": markerDescription,
	"values": markerEnum, "oneof": markerEnum, "allowed": markerEnum, "choices": markerEnum,
	"unique": markerUniqueItems, "readonly": markerImmutable,
	"mandatory": markerRequired, "xvalidation": markerValidation, "rule": markerValidation,
}

// textMarkers take values that may hold spaces, which must then be quoted.
var textMarkers = []string{markerDescription, markerDefault, markerValidation, markerPattern}

// splitField splits "type | k=v k2="v 2"" into the type expression and its
// markers. A bare key (`required`) means "true". When only the markers are
// wrong, the type is still returned, so the field keeps its type and one
// mistake does not cascade into errors about a missing field.
func splitField(s string) (typ string, markers []marker, err error) {
	typ, rest, hasMarkers := strings.Cut(s, "|")
	typ = strings.TrimSpace(typ)
	if typ == "" {
		return "", nil, fmt.Errorf("missing type before the markers")
	}
	if !hasMarkers {
		return typ, nil, nil
	}
	markers, err = parseMarkers(rest)
	return typ, markers, err
}

// parseMarkers reads `key=value` pairs separated by white space. A value is
// either double-quoted, where \" and \\ stand for themselves, or bare: up to
// the next white space outside brackets and quotes, so that a JSON default
// such as `default={"a": "b c"}` is one value, as kro reads it. listMapKey is
// the one marker that may be given more than once: each names one key.
func parseMarkers(s string) ([]marker, error) {
	var out []marker
	seen := map[string]bool{}
	// bare is the start of the last value written without quotes, -1 if
	// the last marker had none: a word after it that is no marker is most
	// likely the rest of that value.
	bare := -1
	// spaced is the key of the last marker when nothing came between its
	// name and the white space after it, or after its "=": a space around
	// "=" is most likely what happened.
	spaced := ""
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		if key == "" {
			if spaced != "" && s[start] == '=' {
				return nil, spacedEqualsError(spaced, s[start+1:])
			}
			return nil, fmt.Errorf("expected a marker name at %q", s[start:])
		}
		if !slices.Contains(knownMarkers, key) {
			if spaced != "" && len(out) > 0 && out[len(out)-1].value == "" {
				return nil, spacedEqualsError(spaced, s[start:])
			}
			if bare >= 0 && slices.Contains(textMarkers, out[len(out)-1].key) {
				return nil, splitValueError(s, out[len(out)-1].key, bare, key)
			}
			if bare >= 0 && out[len(out)-1].key == markerEnum {
				return nil, splitEnumError(s, bare, key)
			}
			if strings.HasPrefix(key, "|") {
				return nil, errors.New(`a second "|": the markers all follow the first, separated by spaces, as in integer | minimum=1 default=2`)
			}
			if meant, ok := markerAliases[strings.ToLower(key)]; ok {
				return nil, fmt.Errorf("unknown marker %q: SimpleSchema calls it %s (known markers: %s)", key, meant, strings.Join(knownMarkers, ", "))
			}
			if strings.EqualFold(key, "optional") {
				return nil, fmt.Errorf("unknown marker %q: a field is optional unless it is required=true, so leave it out", key)
			}
			if meant, ok := spelling.Closest(key, knownMarkers); ok {
				return nil, fmt.Errorf("unknown marker %q: did you mean %s? (known markers: %s)", key, meant, strings.Join(knownMarkers, ", "))
			}
			return nil, fmt.Errorf("unknown marker %q (known markers: %s)", key, strings.Join(knownMarkers, ", "))
		}
		bare, spaced = -1, ""
		if seen[key] && key != markerListMapKey {
			return nil, fmt.Errorf("marker %q is given twice", key)
		}
		seen[key] = true
		if i >= len(s) || s[i] != '=' {
			out = append(out, marker{key: key, value: "true"})
			spaced = key
			continue
		}
		i++ // '='
		if i < len(s) && isSpace(s[i]) {
			out = append(out, marker{key: key, value: ""})
			spaced = key
			continue
		}
		var value string
		if i < len(s) && s[i] == '"' {
			var closed bool
			if value, i, closed = readQuoted(s, i); !closed {
				return nil, fmt.Errorf("marker %q: unterminated quoted value", key)
			}
		} else {
			vstart := i
			var err error
			if i, err = scanBare(s, i); err != nil {
				var unbalanced *unbalancedError
				if errors.As(err, &unbalanced) && (key == markerPattern || key == markerDescription) {
					// A regular expression's escaped bracket (`[\]]`, `\[`)
					// is one the author meant alone.
					return nil, fmt.Errorf("marker %q: %w; a value written without quotes must close each [ and { it opens, a backslash before one included: to write one alone, quote the value: %s=%s",
						key, err, key, quotedValue([]string{s[vstart:wordEnd(s, unbalanced.at)]}))
				}
				return nil, fmt.Errorf("marker %q: %w", key, err)
			}
			value = s[vstart:i]
			bare = vstart
		}
		out = append(out, marker{key: key, value: value})
	}
}

// spacedEqualsError explains a marker written with white space around its
// "=" (`default = "x"`, `required= true`), which ends the marker there, as
// in kro: rest is what follows the "=". It suggests the marker written
// without the spaces, its value as it was written.
func spacedEqualsError(key, rest string) error {
	rest = strings.TrimLeft(rest, " \t\n\r")
	end := len(rest)
	if strings.HasPrefix(rest, `"`) {
		_, end, _ = readQuoted(rest, 0)
	} else if words := valueWords(rest, 0); len(words) > 1 && slices.Contains(textMarkers, key) {
		// Words up to the next marker, which need quotes to be one value.
		return fmt.Errorf("marker %q is written with a space around its \"=\", which ends it there: write %s=%s", key, key, quotedValue(words))
	} else if e, err := scanBare(rest, 0); err == nil {
		end = e
	}
	return fmt.Errorf("marker %q is written with a space around its \"=\", which ends it there: write %s=%s", key, key, rest[:end])
}

// readQuoted reads the quoted value that opens at s[i]: its text, where
// \" and \\ stand for themselves, the index just past its closing quote
// (the end of s when it has none), and whether it was closed.
func readQuoted(s string, i int) (value string, next int, closed bool) {
	var b strings.Builder
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			i++
			b.WriteByte(s[i])
		case c == '"':
			return b.String(), i + 1, true
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), len(s), false
}

// splitValueError explains a word that is no marker after a value written
// without quotes (`description=The name of the app`): such a value ends at
// the first space, and the words after it were read as markers. It
// suggests the value quoted, up to the next word that is a marker.
func splitValueError(s, key string, valueStart int, word string) error {
	return fmt.Errorf("unknown marker %q: a value written without quotes ends at the first space, so %q is not part of %s's value; to keep the spaces, quote it: %s=%s",
		word, word, key, key, quotedValue(valueWords(s, valueStart)))
}

// quotedValue writes words as one quoted marker value, escaping what the
// marker parser reads as escapes.
func quotedValue(words []string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(strings.Join(words, " ")) + `"`
}

// splitEnumError explains a word that is no marker after an enum written
// with spaces between its values (`enum=gold, silver`): the list ended at
// the first space. It suggests the values joined by commas alone and, when
// no comma was written, the words quoted as one value, which is the other
// reading.
func splitEnumError(s string, valueStart int, word string) error {
	words := valueWords(s, valueStart)
	var values []string
	for _, w := range words {
		for _, v := range strings.Split(w, ",") {
			if v != "" {
				values = append(values, v)
			}
		}
	}
	advice := "write enum=" + strings.Join(values, ",")
	if !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, ",") }) {
		advice += fmt.Sprintf(", or enum=%q for one value holding spaces", strings.Join(words, " "))
	}
	return fmt.Errorf("unknown marker %q: enum's values are separated by commas alone, and a space ends the list, so %q is not one of them; %s",
		word, strings.Trim(word, ","), advice)
}

// valueWords returns the words of s from valueStart up to the next word that
// is a marker: what its author meant as one value.
func valueWords(s string, valueStart int) []string {
	words := strings.Fields(s[valueStart:])
	for i := 1; i < len(words); i++ {
		if name, _, _ := strings.Cut(words[i], "="); slices.Contains(knownMarkers, name) {
			return words[:i]
		}
	}
	return words
}

// scanBare returns the end of a bare value starting at i: the first white
// space outside {} and [] and outside double quotes.
func scanBare(s string, i int) (int, error) {
	start := i
	depth := 0
	quoted := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\':
			i++ // the escaped character
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return 0, &unbalancedError{fmt.Sprintf("%q closes a bracket that was not opened", c), i}
			}
			depth--
		case depth == 0 && isSpace(c):
			return i, nil
		}
	}
	switch {
	case quoted:
		return 0, fmt.Errorf("unterminated quoted string in the value")
	case depth > 0:
		// Where the value was meant to end is unknown: its first word.
		return 0, &unbalancedError{"unclosed { or [ in the value", start}
	}
	return i, nil
}

// unbalancedError is a bare value's bracket without its pair; at is where
// the value's last word starts or holds, for the error to quote it.
type unbalancedError struct {
	msg string
	at  int
}

func (e *unbalancedError) Error() string { return e.msg }

// wordEnd returns the index of the first white space at or after i in s, or
// its length.
func wordEnd(s string, i int) int {
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
