package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// camelCase joins the words of name, split at every character that is not
// a letter or digit, as lowerCamelCase, or UpperCamelCase when upper is
// set: the name one written in another convention (web-app, web_app) was
// meant to be, to suggest it. "" when there is none: name is no word, or
// starts with a digit.
func camelCase(name string, upper bool) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var b strings.Builder
	for i, w := range words {
		first, size := utf8.DecodeRuneInString(w)
		if i == 0 && !upper {
			first = unicode.ToLower(first)
		} else {
			first = unicode.ToUpper(first)
		}
		b.WriteRune(first)
		b.WriteString(w[size:])
	}
	s := b.String()
	if s == "" || !unicode.IsLetter([]rune(s)[0]) || s == name {
		return ""
	}
	return s
}

// suchAs is the example an error about a name in the wrong convention
// gives: the name meant, when it can be told, else fallback.
func suchAs(name string, upper bool, fallback string) string {
	if s := camelCase(name, upper); s != "" && (upper && kindPattern.MatchString(s) || !upper && idPattern.MatchString(s)) {
		return s
	}
	return fallback
}
