package plugin

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The Lease kro-agent's replicas compete for (agent.LeaderElectionID), in
// the namespace manifests/agent deploys them to.
const (
	agentLeaseNamespace = "kro-system"
	agentLeaseName      = "kro-agent.kro.run"
)

// agentLeader says, from kro-agent's Lease, whether a kro-agent leads and
// so reconciles (leading): what to look at when something is not
// processed. It is "" when the Lease cannot be read: an agent run without
// leader election (as the demo runs it), or a user not allowed to read it.
func (c *cluster) agentLeader(ctx context.Context) (detail string, leading bool) {
	u, err := c.dyn.Resource(coordinationv1.SchemeGroupVersion.WithResource("leases")).Namespace(agentLeaseNamespace).
		Get(ctx, agentLeaseName, metav1.GetOptions{})
	if err != nil {
		return "", true
	}
	lease := &coordinationv1.Lease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lease); err != nil {
		return "", true
	}
	return leaseVerdict(lease, time.Now())
}

// leaseVerdict reads a leader-election Lease at now: who leads, or since
// when no one has.
func leaseVerdict(lease *coordinationv1.Lease, now time.Time) (string, bool) {
	name := "Lease " + agentLeaseNamespace + "/" + agentLeaseName
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	ago := func(t *metav1.MicroTime) string {
		if t == nil {
			return "at an unknown time"
		}
		return duration.HumanDuration(now.Sub(t.Time)) + " ago"
	}
	if holder == "" {
		return fmt.Sprintf("no kro-agent holds its %s (last changed %s): none is running, so nothing is reconciled", name, ago(lease.Spec.RenewTime)), false
	}
	if lease.Spec.RenewTime != nil && lease.Spec.LeaseDurationSeconds != nil {
		lapse := lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
		if now.After(lapse) {
			return fmt.Sprintf("kro-agent %s last renewed its %s %s and no replica has taken it over since it lapsed: none is running, so nothing is reconciled", holder, name, ago(lease.Spec.RenewTime)), false
		}
	}
	return fmt.Sprintf("kro-agent %s leads (its %s renewed %s)", holder, name, ago(lease.Spec.RenewTime)), true
}
