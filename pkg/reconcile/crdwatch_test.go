package reconcile

import (
	"slices"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

const gizmoCRD = `
metadata: {name: gizmos.example.net}
spec:
  group: example.net
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

const gizmoRGD = `
metadata: {name: gizmoboxes}
spec:
  schema: {apiVersion: v1alpha1, kind: GizmoBox}
  resources:
  - id: gizmo
    template: {apiVersion: example.net/v1, kind: Gizmo, metadata: {name: "${schema.metadata.name}"}}
`

func crdMeta(name string, deleting bool) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if deleting {
		m.DeletionTimestamp = &metav1.Time{}
	}
	return m
}

// A CRD seen deleted, or being deleted, makes its kind unresolvable for the
// RGDs' compiles, whatever discovery still lists, until one of its name is
// created again; the compile error names the CRD.
func TestKindsOfRemovedCRDsDoNotResolve(t *testing.T) {
	crd := &extv1.CustomResourceDefinition{}
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(gizmoCRD), crd); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(gizmoRGD), rgd); err != nil {
		t.Fatal(err)
	}
	builtin, _ := kinds.Builtin()
	served := kinds.NewDeclared(builtin)
	served.Add(crd)
	w := &crdWatch{removed: sets.New[string]()}
	compile := func() (*installedKinds, error) {
		k := &installedKinds{next: served, crds: w, missing: sets.New[string]()}
		_, err := graph.Compile(rgd, graph.Options{Resolver: k})
		return k, err
	}

	if _, err := compile(); err != nil {
		t.Fatalf("with Gizmo installed: %v", err)
	}
	for _, deleting := range []bool{true, false} {
		if !w.seen(crdMeta("gizmos.example.net", deleting), !deleting) {
			t.Fatalf("a CRD seen deleted (or being deleted: %v) was not reported removed", deleting)
		}
		k, err := compile()
		const want = `spec.resources[gizmo].template.kind: Not found: "example.net/v1 Gizmo (its CustomResourceDefinition gizmos.example.net is deleted or being deleted)"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("with Gizmo's CRD removed (being deleted: %v): got %v, want %s", deleting, err, want)
		}
		if !k.missing.Has("example.net") || k.notPublished {
			t.Errorf("the compile waits for %v (schema pending: %v), want example.net", sets.List(k.missing), k.notPublished)
		}
	}
	if w.seen(crdMeta("gizmos.example.net", false), false) {
		t.Fatal("a CRD created again is still reported removed")
	}
	if k, err := compile(); err != nil || k.missing.Len() != 0 {
		t.Errorf("with Gizmo installed again: %v, waiting for %v", err, sets.List(k.missing))
	}
	// Another CRD of the group is no reason to refuse Gizmo.
	w.seen(crdMeta("widgets.example.net", true), true)
	if _, err := compile(); err != nil {
		t.Errorf("with another CRD of example.net deleted: %v", err)
	}
}

// What a CRD event brings back: an RGD whose graph uses the removed CRD's
// kind (its graph dropped), or one that waits for a kind of the created
// CRD's group; no other.
func TestCRDEventsQueueTheRGDsTheyConcern(t *testing.T) {
	gizmo := &kinds.Info{GVK: schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}, Resource: "gizmos"}
	configMap := &kinds.Info{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Resource: "configmaps"}
	r := &RGDReconciler{
		compiled: map[string]compiledGraph{
			"gizmoboxes": {graph: &graph.Graph{Nodes: []*graph.Node{{ID: "cm", Kind: configMap}, {ID: "gizmo", Kind: gizmo}}}},
			"notes":      {graph: &graph.Graph{Nodes: []*graph.Node{{ID: "cm", Kind: configMap}}}},
		},
		waiting: map[string]sets.Set[string]{
			"widgetapps": sets.New("example.net"),
			"tasks":      sets.New("batch.example.org"),
		},
	}

	if got := r.kindsRemoved("widgets.example.net"); len(got) != 0 {
		t.Errorf("another kind of the group removed queued %v", got)
	}
	if got := r.kindsRemoved("gizmos.example.net"); !slices.Equal(got, []string{"gizmoboxes"}) {
		t.Errorf("Gizmo removed queued %v, want gizmoboxes", got)
	}
	if _, ok := r.compiled["gizmoboxes"]; ok {
		t.Error("the graph using Gizmo was kept: compiling again would find it and change nothing")
	}
	if _, ok := r.compiled["notes"]; !ok {
		t.Error("a graph not using Gizmo was dropped")
	}

	if got := r.kindsInstalled("gizmos.example.net"); !slices.Equal(got, []string{"widgetapps"}) {
		t.Errorf("a CRD of example.net created queued %v, want widgetapps", got)
	}
	if got := r.kindsInstalled("gizmos.example.org"); len(got) != 0 {
		t.Errorf("a CRD of another group queued %v", got)
	}
}
