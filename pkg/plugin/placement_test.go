package plugin

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
