package webhook

import (
	"context"
	"os"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
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

// TestManifestMatchesAgent keeps manifests/agent/admission.yaml's
// webhook configurations identical to the ones the agent registers when it
// runs in the cluster, but for what it fills in itself: its CA, and the
// instance kinds RGDs serve.
func TestManifestMatchesAgent(t *testing.T) {
	raw, err := os.ReadFile("../../manifests/agent/admission.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &Registrar{Service: &admissionregv1.ServiceReference{Namespace: "kro-system", Name: "kro-agent-webhook"}}
	kinds := []schema.GroupVersionResource{{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}}
	found := 0
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var head struct{ Kind string }
		_ = yaml.Unmarshal([]byte(doc), &head)
		switch head.Kind {
		case "ValidatingWebhookConfiguration":
			got := &admissionregv1.ValidatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict([]byte(doc), got); err != nil {
				t.Fatal(err)
			}
			if want := r.validatingConfig(nil); !equality.Semantic.DeepEqual(got.Webhooks, want.Webhooks) {
				t.Errorf("manifest %s differs from the agent's:\n got %+v\nwant %+v", head.Kind, got.Webhooks, want.Webhooks)
			}
			found++
		case "MutatingWebhookConfiguration":
			got := &admissionregv1.MutatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict([]byte(doc), got); err != nil {
				t.Fatal(err)
			}
			// The manifest lists no kinds: the agent adds them.
			want := r.mutatingConfig(nil, instanceRules(kinds))
			for i := range got.Webhooks {
				got.Webhooks[i].Rules = instanceRules(kinds)
			}
			if !equality.Semantic.DeepEqual(got.Webhooks, want.Webhooks) {
				t.Errorf("manifest %s differs from the agent's:\n got %+v\nwant %+v", head.Kind, got.Webhooks, want.Webhooks)
			}
			found++
		}
	}
	if found != 2 {
		t.Errorf("the manifest holds %d webhook configurations; want the validating and the mutating one", found)
	}
}
