package plugin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// loadBalancerAdvice is what to do about a Service of type LoadBalancer
// that waits for an address nothing in the cluster gives.
const loadBalancerAdvice = "a load balancer controller gives a Service of type LoadBalancer its address: the cloud provider's, where there is one; a cluster without one (kind, kwok, bare metal) needs one installed (MetalLB, cloud-provider-kind), or the Service made of type NodePort and a readyWhen that does not wait for an address"

// waitsForLoadBalancer tells whether u is a Service of type LoadBalancer
// that has no address yet.
func waitsForLoadBalancer(u *unstructured.Unstructured) bool {
	if u == nil || u.GetAPIVersion() != "v1" || u.GetKind() != "Service" {
		return false
	}
	typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
	ingress, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
	return typ == string(corev1.ServiceTypeLoadBalancer) && len(ingress) == 0
}

// explainLoadBalancer adds to d, when r is a Service of type LoadBalancer
// without an address that no controller has said anything about (no
// Event), that nothing seems to give it one, and what to do.
func (c *cluster) explainLoadBalancer(ctx context.Context, d *Diagnosis, r *Row) {
	if !waitsForLoadBalancer(r.object) || len(c.eventsAbout(ctx, r.Kind, r.Namespace, r.Name, r.object.GetUID())) > 0 {
		return
	}
	detail := fmt.Sprintf("Service %s is of type LoadBalancer and has no address (status.loadBalancer.ingress), and no controller has recorded an event about it", r.Name)
	if class, _, _ := unstructured.NestedString(r.object.Object, "spec", "loadBalancerClass"); class != "" {
		detail += fmt.Sprintf(" (its loadBalancerClass, %s, names the controller meant)", class)
	}
	d.Details = append(d.Details, detail)
	d.Advice = loadBalancerAdvice
}
