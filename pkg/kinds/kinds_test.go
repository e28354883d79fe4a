package kinds

import (
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBuiltin(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gvk        schema.GroupVersionKind
		resource   string
		namespaced bool
		field      string
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments", true, "spec"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false, "metadata"},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false, "rules"},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, "ingresses", true, "spec"},
	} {
		info, err := r.Resolve(tc.gvk)
		if err != nil {
			t.Errorf("%v: %v", tc.gvk, err)
			continue
		}
		if info.Resource != tc.resource || info.Namespaced != tc.namespaced {
			t.Errorf("%v: resource %q namespaced %v, want %q %v", tc.gvk, info.Resource, info.Namespaced, tc.resource, tc.namespaced)
		}
		if _, ok := info.Schema.Properties[tc.field]; !ok {
			t.Errorf("%v: schema has no %q (refs not inlined?)", tc.gvk, tc.field)
		}
	}
	// References are inlined all the way down.
	info, _ := r.Resolve(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	replicas := info.Schema.Properties["spec"].Properties["replicas"]
	if len(replicas.Type) != 1 || replicas.Type[0] != "integer" {
		t.Errorf("Deployment spec.replicas type = %v, want integer", replicas.Type)
	}
	if BuiltinVersion() != "v1.36.3" {
		t.Errorf("snapshot version = %s", BuiltinVersion())
	}
}

// Quantities are an untyped union in the built-in schemas (oneOf string or
// number); marked int-or-string they keep their place in the CEL types, and
// the shared snapshot schema itself stays as it was.
func TestBuiltinQuantitiesAreIntOrString(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := r.Resolve(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	if err != nil {
		t.Fatal(err)
	}
	limits := info.Schema.Properties["spec"].Properties["containers"].Items.Schema.Properties["resources"].Properties["limits"]
	if limits.AdditionalProperties == nil || limits.AdditionalProperties.Schema == nil {
		t.Fatalf("container resources.limits has no value schema: %+v", limits)
	}
	if v, _ := limits.AdditionalProperties.Schema.Extensions.GetBool(intOrStringExtension); !v {
		t.Errorf("a quantity is not marked %s: %+v", intOrStringExtension, limits.AdditionalProperties.Schema.Extensions)
	}
	shared := builtin.snap.Schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]
	if _, marked := shared.Extensions.GetBool(intOrStringExtension); marked {
		t.Errorf("the snapshot's own Quantity schema was modified")
	}
	priority := info.Schema.Properties["spec"].Properties["priority"]
	if len(priority.Extensions) != 0 {
		t.Errorf("a typed field was marked: %+v", priority.Extensions)
	}
	// Told apart from the other unions of scalars, whose text is not
	// a quantity: a port may be a name.
	port := info.Schema.Properties["spec"].Properties["containers"].Items.Schema.Properties["livenessProbe"].Properties["httpGet"].Properties["port"]
	if v, _ := port.Extensions.GetBool(intOrStringExtension); !v {
		t.Fatalf("a probe's port is no union of scalars: %+v", port)
	}
	if !IsQuantity(limits.AdditionalProperties.Schema) || IsQuantity(&port) || IsQuantity(&priority) || IsQuantity(nil) {
		t.Errorf("IsQuantity tells quantities from the rest wrongly")
	}
}

func TestChainNotFound(t *testing.T) {
	r, _ := Builtin()
	_, err := Chain{r}.Resolve(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	if err.Error() != "example.com/v1/Widget: kind not found" {
		t.Errorf("message = %q", err.Error())
	}
}

func TestNotServed(t *testing.T) {
	gizmos := schema.GroupResource{Group: "example.net", Resource: "gizmos"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewGenericServerResponse(http.StatusNotFound, "patch", gizmos, "", "", 0, false), true},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound}}, true},
		{apierrors.NewNotFound(gizmos, "g1"), false},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "team-a"), false},
		{apierrors.NewForbidden(gizmos, "g1", errors.New("no")), false},
		{nil, false},
	} {
		if got := NotServed(tc.err); got != tc.want {
			t.Errorf("NotServed(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
