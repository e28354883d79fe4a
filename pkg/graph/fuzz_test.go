package graph

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
)

// FuzzCompile feeds mutated RGDs through the whole compile path (schema,
// expressions, type-checking, DAG, CRD generation and the API server's CRD
// checks) as the admission webhook and the RGD controller do: whatever the
// RGD, Compile must answer with a graph or an *Error whose every entry names
// a field, never panic. The seeds are the examples and RGDs that reach each
// stage, so that mutations start from documents that get far.
func FuzzCompile(f *testing.F) {
	examples, err := filepath.Glob("../../examples/*/rgd.yaml")
	if err != nil || len(examples) == 0 {
		f.Fatalf("no examples to seed from: %v", err)
	}
	for _, path := range examples {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, doc := range []string{
		`spec: {schema: {apiVersion: v1alpha1, kind: A, spec: {count: "integer | default=2 minimum=1"}}, resources: [{id: cms, forEach: [{i: "${lists.range(schema.spec.count)}"}], template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "c-${string(i)}"}}}]}`,
		`spec: {schema: {apiVersion: v1alpha1, kind: A, spec: {a: "[]string"}, status: {first: "${cm.data.?x.orValue('')}"}}, resources: [{id: cm, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.a[0]}"}, data: {x: "${schema.spec.a.join(',')}"}}, readyWhen: ["${cm.data.x != ''}"], includeWhen: ["${size(schema.spec.a) > 0}"]}]}`,
		`spec: {schema: {apiVersion: v1alpha1, kind: A, types: {P: {port: integer}}, spec: {p: P, m: "map[string]P"}}, resources: [{id: svc, template: {apiVersion: v1, kind: Service, metadata: {name: x}, spec: {ports: [{port: "${schema.spec.p.port}"}]}}}, {id: ext, externalRef: {apiVersion: v1, kind: Secret, metadata: {name: "${svc.metadata.name}"}}}]}`,
		`spec: {schema: {apiVersion: v1alpha1, kind: A, status: {conditions: [{type: Up, status: "${a.status.?readyReplicas.orValue(0) > 0}", message: "${'x'}", polarity: Negative}]}}, resources: [{id: a, template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: "${b.metadata.name}"}}}, {id: b, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}}]}`,
		// An undefined field under macros: its hint types what they bind.
		`spec: {schema: {apiVersion: v1alpha1, kind: A, spec: {n: "integer | default=2"}, status: {names: "${cms.map(c, cel.bind(m, c.metadata, m.nme)).size()}"}}, resources: [{id: cms, forEach: [{i: "${lists.range(schema.spec.n)}"}], template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "c-${string(i)}"}}}]}`,
		// Format strings, checked against their arguments when compiled.
		`spec: {schema: {apiVersion: v1alpha1, kind: A, spec: {count: "integer | default=2", f: "float", o: object}}, resources: [{id: cm, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {a: "${'%d-%.2f-%e-%s-%x'.format([schema.spec.count, schema.spec.f, 1.5, schema.spec.o, 'ab'])}", b: "${'%o %b %X %%'.format([8, 5, b'z'])}"}}}]}`,
	} {
		f.Add([]byte(doc))
	}
	resolver := builtin(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		rgd := &v1alpha1.ResourceGraphDefinition{}
		if yaml.Unmarshal(doc, rgd) != nil {
			return // not an RGD: the API server refuses it before anyone compiles it
		}
		g, err := Compile(rgd, Options{Resolver: resolver, ValidateCRD: offline.Validate})
		if err == nil {
			if g == nil || g.CRD == nil {
				t.Fatalf("Compile succeeded without a graph and its CRD for:\n%s", doc)
			}
			return
		}
		var cerr *Error
		if !errors.As(err, &cerr) || len(cerr.Errs) == 0 {
			t.Fatalf("Compile failed without naming a field: %v", err)
		}
		for _, e := range cerr.Errs {
			if e.Field == "" {
				t.Fatalf("an error without its field path: %v", e)
			}
		}
	})
}
