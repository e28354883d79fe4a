package celenv

import (
	"github.com/google/cel-go/common/types"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// IsBase64 tells whether s is bytes written as the API server reads a
// field of bytes (a Secret's data, a caBundle) from JSON: standard base64,
// padded, with line breaks ignored. Text that is not is refused at every
// write, in its decoder's words (illegal base64 data at input byte 7),
// which name neither the field nor what to write. It allocates nothing:
// a Secret's data is checked at every render.
func IsBase64(s string) bool {
	n, padding := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\r' || c == '\n':
			continue
		case c == '=':
			padding++
		case padding > 0 || !isBase64Digit(c):
			return false // data after the padding, or no base64 at all
		}
		n++
	}
	return n%4 == 0 && padding <= 2
}

// IsBase64Text tells whether s, part of a text, is made of base64's
// characters alone: text with any other in it is never base64.
func IsBase64Text(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isBase64Digit(c) && c != '=' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// isBase64Digit tells the 64 characters of standard base64.
func isBase64Digit(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

// TakesBytes tells whether a field of type want holds bytes, which are
// written as base64 text: a string written into it is checked at run time.
func TakesBytes(want *apiservercel.DeclType) bool {
	return want != nil && want.CelType().Kind() == types.BytesKind
}

// notBase64 stands for text written where bytes go that is not base64:
// errors say so without showing it, as such text is most often a secret
// written into a Secret's data.
type notBase64 struct{}
