package reconcile

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Runs refused until something the agent watches changes wait a second
// before their first retry; the rest, 5 ms.
func TestRefusedUntilChange(t *testing.T) {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	missing := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "later")
	noEndpoints := apierrors.NewInternalError(errors.New(`failed calling webhook "v.example.com": failed to call webhook: Post "https://hook.hooks.svc:443/v?timeout=10s": no endpoints available for service "hook"`))
	webhook, ok := asWebhookRefusal(noEndpoints, "")
	if !ok {
		t.Fatal("the webhook refusal is not taken for one")
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"an invalid object", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), true},
		{"a policy's denial, wrapped", fmt.Errorf("applying ConfigMap x (resource cm): %w", apierrors.NewForbidden(configMaps, "x", errors.New("denied"))), true},
		{"a namespace that does not exist", fmt.Errorf("applying: %w", &namespaceUnavailable{namespace: "later", err: missing}), true},
		{"a webhook's Service without endpoints", webhook, true},
		{"a name another owner's object holds", fmt.Errorf("applying ConfigMap x (resource cm): %w", &heldByOtherError{"ConfigMap default/x already exists"}), true},
		{"the same, not known for one", noEndpoints, false},
		{"a conflict", apierrors.NewConflict(configMaps, "x", errors.New("modified")), false},
		{"a kind not served yet", apierrors.NewNotFound(configMaps, "x"), false},
		{"no answer", errors.New("connection refused"), false},
	} {
		if got := refusedUntilChange(tc.err); got != tc.want {
			t.Errorf("%s: refusedUntilChange(%v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}
