package plugin

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWaitsForLoadBalancer(t *testing.T) {
	service := func(typ string, ingress []any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"type": typ}}}
		if ingress != nil {
			u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": ingress}}
		}
		return u
	}
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want bool
	}{
		{"no address yet", service("LoadBalancer", nil), true},
		{"an empty list", service("LoadBalancer", []any{}), true},
		{"an address", service("LoadBalancer", []any{map[string]any{"ip": "192.0.2.1"}}), false},
		{"ClusterIP", service("ClusterIP", nil), false},
		{"another kind", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}, false},
		{"nothing", nil, false},
	} {
		if got := waitsForLoadBalancer(tc.u); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
