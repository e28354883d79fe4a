package plugin

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
)

// A deleting instance whose workload cluster cannot be reached is told
// what ends the wait; one whose cluster is only hidden from the user by
// their roles, or that is not placed, is not.
func TestUnreachableDeletionAdvice(t *testing.T) {
	placed := &agentv1.Placement{Cluster: "eu-west-1", Region: "eu-west"}
	unreachable := errors.New("cluster eu-west-1 is not Ready: connection refused")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "agent.kro.run", Resource: "clusters"}, "eu-west-1", errors.New("no"))
	for _, tc := range []struct {
		name    string
		subject *subject
		want    string
	}{
		{"unreachable", &subject{placement: placed, workloadErr: unreachable}, "kubectl delete clusters.agent.kro.run eu-west-1"},
		{"reachable", &subject{placement: placed}, ""},
		{"hidden by the user's roles", &subject{placement: placed, workloadErr: forbidden}, ""},
		{"local", &subject{}, ""},
	} {
		got := unreachableDeletionAdvice(tc.subject)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: advice %q, want one with %q", tc.name, got, tc.want)
		}
	}
}

// An instance no cluster takes is told to register one or to make one of
// its region take it: Ready, and not paused.
func TestUnplacedInstanceAdvice(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "shop", "labels": map[string]any{agentv1.LabelRegion: "eu-west"}},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Placed", "status": "False", "reason": "NoClusterInRegion",
			"message": `no Ready, unpaused Cluster in region "eu-west": eu-west-1 (paused)`,
		}}},
	}}
	d := placementDiagnosis(&subject{instance: inst}, "WebApp/shop")
	if d == nil {
		t.Fatal("no diagnosis")
	}
	if want := `WebApp/shop is not placed on a cluster of region "eu-west"`; d.Cause != want {
		t.Errorf("cause %q, want %q", d.Cause, want)
	}
	if !strings.Contains(d.Advice, "Ready and unpaused (spec.paused: false)") || !strings.Contains(d.Advice, "kubectl get clusters.agent.kro.run -o wide") {
		t.Errorf("advice %q does not say that a paused cluster takes no instance", d.Advice)
	}
}
