package celenv

import (
	"encoding/base64"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// IsBase64 takes exactly the texts the API server's JSON decoder takes for
// bytes: every text of up to six characters over an alphabet of base64
// characters, padding, line breaks and others is judged as
// base64.StdEncoding judges it.
func TestIsBase64AgreesWithTheDecoder(t *testing.T) {
	alphabet := []byte("Az+/=\n\r -_")
	var text []byte
	var try func(depth int)
	try = func(depth int) {
		_, err := base64.StdEncoding.DecodeString(string(text))
		if got := IsBase64(string(text)); got != (err == nil) {
			t.Errorf("IsBase64(%q) = %t, the decoder's error: %v", text, got, err)
		}
		if depth == 6 {
			return
		}
		for _, c := range alphabet {
			text = append(text, c)
			try(depth + 1)
			text = text[:len(text)-1]
		}
	}
	try(0)
	var taken bool
	if n := testing.AllocsPerRun(100, func() { taken = IsBase64("aHVudGVyMiE=\n") }); n != 0 || !taken {
		t.Errorf("IsBase64 allocates %v times (and took the text: %t)", n, taken)
	}
}

// Text where bytes go is checked to be base64, and is not shown when it is
// not: it is most often a secret.
func TestTextWhereBytesGoMustBeBase64(t *testing.T) {
	want := FieldType(spec.MapProperty(&spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Format: "byte"}}))
	if err := ValueFits(want, map[string]any{"password": "aHVudGVyMiE="}); err != nil {
		t.Errorf("base64 text: %v", err)
	}
	err := ValueFits(want, map[string]any{"ok": "aHVudGVyMiE=", "password": "hunter2!"})
	const msg = `holds text that is not base64 (not shown: it may be a secret) at password, where base64 text (bytes) is expected`
	if err == nil || err.Error() != msg {
		t.Errorf("ValueFits = %v, want %s", err, msg)
	}
	if !TakesBytes(want.ElemType) || TakesBytes(want) || TakesBytes(nil) {
		t.Error("TakesBytes tells bytes from the rest wrongly")
	}
}
