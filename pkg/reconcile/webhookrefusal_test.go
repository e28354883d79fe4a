package reconcile

import (
	"errors"
	"fmt"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestWebhookRefusalNamesTheServiceItWaitsOn(t *testing.T) {
	call := errors.New(`failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy-webhook.policy-system.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`)
	refused := apierrors.NewInternalError(call) // as the dispatcher returns it, failing closed

	r, ok := asWebhookRefusal(refused, "east")
	if !ok {
		t.Fatalf("%v not taken for a webhook that did not answer", refused)
	}
	want := objectRef{Cluster: "east", GVR: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), Namespace: "policy-system", Name: "policy-webhook"}
	if r.service != want {
		t.Errorf("waits on %+v, want %+v", r.service, want)
	}
	if got, want := r.Error(), refused.Error()+`; it is applied again as soon as the endpoints of Service policy-system/policy-webhook, which serves webhook "validate.policy.example.com", change`; got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
	if !apierrors.IsInternalError(r) || !refusedByServer(r) {
		t.Error("the refusal no longer classifies as the API server's")
	}

	for _, err := range []error{
		// Configured with a URL: no Service to follow.
		apierrors.NewInternalError(errors.New(`failed calling webhook "u.example.com": failed to call webhook: Post "https://webhooks.example.com/v?timeout=10s": EOF`)),
		// Denied: the webhook answered.
		apierrors.NewForbidden(discoveryv1.Resource("endpointslices"), "x", errors.New(`admission webhook "v.example.com" denied the request`)),
		// Not from the API server at all.
		fmt.Errorf("agent-side: %w", call),
		nil,
	} {
		if r, ok := asWebhookRefusal(err, ""); ok {
			t.Errorf("%v taken for a webhook whose Service to follow: %+v", err, r)
		}
	}
}
