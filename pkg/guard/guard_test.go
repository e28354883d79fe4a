package guard

import (
	"maps"
	"os"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// TestManifestMatchesAgent keeps manifests/agent/admission.yaml's
// policies identical to the ones the agent registers for its ServiceAccount.
func TestManifestMatchesAgent(t *testing.T) {
	raw, err := os.ReadFile("../../manifests/agent/admission.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:kro-system:kro-agent"
	policies := map[string]*admissionregv1.ValidatingAdmissionPolicy{}
	bindings := map[string]*admissionregv1.ValidatingAdmissionPolicyBinding{}
	for _, p := range Policies(map[string]string{Self: user}) {
		policies[p.Policy.Name], bindings[p.Binding.Name] = p.Policy, p.Binding
	}
	found := map[string]bool{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var head struct{ Kind string }
		_ = yaml.Unmarshal([]byte(doc), &head)
		switch head.Kind {
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
	if len(found) != len(policies)+len(bindings) {
		t.Errorf("the manifest holds %v; want the %d policies and their bindings", found, len(policies))
	}
}

// Written by the agent as two identities (in its own cluster, and through
// a hub's kubeconfig for it), the policies recognise both, and record who
// wrote which; one writer changing its identity replaces only its entry.
func TestPoliciesRecogniseEveryRecordedIdentity(t *testing.T) {
	identities := map[string]string{Self: "system:serviceaccount:kro-system:kro-agent", ForCluster("home"): "hub"}
	policies := Policies(identities)
	labels, takeover := policies[0].Policy, policies[1].Policy
	if got, want := labels.Spec.MatchConditions[0].Expression, `!(request.userInfo.username in ["hub", "system:serviceaccount:kro-system:kro-agent"])`; got != want {
		t.Errorf("labels policy condition = %s, want %s", got, want)
	}
	if got, want := takeover.Spec.MatchConditions[0].Expression, `request.userInfo.username in ["hub", "system:serviceaccount:kro-system:kro-agent"]`; got != want {
		t.Errorf("no-takeover policy condition = %s, want %s", got, want)
	}
	if got := identitiesOf(labels); !maps.Equal(got, identities) {
		t.Errorf("identities read back = %v, want %v", got, identities)
	}
	// One identity for two writers is named once.
	one := Policies(map[string]string{Self: "a", ForCluster("home"): "a"})
	if got := one[0].Policy.Spec.MatchConditions[0].Expression; got != `request.userInfo.username != "a"` {
		t.Errorf("condition for one identity = %s", got)
	}
	// What another manager wrote records nothing.
	labels.Labels = nil
	if got := identitiesOf(labels); len(got) != 0 {
		t.Errorf("identities of a policy not kro-agent's = %v", got)
	}
}
