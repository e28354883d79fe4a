package plugin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestValidationNamesEveryDocument(t *testing.T) {
	var out bytes.Buffer
	err := printValidation(&out, "", ValidationReport{Cluster: "offline", Results: []ValidationResult{
		{Name: "web", File: "a.yaml", Valid: true, TopologicalOrder: []string{"cm", "deploy"}},
		{File: "a.yaml", Errors: []string{"document 2: error converting YAML to JSON: yaml: unmarshal errors:\nline 3: key \"a\" already set in map"}},
	}})
	want := `Kinds resolved: offline
resourcegraphdefinition/web (a.yaml): valid
  topological order: cm -> deploy
resourcegraphdefinition/<unnamed> (a.yaml): 1 error(s)
  - document 2: error converting YAML to JSON: yaml: unmarshal errors:
    line 3: key "a" already set in map
`
	if err != nil || out.String() != want {
		t.Errorf("got %v\n%s\nwant\n%s", err, out.String(), want)
	}
}

// A file with a CRD and the RGD that uses it, and an RGD using the kind
// another one generates, are checked as they would be once applied
// together: expressions are type-checked against the declared schemas, so
// a field neither declares is still an error.
func TestValidateUsesKindsDeclaredInTheFiles(t *testing.T) {
	const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.org}
spec:
  group: example.org
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`
	rgd := func(name, kind string, uses [2]string, field string) string {
		return fmt.Sprintf(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: %s}
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
    spec: {size: integer | default=1}
    status: {size: "${used.spec.%s}"}
  resources:
  - id: used
    template:
      apiVersion: %s
      kind: %s
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`, name, kind, field, uses[0], uses[1])
	}
	gadget, gadgetApp := [2]string{"example.org/v1", "Gadget"}, [2]string{"kro.run/v1alpha1", "GadgetApp"}
	for _, tc := range []struct {
		name  string
		files []string
		want  []string // in the output, in order
		valid bool
	}{
		{name: "a CRD and the RGD using it",
			files: []string{crd + "---" + rgd("gadgetapps", "GadgetApp", gadget, "size")},
			want:  []string{"resourcegraphdefinition/gadgetapps", "valid"}, valid: true},
		{name: "in two files",
			files: []string{rgd("gadgetapps", "GadgetApp", gadget, "size"), crd},
			want:  []string{"resourcegraphdefinition/gadgetapps", "valid"}, valid: true},
		{name: "a field the CRD does not declare",
			files: []string{crd + "---" + rgd("gadgetapps", "GadgetApp", gadget, "color")},
			want:  []string{"resourcegraphdefinition/gadgetapps", "1 error(s)", "color"}},
		{name: "an RGD using the kind another generates, before it",
			files: []string{rgd("suites", "Suite", gadgetApp, "size") + "---" + crd + "---" + rgd("gadgetapps", "GadgetApp", gadget, "size")},
			want:  []string{"resourcegraphdefinition/suites", "valid", "resourcegraphdefinition/gadgetapps", "valid"}, valid: true},
		{name: "a field the generated kind does not have",
			files: []string{rgd("suites", "Suite", gadgetApp, "color") + "---" + crd + "---" + rgd("gadgetapps", "GadgetApp", gadget, "size")},
			want:  []string{"resourcegraphdefinition/suites", "1 error(s)", "color", "resourcegraphdefinition/gadgetapps", "valid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"validate", "--offline"}
			for i, content := range tc.files {
				path := filepath.Join(t.TempDir(), fmt.Sprintf("f%d.yaml", i))
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-f", path)
			}
			var out bytes.Buffer
			cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard})
			cmd.SetArgs(args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if valid := err == nil; valid != tc.valid {
				t.Errorf("valid = %v (%v), want %v; output:\n%s", valid, err, tc.valid, out.String())
			}
			rest := out.String()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order %q):\n%s", w, tc.want, out.String())
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
