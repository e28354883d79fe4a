package plugin

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kro-agent/kro-agent/pkg/agent"
)

func TestTheLeaseReadIsTheAgents(t *testing.T) {
	if agentLeaseName != agent.LeaderElectionID {
		t.Errorf("the plugin reads Lease %s; the agent's replicas compete for %s", agentLeaseName, agent.LeaderElectionID)
	}
}

// Who leads, from the Lease: a holder renewing it, a holder gone (the
// Lease lapsed), or none (released by the last replica to stop).
func TestLeaseVerdict(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	lease := func(holder string, renewedAgo time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewedAgo)},
		}}
	}
	for _, c := range []struct {
		lease   *coordinationv1.Lease
		leading bool
		says    string
	}{
		{lease("kro-agent-7d9f_1", 2*time.Second), true, "kro-agent kro-agent-7d9f_1 leads (its Lease kro-system/kro-agent.kro.run renewed 2s ago)"},
		{lease("kro-agent-7d9f_1", 5*time.Minute), false, "kro-agent kro-agent-7d9f_1 last renewed its Lease kro-system/kro-agent.kro.run 5m ago and no replica has taken it over since it lapsed"},
		{lease("", 3*time.Minute), false, "no kro-agent holds its Lease kro-system/kro-agent.kro.run (last changed 3m ago)"},
	} {
		says, leading := leaseVerdict(c.lease, now)
		if leading != c.leading || !strings.HasPrefix(says, c.says) {
			t.Errorf("verdict %q (leading %v); want it to begin %q (leading %v)", says, leading, c.says, c.leading)
		}
	}
}
