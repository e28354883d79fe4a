package reconcile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// While the workload cluster of a placed instance cannot be reached, its
// objects there are not known: the ApplySet annotation keeps every kind it
// lists, beside the graph's, so that none of them is lost for pruning; and
// no recorded kind is looked for in the wrong cluster. (With the cluster
// reachable, the kinds are read there: TestPlacement.)
func TestApplySetKeepsKindsItCannotLookAt(t *testing.T) {
	w := unreachableInformers(t)
	deployments := &kinds.Info{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Resource: "deployments"}
	inst := &unstructured.Unstructured{}
	inst.SetAnnotations(map[string]string{v1alpha1.AnnotationApplySetGroupKinds: "ConfigMap,ServiceAccount"})
	r := &run{
		s:             &served{graph: &graph.Graph{Nodes: []*graph.Node{{ID: "deploy", Kind: deployments, Template: map[string]any{}}}}},
		inst:          inst,
		t:             &target{managed: w},
		membersUnseen: true,
	}
	if got := r.recordedKinds(); len(got) != 0 {
		t.Errorf("recorded kinds looked for while the cluster is unreachable: %v", got)
	}
	var got []string
	for _, gk := range r.applySetKinds() {
		got = append(got, gk.String())
	}
	slices.Sort(got)
	if want := []string{"ConfigMap", "Deployment.apps", "ServiceAccount"}; !slices.Equal(got, want) {
		t.Errorf("applySetKinds = %v, want %v", got, want)
	}
}

// failingMapper fails to map every kind: with a discovery error for those
// in down, as a cluster whose discovery cannot be read; as not served for
// the others.
type failingMapper struct {
	meta.RESTMapper
	down map[schema.GroupKind]error
}

func (m failingMapper) RESTMapping(gk schema.GroupKind, _ ...string) (*meta.RESTMapping, error) {
	if err, ok := m.down[gk]; ok {
		return nil, err
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk}
}

// A kind the ApplySet annotation lists that cannot be mapped because the
// cluster's discovery failed is not a kind the cluster stopped serving: it
// stays listed, and its objects are unknown, so the instance is neither let
// go nor its annotation shrunk until they are known; otherwise an error of
// the moment would leave them behind for good. A kind the cluster does not
// serve leaves the annotation.
func TestApplySetKeepsKindsItCannotMap(t *testing.T) {
	deployments := &kinds.Info{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Resource: "deployments"}
	serviceAccount := schema.GroupKind{Kind: "ServiceAccount"}
	inst := &unstructured.Unstructured{}
	inst.SetAnnotations(map[string]string{v1alpha1.AnnotationApplySetGroupKinds: "Deployment.apps,Gizmo.example.net,ServiceAccount"})
	r := &run{
		s:    &served{graph: &graph.Graph{Nodes: []*graph.Node{{ID: "deploy", Kind: deployments, Template: map[string]any{}}}}},
		inst: inst,
		t: &target{managed: unreachableInformers(t), mapper: failingMapper{down: map[schema.GroupKind]error{
			serviceAccount: errors.New("the server is currently unable to handle the request"),
		}}},
	}
	if got := r.recordedKinds(); len(got) != 0 {
		t.Errorf("recorded kinds watched though none could be mapped: %v", got)
	}
	var got []string
	for _, gk := range r.applySetKinds() {
		got = append(got, gk.String())
	}
	slices.Sort(got)
	if want := []string{"Deployment.apps", "ServiceAccount"}; !slices.Equal(got, want) {
		t.Errorf("applySetKinds = %v, want %v", got, want)
	}
	err := r.recordedKnown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "looking up the instance's ServiceAccount") || !strings.Contains(err.Error(), "unable to handle the request") {
		t.Errorf("recordedKnown = %v, want the ServiceAccount's lookup error", err)
	}
}

// A kind the ApplySet annotation lists that the agent may not list leaves
// its objects unknown: the instance says so with the API server's refusal
// as soon as the list fails, and is queued again for when it succeeds.
func TestApplySetKindThatCannotBeListedSaysWhy(t *testing.T) {
	deployments := &kinds.Info{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Resource: "deployments"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	inst := &unstructured.Unstructured{}
	inst.SetAnnotations(map[string]string{v1alpha1.AnnotationApplySetGroupKinds: "ConfigMap,Deployment.apps"})
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	key := InstanceKey{Namespace: "ns", Name: "a"}
	r := &run{
		s:    &served{graph: &graph.Graph{Nodes: []*graph.Node{{ID: "deploy", Kind: deployments, Template: map[string]any{}}}}},
		inst: inst,
		key:  key,
		t:    &target{managed: refusingInformers(t, func(InstanceKey) {}), mapper: mapper},
	}
	r.recorded = r.recordedKinds()
	if !slices.Equal(r.recorded, []schema.GroupVersionResource{configMaps}) {
		t.Fatalf("recorded kinds %v, want configmaps", r.recorded)
	}
	err := r.recordedKnown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the instance's ApplySet annotation lists configmaps, a kind the graph no longer uses") ||
		!strings.Contains(err.Error(), `cannot list resource "configmaps"`) {
		t.Errorf("recordedKnown = %v, want the API server's refusal to list configmaps", err)
	}
	if !r.t.managed.awaiting[configMaps].Has(key) {
		t.Error("the instance is not queued again for when configmaps can be listed")
	}
}
