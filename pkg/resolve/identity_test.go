package resolve

import (
	"strings"
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
		{"a first ConfigMap", func() error { return r.Claim(config, Item{}, "ns", "x") }, ""},
		{"a Secret of the same name", func() error { return r.Claim(secret, Item{}, "ns", "x") }, ""},
		{"the same name in another namespace", func() error { return r.Claim(copies, Item{}, "other", "x") }, ""},
		{"an item naming the first ConfigMap", func() error { return r.Claim(copies, Item{Index: 1}, "ns", "x") },
			"config and copies[1] both render ConfigMap ns/x: each object a graph manages needs a name of its own"},
		{"a second item naming the first item's object", func() error { return r.Claim(copies, Item{Index: 2}, "other", "x") },
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

// Items that render one object because a list forEach reads holds a value
// twice are told which value, and in which list, so that the instance's
// author need not find the repeat; items of equal names but different
// values are not said to repeat one.
func TestItemsOfARepeatedValueNameIt(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: repeats}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Repeats
    spec:
      regions: "[]string"
      tiers: "[]string"
      ports: "[]integer"
  resources:
  - id: regional
    forEach:
    - region: ${schema.spec.regions}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${region}"}
  - id: tiered
    forEach:
    - region: ${schema.spec.regions}
    - tier: ${schema.spec.tiers}
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}-${region}-${tier}"}
  - id: byPort
    forEach:
    - port: ${schema.spec.ports}
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: "${schema.metadata.name}-${string(port / 1000)}"}
`)
	s := NewScope(g, obj(t, `{metadata: {name: r, namespace: ns}, spec: {regions: [eu, us, eu], tiers: [gold], ports: [8080, 8443]}}`))
	claimAll := func(id string) error {
		n := g.Node(id)
		items, err := Expand(n, s, 0)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		r := Renderers{}
		for _, item := range items {
			u, err := Render(n, item.Scope)
			if err != nil {
				t.Fatalf("%s[%d]: %v", id, item.Index, err)
			}
			name := u["metadata"].(map[string]any)["name"].(string)
			if err := r.Claim(n, item, "ns", name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, c := range []struct {
		id, want string
	}{
		{"regional", `regional[0] and regional[2] both render ConfigMap ns/r-eu: each object a graph manages needs a name of its own; ` +
			`both bind region to "eu": ${schema.spec.regions} holds it twice (a schema field marked uniqueItems=true refuses a repeat)`},
		{"tiered", `tiered[0] and tiered[2] both render Secret ns/r-eu-gold: each object a graph manages needs a name of its own; ` +
			`both bind region to "eu" and tier to "gold": one of the lists forEach reads holds a value twice`},
		// 8080 and 8443 give one name, but they are two values: no repeat
		// to point at.
		{"byPort", `byPort[0] and byPort[1] both render Service ns/r-8: each object a graph manages needs a name of its own`},
	} {
		err := claimAll(c.id)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to begin %q", c.id, err, c.want)
		}
		if c.id == "byPort" && strings.Contains(err.Error(), "twice") {
			t.Errorf("%s: %v, which tells of a repeat of values that differ", c.id, err)
		}
	}
}
