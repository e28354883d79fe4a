package resolve

import (
	"errors"
	"testing"
)

// A template waiting for a key an externalRef's object lacks says that its
// owner supplies it and how to read it so as to go on without it; one that
// also reads another resource, or misses no key, waits as for any value.
func TestWaitingForAnExternalValueSaysWhoseItIs(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: configured}
spec:
  schema: {apiVersion: v1alpha1, kind: Configured}
  resources:
    - id: config
      externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {name: platform}}
    - id: region
      externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {name: region}}
    - id: own
      template: {apiVersion: v1, kind: ConfigMap, metadata: {name: own}}
    - id: both
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: both}
        data: {tier: "${config.data.tier + region.data.name}"}
    - id: app
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}"}
        data: {tier: "${config.data.tier}"}
    - id: mixed
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: mixed}
        data: {tier: "${config.data.tier + own.metadata.name}"}
`)
	s := NewScope(g, obj(t, `{metadata: {name: a, namespace: default}}`))
	s.Observe(g.Node("config"), obj(t, `{metadata: {name: platform, namespace: default}, data: {region: eu}}`))
	s.Observe(g.Node("region"), obj(t, `{metadata: {name: region, namespace: default}, data: {name: eu}}`))
	s.Observe(g.Node("own"), obj(t, `{metadata: {name: own, namespace: default}}`))
	_, err := Render(g.Node("app"), s)
	const want = `waiting for a value it reads: data.tier: ${config.data.tier}: no such key: tier; config is an externalRef, which kro-agent reads and never writes: its owner supplies the value, and kro-agent goes on as soon as it is there; to go on without it, read config.data.?tier.orValue("")`
	if !errors.Is(err, ErrExternalValue) || !WaitsForValue(err) || Waiting(err) != want {
		t.Errorf("rendering app: %v\nwant %s", err, want)
	}
	_, err = Render(g.Node("both"), s)
	const wantBoth = `waiting for a value it reads: data.tier: ${config.data.tier + region.data.name}: no such key: tier; config and region are externalRefs, which kro-agent reads and never writes: their owners supply the value, and kro-agent goes on as soon as it is there; to go on without it, read config.data.?tier.orValue("")`
	if !errors.Is(err, ErrExternalValue) || Waiting(err) != wantBoth {
		t.Errorf("rendering both: %v\nwant %s", err, wantBoth)
	}
	if _, err := Render(g.Node("mixed"), s); errors.Is(err, ErrExternalValue) || !WaitsForValue(err) {
		t.Errorf("rendering mixed: %v, want it waiting as for any value", err)
	}
}
