package plugin

import (
	"bytes"
	"testing"
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
