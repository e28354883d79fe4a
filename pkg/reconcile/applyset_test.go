package reconcile

import (
	"slices"
	"testing"

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
