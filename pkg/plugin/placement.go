package plugin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/clusters"
)

var (
	clusterGVR = agentv1.GroupVersion.WithResource("clusters")
	secretGVR  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// follow connects the subject to the workload cluster its resources live
// in, as the agent does: through the Cluster's kubeconfig Secret. What
// fails is kept on the subject for the commands to report.
func (c *cluster) follow(ctx context.Context, s *subject) {
	p, ok := agentv1.PlacementOf(s.instance)
	if !ok {
		return
	}
	s.placement = &p
	s.workload, s.workloadErr = c.workloadCluster(ctx, s.placement.Cluster)
}

// workloadCluster connects to a registered Cluster.
func (c *cluster) workloadCluster(ctx context.Context, name string) (*cluster, error) {
	u, err := c.dyn.Resource(clusterGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", name, err)
	}
	var wc agentv1.Cluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &wc); err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", name, err)
	}
	if !wc.Status.IsReady() {
		return nil, fmt.Errorf("cluster %s is not Ready: %s", name, orDash(wc.Status.ReadyMessage()))
	}
	ref := wc.Spec.KubeconfigSecretRef
	secret, err := c.dyn.Resource(secretGVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of cluster %s (Secret %s/%s): %w", name, ref.Namespace, ref.Name, err)
	}
	var sec struct {
		Data map[string][]byte `json:"data"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(secret.Object, &sec); err != nil {
		return nil, err
	}
	cfg, _, err := clusters.Load(sec.Data[ref.KeyOrDefault()])
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig of cluster %s (Secret %s/%s key %s): %w", name, ref.Namespace, ref.Name, ref.KeyOrDefault(), err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	workload, err := connect(cfg, cached, restmapper.NewDeferredDiscoveryRESTMapper(cached), c.resolver, c.namespace, name)
	if err != nil {
		return nil, err
	}
	workload.reads = c.reads
	return workload, nil
}

// members is the cluster the subject's resources live in.
func (c *cluster) members(s *subject) *cluster {
	if s.workload != nil {
		return s.workload
	}
	return c
}

// unreachableDeletionAdvice is what to do about a deleting instance whose
// resources are in a workload cluster that cannot be reached, "" for any
// other. The agent waits for the cluster to delete them in order; if it is
// gone for good, deregistering it is what lets the instance go.
func unreachableDeletionAdvice(s *subject) string {
	if s.placement == nil || s.workloadErr == nil || apierrors.IsForbidden(s.workloadErr) {
		return ""
	}
	name := s.placement.Cluster
	return fmt.Sprintf("kro-agent deletes the resources in cluster %s, in reverse dependency order, once it reaches the cluster again: kubectl describe clusters.agent.kro.run %s shows what it found; if the cluster is gone for good, deleting the Cluster (kubectl delete clusters.agent.kro.run %s) lets the instance go, leaving what is there behind, and places the other instances on it again in their regions",
		name, name, name)
}

// placementDiagnosis explains an instance that waits for placement or for
// its workload cluster, or returns nil. An instance placed before waits in
// the region of its label, or without one in the region it was in.
func placementDiagnosis(s *subject, instRef string) *Diagnosis {
	inst := s.instance
	if placed := findCondition(inst, v1alpha1.ConditionPlaced); placed != nil && placed.Status == metav1.ConditionFalse {
		region := inst.GetLabels()[agentv1.LabelRegion]
		if region == "" {
			p, _ := agentv1.PlacementOf(inst)
			region = p.Region
		}
		return &Diagnosis{
			Cause:   fmt.Sprintf("%s is not placed on a cluster of region %q", instRef, region),
			Details: []string{placed.Message},
			Advice:  "register a Cluster (agent.kro.run/v1alpha1) with spec.region " + region + ", or make one of that region Ready and unpaused (spec.paused: false); kubectl get clusters.agent.kro.run -o wide lists them, whether each is Ready, why not, and whether it is paused",
		}
	}
	if s.placement != nil && apierrors.IsForbidden(s.workloadErr) {
		// The user's roles, not the cluster: kro-agent reaches it, and its
		// conditions say how the resources there are.
		d := asReported(s.mapping.GroupVersionKind.Kind, inst)
		d.Details = append(d.Details, fmt.Sprintf("its resources are in cluster %s, which your roles do not let you look at: %v", s.placement.Cluster, s.workloadErr))
		if !d.Ready {
			d.Advice = fmt.Sprintf("reaching cluster %s takes reading its Cluster (agent.kro.run) and the Secret with its kubeconfig, which are your cluster admins'; kro-agent's conditions above are what it found there", s.placement.Cluster)
		}
		return d
	}
	if s.placement != nil && s.workloadErr != nil {
		d := &Diagnosis{
			Cause:   fmt.Sprintf("%s's resources are in cluster %s, which cannot be reached", instRef, s.placement.Cluster),
			Details: []string{s.workloadErr.Error()},
			Advice:  "kubectl describe clusters.agent.kro.run " + s.placement.Cluster + " shows what the agent found; its resources there are left as they are meanwhile",
		}
		if rr := findCondition(inst, v1alpha1.ConditionResourcesReady); rr != nil && rr.Status != metav1.ConditionTrue {
			d.Details = append(d.Details, conditionLine(*rr))
		}
		return d
	}
	return nil
}
