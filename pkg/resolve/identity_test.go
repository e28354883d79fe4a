package resolve

import (
	"testing"
)

// Two resources, or two items of a collection, naming one object are
// refused with both named; the same name in another namespace or of another
// kind is another object.
func TestRenderersClaimEachObjectOnce(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: claims}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Claims
    spec: {name: string}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}"}
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.spec.name}"}
  - id: copies
    forEach:
    - idx: ${[1, 2]}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-${string(idx)}"}
`)
	config, secret, copies := g.Node("config"), g.Node("secret"), g.Node("copies")
	r := Renderers{}
	for _, c := range []struct {
		what      string
		claim     func() error
		wantError string
	}{
		{"a first ConfigMap", func() error { return r.Claim(config, 0, "ns", "x") }, ""},
		{"a Secret of the same name", func() error { return r.Claim(secret, 0, "ns", "x") }, ""},
		{"the same name in another namespace", func() error { return r.Claim(copies, 0, "other", "x") }, ""},
		{"an item naming the first ConfigMap", func() error { return r.Claim(copies, 1, "ns", "x") },
			"config and copies[1] both render ConfigMap ns/x: each object a graph manages needs a name of its own"},
		{"a second item naming the first item's object", func() error { return r.Claim(copies, 2, "other", "x") },
			"copies[0] and copies[2] both render ConfigMap other/x: each object a graph manages needs a name of its own"},
	} {
		err := c.claim()
		switch {
		case c.wantError == "" && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case c.wantError != "" && (err == nil || err.Error() != c.wantError):
			t.Errorf("%s: %v, want %q", c.what, err, c.wantError)
		}
	}
}
