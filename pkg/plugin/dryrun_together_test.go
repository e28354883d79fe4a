package plugin

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

func rgdObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Of the RGDs given to dry-run, only one using the kind of another given,
// which the cluster does not serve, is checked offline; the kinds it uses
// are recorded with the CRDs their RGDs generate.
func TestCompileGivenChecksOfflineWhatUsesAGivenKind(t *testing.T) {
	builtin, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	inner := rgdObject(t, `{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: inner},
  spec: {schema: {apiVersion: v1alpha1, kind: Inner, spec: {size: "integer | maximum=5"}},
    resources: [{id: config, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}}}]}}`)
	outer := rgdObject(t, `{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: outer},
  spec: {schema: {apiVersion: v1alpha1, kind: Outer},
    resources: [{id: inner, template: {apiVersion: kro.run/v1alpha1, kind: Inner, metadata: {name: "${schema.metadata.name}"}}}]}}`)
	broken := rgdObject(t, `{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: broken},
  spec: {schema: {apiVersion: v1alpha1, kind: Broken},
    resources: [{id: inner, template: {apiVersion: kro.run/v1alpha1, kind: Inner, metadata: {name: "${schema.spec.missing}"}}}]}}`)

	c := &cluster{resolver: builtin}
	got := c.compileGiven([]*unstructured.Unstructured{inner, outer, broken})
	if len(got) != 2 || got["inner"] != nil {
		t.Fatalf("checked offline: %v, want outer and broken", slices.Collect(maps.Keys(got)))
	}
	if off := got["outer"]; off.err != nil || off.graph == nil ||
		!slices.Equal(off.awaits, []string{"Inner (served once ResourceGraphDefinition inner is applied)"}) {
		t.Errorf("outer: %v %v %q", off.err, off.graph, off.awaits)
	}
	if off := got["broken"]; off.err == nil || off.graph != nil {
		t.Errorf("broken compiled: %v", off.err)
	}
	k, ok := c.unserved[schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Inner"}]
	if !ok || k.rgd != "inner" || k.crd == nil || k.crd.Name != "inners.kro.run" {
		t.Errorf("unserved kinds: %+v", c.unserved)
	}

	// Alone, it is admitted by the webhook.
	if got := (&cluster{resolver: builtin}).compileGiven([]*unstructured.Unstructured{inner}); got != nil {
		t.Errorf("one RGD alone checked offline: %v", got)
	}
}
