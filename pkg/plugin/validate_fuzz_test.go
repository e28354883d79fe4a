package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadFile feeds mutated manifests to what kubectl kro validate reads
// them with: whatever a file holds, reading it must not panic, and must
// name each document it cannot read by the file and its number.
func FuzzReadFile(f *testing.F) {
	seeds, err := filepath.Glob("../../examples/*/*.yaml")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no examples to seed from: %v", err)
	}
	for _, path := range seeds {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("kind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n---\n{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, spec: 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := readFile("-", bytes.NewReader(data))
		if err != nil {
			return // not a stream of documents at all: an error, as it should be
		}
		for _, u := range in.unreadable {
			if !strings.HasPrefix(u, "-: document ") {
				t.Errorf("a document not read is not named by its file and number: %q", u)
			}
		}
		for _, rgd := range in.rgds {
			if rgd.obj == nil {
				t.Errorf("an RGD read as nothing (its error: %v)", rgd.err)
			}
		}
	})
}
