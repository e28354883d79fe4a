package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
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

// FuzzCheckInstances feeds mutated instances of examples/webapp to what
// validate checks them with, the API server's admission of a new object
// and the rendering of the templates: whatever an instance holds, checking
// it must not panic, and an instance that is not valid says why.
func FuzzCheckInstances(f *testing.F) {
	raw, err := os.ReadFile("../../examples/webapp/rgd.yaml")
	if err != nil {
		f.Fatal(err)
	}
	in, err := readFile("-", bytes.NewReader(raw))
	if err != nil || len(in.rgds) != 1 || in.rgds[0].err != nil {
		f.Fatalf("reading the example RGD: %v %v", err, in.rgds)
	}
	builtin, err := kinds.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	g, err := graph.Compile(in.rgds[0].obj, graph.Options{Resolver: builtin})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: demo}, spec: {name: demo}}",
		"{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {generateName: d-}, spec: {name: demo, replicas: 3, port: 8080, ingress: {enabled: true}}}",
		"{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: Demo}, spec: {name: 7, replicas: -1, extra: [1]}, status: {state: ACTIVE}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := decodeObject(data)
		if err != nil || obj == nil {
			return // not an object: the file reader names it unreadable
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("kro.run/v1alpha1")
		u.SetKind("WebApp")
		for _, res := range checkInstances(context.Background(), g, []fileObject{{obj: u, file: "-"}}) {
			if !res.Valid && len(res.Errors) == 0 {
				t.Errorf("instance %s is invalid without an error", res.Name)
			}
		}
	})
}
