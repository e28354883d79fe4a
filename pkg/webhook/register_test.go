package webhook

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/guard"
)

// The RGD webhook's configuration follows the CA alone, and the guard
// policies neither: a change of the instance kinds writes the instance
// webhook's, not them again, unless they are gone. Nothing is written
// that is found as it was written.
func TestRegistrationWritesOnlyWhatChanged(t *testing.T) {
	client := fake.NewClientset()
	ctx := context.Background()
	r := &Registrar{Client: client, URL: "https://127.0.0.1:9443", AgentUser: "kro-agent"}
	writes := func() (validating, mutating, guards int) {
		for _, a := range client.Actions() {
			if a.GetVerb() != "create" && a.GetVerb() != "update" {
				continue
			}
			switch a.GetResource().Resource {
			case "validatingwebhookconfigurations":
				validating++
			case "mutatingwebhookconfigurations":
				mutating++
			case "validatingadmissionpolicies", "validatingadmissionpolicybindings":
				guards++
			}
		}
		return validating, mutating, guards
	}
	step := func(what string, do func() error, wantValidating, wantMutating, wantGuards int) {
		t.Helper()
		client.ClearActions()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if v, m, g := writes(); v != wantValidating || m != wantMutating || g != wantGuards {
			t.Errorf("%s: %d writes of the RGD webhook, %d of the instance webhook, %d of the guard policies and bindings; want %d, %d and %d",
				what, v, m, g, wantValidating, wantMutating, wantGuards)
		}
	}
	webapps := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	step("the first registration", func() error { return r.SetCABundle(ctx, []byte("ca")) }, 1, 1, 4)
	// No kind was served before, and none is: the instance webhook is as
	// the first registration left it.
	step("the kinds complete", func() error { return r.KindsComplete(ctx) }, 0, 0, 0)
	step("a new kind", func() error { return r.SetInstanceKinds(ctx, []schema.GroupVersionResource{webapps}) }, 0, 1, 0)
	step("a new CA", func() error { return r.SetCABundle(ctx, []byte("ca2")) }, 1, 1, 0)
	vwcs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if err := vwcs.Delete(ctx, ConfigName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	step("a kind gone, the RGD webhook deleted", func() error { return r.SetInstanceKinds(ctx, nil) }, 1, 1, 0)
	if err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, guard.LabelsPolicyName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy deleted is made again; the other, and both bindings,
	// are found as they were written.
	step("a kind back, a guard policy deleted", func() error { return r.SetInstanceKinds(ctx, []schema.GroupVersionResource{webapps}) }, 0, 1, 1)
}

// An agent starting serves again, one RGD at a time, kinds the instance
// webhook has already: until the kinds are complete, that costs no
// request. A kind it does not have is registered at once, and kinds no RGD
// serves any more come off once the kinds are complete.
func TestRestartRegistersOnlyKindsNotRegistered(t *testing.T) {
	client := fake.NewClientset()
	ctx := context.Background()
	kind := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: resource}
	}
	webapps, queues, gone, caches := kind("webapps"), kind("queues"), kind("gone"), kind("caches")
	before := &Registrar{Client: client, URL: "https://127.0.0.1:9443", AgentUser: "kro-agent"}
	if err := before.SetCABundle(ctx, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	if err := before.SetInstanceKinds(ctx, []schema.GroupVersionResource{webapps, queues, gone}); err != nil {
		t.Fatal(err)
	}

	r := &Registrar{Client: client, URL: "https://127.0.0.1:9443", AgentUser: "kro-agent"}
	if err := r.SetCABundle(ctx, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	mutatingWrites := func() (n int) {
		for _, a := range client.Actions() {
			if (a.GetVerb() == "create" || a.GetVerb() == "update") && a.GetResource().Resource == "mutatingwebhookconfigurations" {
				n++
			}
		}
		return n
	}
	registeredNow := func() []schema.GroupVersionResource {
		cur, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ConfigName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return registeredKinds(cur)
	}
	for _, served := range [][]schema.GroupVersionResource{{webapps}, {webapps, queues}} {
		client.ClearActions()
		if err := r.SetInstanceKinds(ctx, served); err != nil {
			t.Fatal(err)
		}
		if n := len(client.Actions()); n != 0 {
			t.Errorf("serving %v again, registered already, cost %d requests: %v", served, n, client.Actions())
		}
	}
	client.ClearActions()
	if err := r.SetInstanceKinds(ctx, []schema.GroupVersionResource{webapps, queues, caches}); err != nil {
		t.Fatal(err)
	}
	if n := mutatingWrites(); n != 1 {
		t.Errorf("a kind not registered yet: %d writes of the instance webhook, want 1", n)
	}
	if got, want := registeredNow(), []schema.GroupVersionResource{caches, gone, queues, webapps}; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("registered before the kinds are complete: %v, want %v", got, want)
	}
	client.ClearActions()
	if err := r.KindsComplete(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := registeredNow(), []schema.GroupVersionResource{caches, queues, webapps}; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("registered once the kinds are complete: %v, want %v", got, want)
	}
}

// TestManifestMatchesAgent keeps manifests/agent/admission.yaml identical
// to what the agent registers when it runs in the cluster as its
// ServiceAccount: the guard policies and their bindings whole, the webhook
// configurations but for what the agent fills in itself (its CA, and the
// instance kinds RGDs serve).
func TestManifestMatchesAgent(t *testing.T) {
	raw, err := os.ReadFile("../../manifests/agent/admission.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:kro-system:kro-agent"
	policies := map[string]*admissionregv1.ValidatingAdmissionPolicy{}
	bindings := map[string]*admissionregv1.ValidatingAdmissionPolicyBinding{}
	for _, p := range guard.Policies(map[string]string{guard.Self: user}) {
		policies[p.Policy.Name], bindings[p.Binding.Name] = p.Policy, p.Binding
	}
	r := &Registrar{Service: &admissionregv1.ServiceReference{Namespace: "kro-system", Name: "kro-agent-webhook"}}
	kinds := []schema.GroupVersionResource{{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}}
	found := map[string]bool{}
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
			found[head.Kind] = true
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
			found[head.Kind] = true
		case "ValidatingAdmissionPolicy":
			got := &admissionregv1.ValidatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict([]byte(doc), got); err != nil {
				t.Fatal(err)
			}
			want, ok := policies[got.Name]
			if !ok || !equality.Semantic.DeepEqual(got.Spec, want.Spec) || !maps.Equal(got.Annotations, want.Annotations) {
				t.Errorf("manifest policy %s differs from the agent's:\n got %+v\nwant %+v", got.Name, got, want)
			}
			found["policy "+got.Name] = true
		case "ValidatingAdmissionPolicyBinding":
			got := &admissionregv1.ValidatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict([]byte(doc), got); err != nil {
				t.Fatal(err)
			}
			want, ok := bindings[got.Name]
			if !ok || !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("manifest binding %s differs: %+v", got.Name, got.Spec)
			}
			found["binding "+got.Name] = true
		}
	}
	if len(found) != 2+len(policies)+len(bindings) {
		t.Errorf("the manifest holds %v; want both webhook configurations, and the %d policies and their bindings", found, len(policies))
	}
}
