package access

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWordsReadAsASentence(t *testing.T) {
	for _, c := range []struct {
		verbs []string
		want  string
	}{
		{nil, ""},
		{[]string{"watch"}, "watch"},
		{[]string{"get", "list"}, "get or list"},
		{[]string{"get", "list", "watch"}, "get, list or watch"},
	} {
		if got := Words(c.verbs, "or"); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.verbs, got, c.want)
		}
	}
}

// A binding's roleRef needs bind on that role alone; what to grant reads
// the same for a kind's verbs and for one named object.
func TestBindNeedsTheRoleByName(t *testing.T) {
	for _, tc := range []struct{ kind, name, want string }{
		{"ClusterRole", "edit", "bind on clusterroles.rbac.authorization.k8s.io named edit (resourceNames: [edit])"},
		{"Role", "reader", "bind on roles.rbac.authorization.k8s.io named reader (resourceNames: [reader])"},
		{"Group", "x", ""},
		{"ClusterRole", "", ""},
	} {
		need, ok := Bind(tc.kind, tc.name)
		if got := need.Grant(); ok != (tc.want != "") || ok && got != tc.want {
			t.Errorf("Bind(%q, %q) = %q, %v; want %q", tc.kind, tc.name, got, ok, tc.want)
		}
	}
	if got := (Need{Resource: schema.GroupResource{Resource: "secrets"}, Verbs: ReadVerbs}).Grant(); got != "get, list and watch on secrets" {
		t.Errorf("Grant of a kind's verbs = %q", got)
	}
}
