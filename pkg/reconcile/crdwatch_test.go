package reconcile

import (
	"slices"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// uninstalledGizmo resolves as next does, but Gizmo as its CRD's watch
// does once the CRD is being deleted.
type uninstalledGizmo struct{ next kinds.Resolver }

func (u uninstalledGizmo) Resolve(gvk schema.GroupVersionKind) (*kinds.Info, error) {
	if gvk.Kind == "Gizmo" {
		return nil, &kinds.UninstalledError{GVK: gvk, CRD: "gizmos.example.net"}
	}
	return u.next.Resolve(gvk)
}

// An RGD using a kind whose CRD is being deleted is not accepted, in words
// that name the CRD, and waits for a CRD of the kind's group: its event
// queues the RGD.
func TestRGDsWaitForTheKindsOfRemovedCRDs(t *testing.T) {
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

	k := &waitingKinds{next: served, missing: sets.New[string]()}
	if _, err := graph.Compile(rgd, graph.Options{Resolver: k}); err != nil || k.missing.Len() != 0 {
		t.Fatalf("with Gizmo installed: %v, waiting for %v", err, sets.List(k.missing))
	}
	k = &waitingKinds{next: uninstalledGizmo{served}, missing: sets.New[string]()}
	_, err := graph.Compile(rgd, graph.Options{Resolver: k})
	const want = `spec.resources[gizmo].template.kind: Not found: "example.net/v1 Gizmo (its CustomResourceDefinition gizmos.example.net is deleted or being deleted)"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("with Gizmo's CRD removed: got %v, want %s", err, want)
	}
	if !k.missing.Has("example.net") || k.notPublished {
		t.Errorf("the compile waits for %v (schema pending: %v), want example.net", sets.List(k.missing), k.notPublished)
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

// The informers of a deleted CRD's resource stop, in every version; those
// of other resources, of its group too, run on.
func TestInformersOfADeletedCRDStop(t *testing.T) {
	w := unreachableInformers(t)
	gizmosV1 := schema.GroupVersionResource{Group: "example.net", Version: "v1", Resource: "gizmos"}
	gizmosV2 := schema.GroupVersionResource{Group: "example.net", Version: "v2", Resource: "gizmos"}
	widgets := schema.GroupVersionResource{Group: "example.net", Version: "v1", Resource: "widgets"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, gvr := range []schema.GroupVersionResource{gizmosV1, gizmosV2, widgets, configMaps} {
		w.watch(gvr)
	}
	stopped := w.byGVR[gizmosV1]
	e := &Engine{local: &target{managed: w}}
	e.kindGone(schema.ParseGroupResource("gizmos.example.net"))
	for gvr, want := range map[schema.GroupVersionResource]bool{gizmosV1: false, gizmosV2: false, widgets: true, configMaps: true} {
		if _, running := w.informer(gvr); running != want {
			t.Errorf("%s: informer running %v, want %v", gvr, running, want)
		}
	}
	select {
	case <-stopped.stop:
	default:
		t.Error("the informer of gizmos was forgotten but not stopped")
	}
	// A graph using Gizmo again starts it anew.
	w.watch(gizmosV1)
	if _, running := w.informer(gizmosV1); !running {
		t.Error("gizmos not watched again")
	}
}
