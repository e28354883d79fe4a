package reconcile

import (
	"context"
	"fmt"
	"time"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/clusters"
	"github.com/kro-agent/kro-agent/pkg/placement"
)

// clusterRetry is how soon an instance waiting on its workload cluster
// looks again, beside the cluster changes that bring it back at once.
const clusterRetry = 30 * time.Second

// clusterCheckWait is how soon an instance placed by region looks again
// while the registered clusters are being checked after a start, beside
// the registry's completion, which brings it back at once.
const clusterCheckWait = 5 * time.Second

// clustersChecked tells whether every registered cluster has been checked
// since the agent started (clusters.Registry.Complete).
func (e *Engine) clustersChecked() bool {
	return e.opts.Clusters == nil || e.opts.Clusters.Complete()
}

// placedByRegion reports whether the instance's resources belong in a
// workload cluster: it asks for a region, was placed on one already, or
// waits to be placed again. One that asks for a region only after it was
// reconciled in the local cluster stays there all the same (place).
func (r *run) placedByRegion() bool {
	return r.inst.GetLabels()[agentv1.LabelRegion] != "" || r.placement != nil || r.waitsIn != ""
}

// place chooses (or keeps) the instance's workload cluster and connects
// the run to it. done means the run ends here: not placed, the cluster is
// not Ready, or the graph does not type-check there; the conditions say so.
func (r *run) place(ctx context.Context, status *v1alpha1.InstanceStatus) (res result, done bool, err error) {
	label := r.inst.GetLabels()[agentv1.LabelRegion]
	region, current, stays := label, "", ""
	switch {
	case r.placement != nil:
		// A placed instance stays where its resources are: a changed
		// region label does not move it, and Placed says so. Placed
		// again, its cluster gone, it goes where the label says, or
		// back to its region when the label was removed.
		current, stays = r.placement.Cluster, r.placement.StaysDespite(label)
		if label == "" {
			region = r.placement.Region
		}
	case r.waitsIn != "" && label == "":
		// Waiting to be placed again, with no label to say where: in
		// the region its cluster was in.
		region = r.waitsIn
	}
	if r.placement == nil && r.waitsIn == "" && label != "" {
		local, err := r.staysLocal(ctx)
		if err != nil {
			return result{}, true, err
		}
		if local {
			status.MarkStaysLocal(agentv1.StaysLocal(label))
			return result{}, false, nil
		}
	}
	var candidates []placement.Candidate
	if r.e.opts.Clusters != nil {
		candidates = r.e.opts.Clusters.Candidates()
	}
	d := placement.Place(string(r.inst.GetUID()), region, current, candidates)
	if current != "" && d.Cluster != current {
		r.e.event(r.inst, nil, "Warning", "ClusterGone", fmt.Sprintf(
			"cluster %s is no longer registered; the resources created there are left behind", current))
	}
	if d.Cluster == "" {
		if r.placement != nil || r.waitsIn != "" {
			// Placed before, it waits for a cluster of its region
			// rather than run in the local cluster, label or not.
			r.waitsIn = region
		}
		r.placement = nil
		status.MarkNotPlaced(d.Reason)
		status.ComputeState(false, false)
		return result{}, true, r.writeStatus(ctx, status, nil)
	}
	switch {
	case d.Cluster == current && stays != "":
		status.MarkStaysPlaced(current, r.placement.Region, stays)
	case d.Cluster == current:
		status.MarkPlaced(current, r.placement.Region)
	default:
		status.MarkPlaced(d.Cluster, region)
	}
	if d.Cluster != current {
		// Record the choice before anything is created there, so a
		// restart finds the resources where they are.
		r.placement, r.waitsIn = &agentv1.Placement{Cluster: d.Cluster, Region: region}, ""
		status.ComputeState(false, false)
		if err := r.writeStatus(ctx, status, nil); err != nil {
			return result{}, true, err
		}
	}
	t, msg := r.e.connect(d.Cluster)
	if t == nil {
		status.MarkClusterNotReady(msg + "; its resources there are left as they are")
		status.ComputeState(false, true)
		return result{requeueAfter: clusterRetry}, true, r.writeStatus(ctx, status, nil)
	}
	g, err := t.graphFor(r.s)
	if err != nil {
		status.MarkGraphUnresolved(err)
		status.MarkResourceNotReady("resources cannot be resolved; see GraphResolved")
		status.ComputeState(false, false)
		return result{requeueAfter: clusterRetry}, true, r.writeStatus(ctx, status, nil)
	}
	t.use(r.s.rgdName, g)
	r.t, r.g = t, g
	return result{}, false, nil
}

// staysLocal reports whether an instance not placed yet, whose label asks
// for a region, stays in the local cluster: the agent reconciled it there,
// or its resources are there (a run that applied them may have ended before
// it wrote the status). Placing it now would leave those resources running
// in the local cluster with no instance to manage or delete them.
func (r *run) staysLocal(ctx context.Context) (bool, error) {
	if r.reconciledLocally {
		return true, nil
	}
	if err := r.waitForManagedInformers(ctx); err != nil {
		return false, err
	}
	return len(r.t.managed.members(r.inst.GetUID())) > 0, nil
}

// lookWherePlaced points the run at the workload cluster a placed
// instance's objects are in, before its ApplySet annotation is read and
// written again: the kinds it lists are looked for there, and the kinds of
// the objects found there stay listed. A cluster that cannot be reached now
// leaves them unseen, and the annotation keeps every kind it lists.
func (r *run) lookWherePlaced() {
	if r.placement == nil {
		return
	}
	if t, _ := r.e.connect(r.placement.Cluster); t != nil {
		r.t = t
		return
	}
	r.membersUnseen = true
}

// placedForDelete connects a deleting instance to the cluster its
// resources are in. A Cluster that is no longer registered cannot be
// reached: its resources are left there and the instance goes.
func (r *run) placedForDelete(ctx context.Context, status *v1alpha1.InstanceStatus) (res result, done bool, err error) {
	name := r.placement.Cluster
	if _, ok := r.e.cluster(name); !ok {
		r.e.event(r.inst, nil, "Warning", "ClusterGone", fmt.Sprintf(
			"cluster %s is no longer registered; the resources created there are left behind", name))
		return result{}, true, r.finishDeletion(ctx, status, "its resources in cluster "+name+" are left behind, as the cluster is no longer registered")
	}
	t, msg := r.e.connect(name)
	if t == nil {
		status.MarkDeleting("waiting to delete the resources in cluster " + name + ": " + msg)
		status.ComputeState(true, false)
		return result{requeueAfter: clusterRetry}, true, r.writeStatus(ctx, status, nil)
	}
	r.t = t
	return result{}, false, nil
}

// inCluster names the run's cluster for messages, when it is not local.
func (r *run) inCluster() string {
	if r.t.cluster == "" {
		return ""
	}
	return " in cluster " + r.t.cluster
}

func (e *Engine) cluster(name string) (clusters.Entry, bool) {
	if e.opts.Clusters == nil {
		return clusters.Entry{}, false
	}
	return e.opts.Clusters.Get(name)
}

// connect returns the connection to a Ready registered cluster, or why
// there is none.
func (e *Engine) connect(name string) (*target, string) {
	entry, ok := e.cluster(name)
	switch {
	case !ok:
		return nil, fmt.Sprintf("cluster %s is not registered", name)
	case !entry.Ready || entry.Config == nil:
		return nil, fmt.Sprintf("cluster %s is not Ready: %s", name, entry.Message)
	}
	t, err := e.remoteTarget(entry)
	if err != nil {
		return nil, err.Error()
	}
	return t, ""
}
