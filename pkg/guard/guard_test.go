package guard

import (
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
	for _, p := range Policies(user) {
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
			if !ok || !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("manifest policy %s differs from the agent's:\n got %+v\nwant %+v", got.Name, got.Spec, want)
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
