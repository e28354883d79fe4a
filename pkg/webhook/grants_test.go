package webhook

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// An RGD whose kinds the agent's roles do not grant is admitted with a
// warning per kind, naming the resources of that kind, what is denied and
// what to grant. The fake client stands in for the API server's
// authorizer: the rules it lists are RBAC's grants, and a review of a verb
// they do not cover is allowed if another authorizer grants it (extra).
func TestRGDWarnsOfKindsTheAgentMayNotUse(t *testing.T) {
	rules := []authorizationv1.ResourceRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}, // an externalRef's: watch is missing
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"example.com"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	}
	extra := map[string]bool{"update namespaces": true}
	var asked []string
	var mu sync.Mutex
	client := fake.NewClientset()
	client.PrependReactor("create", "selfsubjectrulesreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		review := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectRulesReview).DeepCopy()
		if review.Spec.Namespace == "" {
			t.Error("rules asked for without a namespace")
		}
		review.Status.ResourceRules = rules
		return true, review, nil
	})
	client.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		review := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		a := review.Spec.ResourceAttributes
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		mu.Lock()
		asked = append(asked, strings.TrimSpace(a.Verb+" "+resource+" "+a.Name))
		mu.Unlock()
		review.Status.Allowed = a.Namespace == "" && extra[a.Verb+" "+resource]
		return true, review, nil
	})
	r, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h := (&Server{RGDs: &RGDValidator{Resolver: r, Reviews: client.AuthorizationV1()}}).Handler()
	// admit reviews an RGD of resources over the kind Gadget of
	// example.com, which must be admitted, and returns its warnings.
	admit := func(resources string) []string {
		t.Helper()
		resp := review(t, h, PathValidateRGD, rgdKind, rgdObject(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gadgets}
spec:
  schema: {apiVersion: v1alpha1, kind: Gadget, group: example.com}
  resources:`+resources))
		if !resp.Allowed {
			t.Fatalf("a valid RGD was denied: %s", resp.Result.Message)
		}
		return resp.Warnings
	}
	// warns checks each warning of admit(resources) begins as want says.
	warns := func(resources string, want ...string) {
		t.Helper()
		got := admit(resources)
		if len(got) != len(want) {
			t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
		}
		for i, w := range want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("warning %d:\n%s\nwant it to begin\n%s", i, got[i], w)
			}
		}
	}
	warns(`
  - id: ns
    template: {apiVersion: v1, kind: Namespace, metadata: {name: "${schema.metadata.name}"}}
  - id: other
    template: {apiVersion: v1, kind: Namespace, metadata: {name: "${schema.metadata.name}-other"}}
  - id: token
    externalRef: {apiVersion: v1, kind: Secret, metadata: {name: token}}
  - id: config
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}", namespace: "${ns.metadata.name}"}}
`,
		`kro-agent may not create, patch or delete namespaces (resources ns and other), so the instances cannot be reconciled until it may: grant it get, list, watch, create, update, patch and delete on namespaces in a ClusterRole labelled kro.run/aggregate-to-agent: "true" (see manifests/agent/rbac.yaml)`,
		`kro-agent may not watch secrets (resource token), so the instances cannot be reconciled until it may: grant it get, list and watch on secrets in a ClusterRole labelled`,
	)
	slices.Sort(asked)
	if want := []string{"create namespaces", "delete namespaces", "patch namespaces", "update namespaces", "watch secrets"}; !slices.Equal(asked, want) {
		t.Errorf("reviews asked for %q; want only what the rules do not cover, %q", asked, want)
	}

	// The instances' kind and its status, when they are not granted.
	rules[3] = authorizationv1.ResourceRule{APIGroups: []string{"example.com"}, Resources: []string{"gadgets"}, Verbs: []string{"get", "list", "watch", "update"}}
	warns(`
  - id: config
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}}
`,
		`kro-agent may not patch gadgets.example.com (the instances), so the instances cannot be reconciled until it may: grant it get, list, watch, update and patch on gadgets.example.com in`,
		`kro-agent may not update or patch gadgets.example.com/status (the instances' status), so the instances cannot be reconciled until it may: grant it update and patch on gadgets.example.com/status in`,
	)

	// A binding of a role named as written: bind on that role, unless
	// granted by name; one named by an expression is not known here.
	rules[3] = authorizationv1.ResourceRule{APIGroups: []string{"example.com"}, Resources: []string{"*"}, Verbs: []string{"*"}}
	rules = append(rules,
		authorizationv1.ResourceRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"*"}},
		authorizationv1.ResourceRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"view"}})
	asked = nil
	warns(`
  - id: editors
    template: {apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: editors}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}, subjects: [{kind: Group, name: a}]}
  - id: viewers
    template: {apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: viewers}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}, subjects: [{kind: Group, name: a}]}
  - id: chosen
    template: {apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: chosen}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "${schema.metadata.name}"}, subjects: [{kind: Group, name: a}]}
`,
		`kro-agent may not bind ClusterRole edit (resource editors), and the API server refuses the binding unless kro-agent holds every permission edit grants, so the instances cannot be reconciled until it may: grant it bind on clusterroles.rbac.authorization.k8s.io named edit (resourceNames: [edit]) in a ClusterRole labelled`,
	)
	if want := []string{"bind clusterroles edit"}; !slices.Equal(asked, want) {
		t.Errorf("reviews asked for %q; want only the bind of edit, %q", asked, want)
	}

	// Many resources of one kind: the first few are named.
	rules = []authorizationv1.ResourceRule{rules[0], rules[3]} // configmaps and example.com
	namespaces := func(n int) string {
		var out strings.Builder
		for i := range n {
			fmt.Fprintf(&out, "\n  - id: ns%d\n    template: {apiVersion: v1, kind: Namespace, metadata: {name: \"${schema.metadata.name}-%d\"}}", i, i)
		}
		return out.String()
	}
	warns(namespaces(4), `kro-agent may not get, list, watch, create, patch or delete namespaces (resources ns0, ns1, ns2 and ns3), so`)
	warns(namespaces(40), `kro-agent may not get, list, watch, create, patch or delete namespaces (resources ns0, ns1, ns2 and 37 more), so`)

	// One slip repeated in many templates does not push the grant
	// warning out of what the API server passes on whole: as many of the
	// hints as fit, in the graph's order, then how many were left out.
	var many strings.Builder
	for i := range 60 {
		fmt.Fprintf(&many, `
  - id: c%d
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-%d"}, data: {n: "1"}}`, i, i)
	}
	got := admit(many.String() + `
  - id: ns
    template: {apiVersion: v1, kind: Namespace, metadata: {name: "${schema.metadata.name}"}}
`)
	if len(got) < 3 {
		t.Fatalf("warnings:\n%s", strings.Join(got, "\n"))
	}
	if total := utf8.RuneCountInString(strings.Join(got, "")); total > warningBudget {
		t.Errorf("%d characters of warnings; the API server cuts them past 4096, and they should fit %d", total, warningBudget)
	}
	if grant := got[len(got)-1]; !strings.HasPrefix(grant, "kro-agent may not get, list, watch, create, patch or delete namespaces (resource ns)") {
		t.Errorf("the last warning is not the grant of namespaces:\n%s", grant)
	}
	shown := len(got) - 2
	for i, w := range got[:shown] {
		if want := fmt.Sprintf("spec.resources[c%d].template.data.false: YAML reads an unquoted n", i); !strings.HasPrefix(w, want) {
			t.Errorf("warning %d:\n%s\nwant it to begin\n%s", i, w, want)
		}
	}
	if want := fmt.Sprintf("%d more warnings like those above are left out, to keep the rest whole: kubectl kro validate -f lists every one", 60-shown); got[shown] != want {
		t.Errorf("warning %d:\n%s\nwant\n%s", shown, got[shown], want)
	}
}
