package resolve

import (
	"errors"
	"fmt"
	"testing"
)

// Fields whose names are no CEL identifiers are read, escaped or in
// backticks, from the objects that hold them under their own names; a
// value holding such a field keeps its name; and one the instance does
// not set is named as it is written in the instance.
func TestFieldsNamedAsNoIdentifierAreRead(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: names}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Names
    spec:
      my-field: string
      cfg:
        log-level: string | default=info
    status:
      cfg: ${schema.spec.cfg}
      namespace: ${cm.metadata.__namespace__}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}
      data:
        escaped: ${schema.spec.my__dash__field}
        quoted: ${schema.spec.cfg.`+"`log-level`"+`}
        present: '${has(schema.spec.my__dash__field) ? "yes" : "no"}'
`)
	cm := g.Node("cm")
	s := NewScope(g, obj(t, `{metadata: {name: n, namespace: ns}, spec: {my-field: dashed, cfg: {}}}`))
	rendered, err := Render(cm, s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rendered["data"]), "map[escaped:dashed present:yes quoted:info]"; got != want {
		t.Errorf("data = %s, want %s", got, want)
	}
	s.Observe(cm, obj(t, `{metadata: {name: n, namespace: ns}, data: {}}`))
	status, err := Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(status["cfg"], " ", status["namespace"]), "map[log-level:info] ns"; got != want {
		t.Errorf("status cfg and namespace = %s, want %s", got, want)
	}

	_, _, err = FieldValue(fieldAt(t, cm, "data.escaped"), NewScope(g, obj(t, `{metadata: {name: n}, spec: {cfg: {}}}`)))
	var unset *UnsetError
	if !errors.As(err, &unset) || unset.Field.String() != "spec.my-field" {
		t.Errorf("data.escaped without spec.my-field = %v, want an UnsetError naming spec.my-field", err)
	}
}
