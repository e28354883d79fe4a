package resolve

import (
	"errors"
	"strings"
	"testing"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// An expression that fails on a field the instance does not set names
// that field, whatever else it reads; anything else that is missing stays
// a plain wait for input.
func TestUnsetInstanceFieldsAreNamed(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: unset}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Unset
    spec:
      name: string
      owner: string
      tags: "map[string]string"
      db:
        host: string
        port: integer
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}
        labels: ${schema.spec.tags}
        annotations:
          team: ${schema.metadata.labels["team"]}
          optional: '${schema.spec.?tags.orValue({}).size() > 0 ? "tagged" : "untagged"}'
          either: '${has(schema.spec.db.port) ? string(schema.spec.db.port) : schema.spec.db.host}'
      data:
        host: ${schema.spec.db.host}
        nested: ${string(schema.spec.db.port)}
  - id: after
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${cm.metadata.name}-after
      data:
        from: ${cm.data.missing + schema.spec.name}
        owner: ${cm.metadata.name + "-" + schema.spec.owner}
`)
	cm, after := g.Node("cm"), g.Node("after")
	cases := []struct {
		instance, path string
		unset          string // the field named, or "" for a plain wait
	}{
		{`{metadata: {name: i, labels: {team: a}}, spec: {name: nm, db: {host: h, port: 5432}}}`, "metadata.labels", "spec.tags"},
		{`{metadata: {name: i}, spec: {name: nm, tags: {}, db: {host: h, port: 5432}}}`, `metadata.annotations.team`, "metadata.labels"},
		{`{metadata: {name: i, labels: {x: y}}, spec: {name: nm, tags: {}, db: {host: h, port: 5432}}}`, `metadata.annotations.team`, `metadata.labels.team`},
		{`{metadata: {name: i, labels: {team: a}}, spec: {tags: {}, db: {host: h, port: 5432}}}`, "metadata.name", "spec.name"},
		// Both db fields are missing: CEL's "no such key: host" picks
		// the one the failing branch reads.
		{`{metadata: {name: i, labels: {team: a}}, spec: {name: nm, tags: {}, db: {}}}`, "metadata.annotations.either", "spec.db.host"},
		{`{metadata: {name: i, labels: {team: a}}, spec: {name: nm, tags: {}}}`, "metadata.annotations.either", "spec.db"},
		{`{metadata: {name: i, labels: {team: a}}, spec: {name: nm, tags: {}, db: {host: h}}}`, "data.nested", "spec.db.port"},
	}
	for _, c := range cases {
		s := NewScope(g, obj(t, c.instance))
		f := fieldAt(t, cm, c.path)
		_, _, err := FieldValue(f, s)
		var unset *UnsetError
		if !errors.As(err, &unset) || !errors.Is(err, ErrPending) {
			t.Errorf("%s: %s = %v, want an UnsetError, pending", c.instance, c.path, err)
			continue
		}
		if unset.Field.String() != c.unset {
			t.Errorf("%s: the unset field is %s, want %s (%v)", c.instance, unset.Field, c.unset, err)
		}
		if want := c.path + ": ${"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %q does not start with %q", c.instance, err, want)
		}
		if _, err := Render(cm, s); !errors.As(err, &unset) {
			t.Errorf("%s: Render(cm) = %v, want an UnsetError", c.instance, err)
		}
	}

	// Read with .? it may be missing.
	if v, _, err := FieldValue(fieldAt(t, cm, "metadata.annotations.optional"), NewScope(g, obj(t, `{spec: {name: nm}}`))); err != nil || v != "untagged" {
		t.Errorf("metadata.annotations.optional without tags = %v, %v; want untagged", v, err)
	}

	full := `{metadata: {name: i, labels: {team: a}}, spec: {name: nm, tags: {}, db: {host: h, port: 5432}}}`
	s := NewScope(g, obj(t, full))
	if _, err := Render(cm, s); err != nil {
		t.Fatalf("Render(cm) with every field set: %v", err)
	}
	// A field of another resource that is not there: a wait, whoever sets it.
	s.Observe(cm, obj(t, `{metadata: {name: cfg}, data: {}}`))
	_, err := Render(after, s)
	var unset *UnsetError
	if !errors.Is(err, ErrPending) || errors.As(err, &unset) {
		t.Errorf("Render(after) = %v, want a pending error that is no UnsetError", err)
	}
	// One the instance does not set, read beside another resource.
	if _, _, err := FieldValue(fieldAt(t, after, "data.owner"), s); !errors.As(err, &unset) || unset.Field.String() != "spec.owner" {
		t.Errorf("data.owner without spec.owner = %v, want an UnsetError naming spec.owner", err)
	}
}

func fieldAt(t *testing.T, n *graph.Node, path string) *graph.Field {
	t.Helper()
	for _, f := range n.Fields {
		if f.Path.String() == path {
			return f
		}
	}
	t.Fatalf("%s has no field %s", n.ID, path)
	return nil
}
