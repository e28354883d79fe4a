package reconcile

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/clusters"
	"github.com/kro-agent/kro-agent/pkg/guard"
)

// indexKubeconfigSecret indexes Clusters by the Secret holding their
// kubeconfig ("namespace/name"), so a Secret event finds its Clusters.
const indexKubeconfigSecret = "spec.kubeconfigSecretRef"

// ClusterReconciler checks each registered Cluster (kubeconfig, API
// server, discovery), reports on its conditions and keeps the Registry
// the instance engine places instances by. It checks again every Interval
// (sooner while the cluster is not Ready, nextCheck), whenever the
// kubeconfig Secret changes, and when the agent's requests to the cluster
// find it stopped or back (clusters.Registry.Answered).
type ClusterReconciler struct {
	Client client.Client
	// Secrets reads kubeconfig Secrets from the API server: only their
	// metadata is watched, so no Secret's data is cached.
	Secrets  client.Reader
	Registry *clusters.Registry
	// Interval between checks of a cluster; 1 minute when zero.
	Interval time.Duration
	// Timeout bounds each request of a check; 10 seconds when zero.
	Timeout time.Duration
	// Recorder, when set, records an Event each time a check turns a
	// Cluster's Ready condition.
	Recorder events.EventRecorder

	// guarded records, by Cluster, the kubeconfig digest its guard
	// policies were applied with and what they were left at. Each check
	// reads them, and applies them again only when they are gone or were
	// changed, so that a quiet cluster sees no writes.
	guardedMu sync.Mutex
	guarded   map[string]guarded

	// notReady counts, by Cluster, the checks in a row that found it not
	// Ready, which space its next check (recheckNotReady).
	notReadyMu sync.Mutex
	notReady   map[string]int
}

type guarded struct {
	digest   string
	versions guard.Versions
}

// SetupWithManager registers the reconciler for Clusters and the metadata
// of Secrets.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Interval == 0 {
		r.Interval = time.Minute
	}
	if r.Timeout == 0 {
		r.Timeout = 10 * time.Second
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &agentv1.Cluster{}, indexKubeconfigSecret, func(o client.Object) []string {
		ref := o.(*agentv1.Cluster).Spec.KubeconfigSecretRef
		return []string{ref.Namespace + "/" + ref.Name}
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(reportClusters(r.Registry)); err != nil {
		return err
	}
	// A list read before the cache has started would be empty, and the
	// registry complete at once.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			r.expectClusters(ctx)
		}
		return nil
	})); err != nil {
		return err
	}
	skip := true
	return ctrl.NewControllerManagedBy(mgr).
		Named("cluster").
		WithOptions(controller.Options{SkipNameValidation: &skip}).
		For(&agentv1.Cluster{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSecret), builder.OnlyMetadata).
		WatchesRawSource(source.Func(r.checkWhenConnectionsDisagree)).
		Complete(r)
}

// checkWhenConnectionsDisagree queues a Cluster for a check at once when
// a request of the agent's to it found it otherwise than its last check
// (clusters.Registry.Answered): stopped, or back.
func (r *ClusterReconciler) checkWhenConnectionsDisagree(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	log := ctrl.LoggerFrom(ctx).WithName("clusters")
	r.Registry.OnRecheck(func(name string, answered bool) {
		if answered {
			log.Info("the cluster answers the agent's requests again; checking it now", "cluster", name)
		} else {
			log.Info("the cluster did not answer a request of the agent's; checking it now", "cluster", name)
		}
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	})
	return nil
}

// expectClusters tells the registry which Clusters exist, once they can be
// listed, so that it knows when each has been checked: until then the
// instance engine leaves the instances placed on workload clusters alone.
// Without the Cluster CRD there is none to wait for.
func (r *ClusterReconciler) expectClusters(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("clusters")
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Cap: time.Minute, Steps: math.MaxInt32}
	_ = wait.ExponentialBackoffWithContext(ctx, retry, func(ctx context.Context) (bool, error) {
		var list agentv1.ClusterList
		err := r.Client.List(ctx, &list)
		switch {
		case meta.IsNoMatchError(err):
			r.Registry.Expect(nil)
			return true, nil
		case err != nil:
			log.Error(err, "listing the registered Clusters; instances placed on workload clusters wait until they are listed and checked")
			return false, nil
		}
		names := make([]string, 0, len(list.Items))
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		r.Registry.Expect(names)
		return true, nil
	})
}

func (r *ClusterReconciler) clustersOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	var list agentv1.ClusterList
	if err := r.Client.List(ctx, &list, client.MatchingFields{indexKubeconfigSecret: secret.GetNamespace() + "/" + secret.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: c.Name}})
	}
	return reqs
}

// Reconcile implements reconcile.Reconciler.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &agentv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(ctx, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if cluster.DeletionTimestamp != nil {
		r.forget(ctx, cluster.Name)
		return ctrl.Result{}, nil
	}
	status := cluster.Status.DeepCopy()
	entry := r.check(ctx, cluster, status)
	entry.Ready = status.IsReady()
	if !entry.Ready {
		entry.Message = status.ReadyMessage()
	}
	r.Registry.Set(entry)
	var err error
	if !equality.Semantic.DeepEqual(&cluster.Status, status) {
		before := cluster.DeepCopy()
		cluster.Status = *status
		if err = r.Client.Status().Patch(ctx, cluster, client.MergeFrom(before)); err == nil {
			r.reportReadiness(cluster, &before.Status)
		}
	}
	return ctrl.Result{RequeueAfter: r.nextCheck(cluster.Name, entry.Ready)}, err
}

// reportReadiness records an Event on a Cluster whose Ready condition the
// check written turned: a Warning NotReady with why, or a Normal Ready,
// also after the first check. kubectl describe shows them beside the
// conditions, and a fleet's Events when its clusters went and came back.
func (r *ClusterReconciler) reportReadiness(c *agentv1.Cluster, before *agentv1.ClusterStatus) {
	now := meta.FindStatusCondition(c.Status.Conditions, agentv1.ConditionReady)
	was := meta.FindStatusCondition(before.Conditions, agentv1.ConditionReady)
	if r.Recorder == nil || now == nil || (was != nil && was.Status == now.Status) {
		return
	}
	if now.Status == metav1.ConditionTrue {
		placing := fmt.Sprintf("instances of region %q can be placed here", c.Spec.Region)
		if c.Spec.Paused {
			placing = "it is paused (spec.paused), so no new instance is placed here"
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, agentv1.ConditionReady, "Check",
			"the API server (version %s) answers, and %s", c.Status.ServerVersion, placing)
		return
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "NotReady", "Check",
		"%s; no instance is placed here, and those placed here wait, their resources left as they are", now.Message)
}

// firstRecheck is how soon a Cluster found not Ready is checked again the
// first time.
const firstRecheck = 5 * time.Second

// nextCheck is how soon a Cluster is checked again: after Interval while it
// is Ready; sooner while it is not, 5 s after the first check that found it
// so and twice as long after each next one, up to Interval. A Cluster
// registered before its API server is up, or one the agent found stopped
// as it started, has no connection of the agent's to tell it is back
// (clusters.Registry.Answered): it is Ready again within seconds of coming
// up all the same, while one that stays down costs a check every Interval.
func (r *ClusterReconciler) nextCheck(name string, ready bool) time.Duration {
	r.notReadyMu.Lock()
	defer r.notReadyMu.Unlock()
	if ready {
		delete(r.notReady, name)
		return r.Interval
	}
	if r.notReady == nil {
		r.notReady = map[string]int{}
	}
	r.notReady[name]++
	return recheckNotReady(r.notReady[name], r.Interval)
}

// recheckNotReady is how soon a Cluster is checked again after checks found
// it not Ready that many times in a row.
func recheckNotReady(times int, interval time.Duration) time.Duration {
	after := firstRecheck
	for i := 1; i < times && after < interval; i++ {
		after *= 2
	}
	return min(after, interval)
}

// check connects to the cluster and records each step on status; the
// entry it returns has the connection, the caller its readiness.
func (r *ClusterReconciler) check(ctx context.Context, c *agentv1.Cluster, status *agentv1.ClusterStatus) clusters.Entry {
	entry := clusters.Entry{Name: c.Name, Region: c.Spec.Region, Paused: c.Spec.Paused}
	health := status.Check(c.Generation)
	ref := c.Spec.KubeconfigSecretRef
	secret := &corev1.Secret{}
	err := r.Secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, secret)
	if err != nil {
		reason := agentv1.ReasonSecretNotFound
		if !apierrors.IsNotFound(err) {
			reason = agentv1.ReasonInvalidKubeconfig
		}
		health.KubeconfigFailed(reason, fmt.Sprintf("reading Secret %s/%s (spec.kubeconfigSecretRef): %v", ref.Namespace, ref.Name, err))
		return entry
	}
	data, ok := secret.Data[ref.KeyOrDefault()]
	if !ok {
		health.KubeconfigFailed(agentv1.ReasonInvalidKubeconfig, fmt.Sprintf("Secret %s/%s has no key %q (spec.kubeconfigSecretRef.key)", ref.Namespace, ref.Name, ref.KeyOrDefault()))
		return entry
	}
	cfg, digest, err := clusters.Load(data)
	if err != nil {
		health.KubeconfigFailed(agentv1.ReasonInvalidKubeconfig, fmt.Sprintf("Secret %s/%s key %q: %v", ref.Namespace, ref.Name, ref.KeyOrDefault(), err))
		return entry
	}
	health.KubeconfigLoaded(cfg.Host)
	cfg.UserAgent = "kro-agent"
	entry.Config, entry.ConfigDigest = cfg, digest
	h := clusters.Probe(cfg, r.Timeout)
	if h.Unreachable != nil {
		health.Unreachable(h.Unreachable.Error())
		return entry
	}
	health.Reachable(h.Version)
	entry.Reachable = true
	if h.Discovery != nil {
		health.DiscoveryFailed(h.Discovery.Error())
		return entry
	}
	health.Discovered(h.Kinds)
	if err := r.guard(ctx, c.Name, cfg, digest); err != nil {
		health.GuardFailed(err.Error())
		return entry
	}
	health.Guarded()
	return entry
}

// forget drops a Cluster that is gone: no longer a placement candidate,
// and its guard policies are applied again if it comes back. The identity
// it recorded on the guard policies there is taken off while the agent
// can still reach the cluster, so that it no longer may change what the
// agent manages there; once, as nothing is left to retry from.
func (r *ClusterReconciler) forget(ctx context.Context, name string) {
	entry, registered := r.Registry.Get(name)
	r.Registry.Delete(name)
	r.guardedMu.Lock()
	_, guarded := r.guarded[name]
	delete(r.guarded, name)
	r.guardedMu.Unlock()
	r.notReadyMu.Lock()
	delete(r.notReady, name)
	r.notReadyMu.Unlock()
	if !registered || !guarded || entry.Config == nil {
		return
	}
	client, err := r.clientFor(entry.Config)
	if err == nil {
		err = guard.Retract(ctx, client, guard.ForCluster(name))
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "taking the deleted Cluster's identity off the guard policies in its cluster; they go on recognising it until they are deleted", "cluster", name)
	}
}

// clientFor is a client of the workload cluster cfg connects to, each of
// its requests bounded by the check's timeout.
func (r *ClusterReconciler) clientFor(cfg *rest.Config) (kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = r.Timeout
	return kubernetes.NewForConfig(cfg)
}

// guard applies kro-agent's guard policies in the cluster, as the identity
// the kubeconfig gives it there, unless they were applied over the same
// kubeconfig before and are still as they were left.
func (r *ClusterReconciler) guard(ctx context.Context, name string, cfg *rest.Config, digest string) error {
	client, err := r.clientFor(cfg)
	if err != nil {
		return err
	}
	r.guardedMu.Lock()
	last, ok := r.guarded[name]
	r.guardedMu.Unlock()
	if ok && last.digest == digest {
		intact, err := guard.Intact(ctx, client, last.versions)
		if intact || err != nil {
			return err
		}
	}
	user, err := guard.Identity(ctx, client)
	if err != nil {
		return err
	}
	versions, err := guard.Ensure(ctx, client, guard.ForCluster(name), user)
	if err != nil {
		return fmt.Errorf("%w; kro-agent places nothing in a cluster where it cannot protect what it manages", err)
	}
	r.guardedMu.Lock()
	if r.guarded == nil {
		r.guarded = map[string]guarded{}
	}
	r.guarded[name] = guarded{digest: digest, versions: versions}
	r.guardedMu.Unlock()
	return nil
}
