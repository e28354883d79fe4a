package ownership

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var inst = Instance{
	GVK:  schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"},
	Name: "demo", Namespace: "default", UID: "uid-1",
	Labels: map[string]string{"team": "a", "kro.run/owned": "false", "app.kubernetes.io/managed-by": "me"},
}

func TestApplySetID(t *testing.T) {
	// printf demo.default.WebApp.kro.run | sha256sum, as base64url without padding.
	const want = "applyset-U3nBz-wI8LCAAPv9W1lKE2gDbOQJozhnzDnFuAazn9Y-v1"
	if got := ApplySetID(inst); got != want {
		t.Errorf("ApplySetID = %s, want %s", got, want)
	}
	if len(ApplySetID(inst)) > 63 {
		t.Error("the id must fit a label value")
	}
}

func TestManagedLabels(t *testing.T) {
	got := ManagedLabels(RGD{Name: "webapp", UID: "rgd-1"}, inst, Item{NodeID: "workers", Index: 2, Size: 3})
	want := map[string]string{
		"team":                                   "a",
		"kro.run/owned":                          "true",
		"kro.run/kro-version":                    "v0.1.0-dev",
		"kro.run/resource-graph-definition-id":   "rgd-1",
		"kro.run/resource-graph-definition-name": "webapp",
		"app.kubernetes.io/managed-by":           "kro",
		"applyset.kubernetes.io/part-of":         ApplySetID(inst),
		"kro.run/instance-id":                    "uid-1",
		"kro.run/instance-name":                  "demo",
		"kro.run/instance-namespace":             "default",
		"kro.run/node-id":                        "workers",
		"kro.run/collection-index":               "2",
		"kro.run/collection-size":                "3",
	}
	if len(got) != len(want) {
		t.Errorf("got %d labels, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := ManagedLabels(RGD{}, inst, Item{NodeID: "x"})["kro.run/collection-index"]; ok {
		t.Error("a single resource must not carry collection labels")
	}
}

func TestApplySetAnnotations(t *testing.T) {
	got := ApplySetAnnotations(inst, []schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}}, []string{"default", "other", "", "other"})
	if got["applyset.kubernetes.io/contains-group-kinds"] != "ConfigMap,Deployment.apps" {
		t.Errorf("group kinds = %q", got["applyset.kubernetes.io/contains-group-kinds"])
	}
	if got["applyset.kubernetes.io/additional-namespaces"] != "other" {
		t.Errorf("namespaces = %q", got["applyset.kubernetes.io/additional-namespaces"])
	}
	if got["applyset.kubernetes.io/tooling"] != "kro/v0.1.0-dev" {
		t.Errorf("tooling = %q", got["applyset.kubernetes.io/tooling"])
	}
}
