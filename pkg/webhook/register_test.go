package webhook

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// The RGD webhook's configuration follows the CA alone: a change of the
// instance kinds writes the instance webhook's, not it again, unless it
// is gone.
func TestRGDWebhookIsWrittenOnlyWhenItsCAChangesOrItIsGone(t *testing.T) {
	client := fake.NewClientset()
	ctx := context.Background()
	r := &Registrar{Client: client, URL: "https://127.0.0.1:9443", AgentUser: "kro-agent"}
	writes := func() (validating, mutating int) {
		for _, a := range client.Actions() {
			if a.GetVerb() != "create" && a.GetVerb() != "update" {
				continue
			}
			switch a.GetResource().Resource {
			case "validatingwebhookconfigurations":
				validating++
			case "mutatingwebhookconfigurations":
				mutating++
			}
		}
		return validating, mutating
	}
	step := func(what string, do func() error, wantValidating, wantMutating int) {
		t.Helper()
		client.ClearActions()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if v, m := writes(); v != wantValidating || m != wantMutating {
			t.Errorf("%s: %d writes of the RGD webhook, %d of the instance webhook; want %d and %d", what, v, m, wantValidating, wantMutating)
		}
	}
	webapps := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	step("the first registration", func() error { return r.SetCABundle(ctx, []byte("ca")) }, 1, 1)
	step("a new kind", func() error { return r.SetInstanceKinds(ctx, []schema.GroupVersionResource{webapps}) }, 0, 1)
	step("a new CA", func() error { return r.SetCABundle(ctx, []byte("ca2")) }, 1, 1)
	vwcs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if err := vwcs.Delete(ctx, ConfigName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	step("a kind gone, the RGD webhook deleted", func() error { return r.SetInstanceKinds(ctx, nil) }, 1, 1)
}
