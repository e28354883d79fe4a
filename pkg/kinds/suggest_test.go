package kinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSuggestion(t *testing.T) {
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v2", Kind: "Deployment"}, "Kubernetes serves Deployment as apiVersion apps/v1"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Deployment"}, "Kubernetes serves Deployment as apiVersion apps/v1"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Servce"}, "did you mean Service, apiVersion v1?"},
		{schema.GroupVersionKind{Version: "v1", Kind: "configmap"}, "did you mean ConfigMap, apiVersion v1?"},
		{schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"}, "a built-in kind this cluster does not serve: is its API enabled?"},
		// Far from every built-in kind, or in a group CRDs serve.
		{schema.GroupVersionKind{Version: "v1", Kind: "Gadget"}, ""},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Servce"}, ""},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Deployment"}, ""},
	} {
		if got := Suggestion(tc.gvk); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.gvk, got, tc.want)
		}
	}
}
