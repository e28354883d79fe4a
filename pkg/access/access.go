// Package access says what kro-agent needs to be granted on the kinds an
// RGD uses, and asks the API server's authorizer whether it is
// (SelfSubjectRulesReview, SelfSubjectAccessReview), so that an RGD whose
// kinds its roles do not grant is warned of when it is applied, not when
// an instance's write is first refused.
package access

import (
	"context"
	"fmt"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// What kro-agent does with the objects of a kind, by the part the kind
// plays in a graph.
var (
	// ManagedVerbs: a template's kind, whose objects it follows, applies,
	// prunes and deletes.
	ManagedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	// ReadVerbs: an externalRef's kind, whose objects it reads and
	// follows.
	ReadVerbs = []string{"get", "list", "watch"}
	// InstanceVerbs: the instances' kind, whose objects (and their status
	// subresource) it follows and patches.
	InstanceVerbs = []string{"get", "list", "watch", "update", "patch"}
	// StatusVerbs: the status subresource of the instances' kind.
	StatusVerbs = []string{"update", "patch"}
)

// GrantedIn is where the agent's grants of the kinds RGDs use go in its own
// cluster: a role its aggregated role holds.
const GrantedIn = `in a ClusterRole labelled kro.run/aggregate-to-agent: "true" (see manifests/agent/rbac.yaml)`

// Words writes words as a sentence lists them: "get, list and watch".
func Words(words []string, conjunction string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conjunction + " " + words[len(words)-1]
}

// Need is access to ask for: verbs on a resource (a subresource of it,
// when set; the object of that name alone, when Name is set), in every
// namespace.
type Need struct {
	Resource    schema.GroupResource
	Subresource string
	Name        string
	Verbs       []string
}

func (n Need) String() string {
	if n.Subresource == "" {
		return n.Resource.String()
	}
	return n.Resource.String() + "/" + n.Subresource
}

// Grant says what to grant for the need, as the messages asking for it word
// it: "get, list and watch on secrets", "bind on
// clusterroles.rbac.authorization.k8s.io named edit (resourceNames: [edit])".
func (n Need) Grant() string {
	grant := Words(n.Verbs, "and") + " on " + n.String()
	if n.Name != "" {
		grant += fmt.Sprintf(" named %s (resourceNames: [%s])", n.Name, n.Name)
	}
	return grant
}

// Bind is what its writer needs to create a binding of the role its roleRef
// names (kind ClusterRole or Role, and name), unless the writer holds all the
// role grants itself: bind on that role alone. It is false for another kind
// or no name.
func Bind(roleKind, roleName string) (Need, bool) {
	var resource string
	switch roleKind {
	case "ClusterRole":
		resource = "clusterroles"
	case "Role":
		resource = "roles"
	default:
		return Need{}, false
	}
	if roleName == "" {
		return Need{}, false
	}
	return Need{Resource: schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}, Name: roleName, Verbs: []string{"bind"}}, true
}

// resource is the need's resource as RBAC rules name it: with its
// subresource, without its group.
func (n Need) resource() string {
	if n.Subresource == "" {
		return n.Resource.Resource
	}
	return n.Resource.Resource + "/" + n.Subresource
}

// clusterWide is the namespace whose rules are asked for: one that does
// not exist, so that only what is granted in every namespace (by
// ClusterRoleBindings) is listed, not what a RoleBinding grants in one.
const clusterWide = "kro-agent-cluster-wide-rules"

// Denied returns, for each need, the verbs the authorizer does not allow
// the client's own identity in every namespace, in need order; a need
// allowed whole has none. The rules the identity is granted are asked for
// once (SelfSubjectRulesReview) and what they cover is allowed; what they
// do not is asked of the authorizer verb by verb (SelfSubjectAccessReview,
// all at once), since rules another authorizer than RBAC grants are not
// listed. An RGD's admission waits for the answers, so the common case,
// everything granted, costs one request.
func Denied(ctx context.Context, authz authorizationv1client.AuthorizationV1Interface, needs []Need) ([][]string, error) {
	rules, err := authz.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: clusterWide},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking which rules kro-agent is granted: %w", err)
	}
	var granted []rbacv1.PolicyRule
	for _, r := range rules.Status.ResourceRules {
		granted = append(granted, rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	asked := make([][]string, len(needs))
	for i, n := range needs {
		need := rbacv1.PolicyRule{APIGroups: []string{n.Resource.Group}, Resources: []string{n.resource()}, Verbs: n.Verbs}
		if n.Name != "" {
			need.ResourceNames = []string{n.Name}
		}
		_, uncovered := validation.Covers(granted, []rbacv1.PolicyRule{need})
		for _, r := range uncovered {
			asked[i] = append(asked[i], r.Verbs...)
		}
	}
	allowed := make([][]bool, len(needs))
	errs := make([]error, len(needs))
	var wg sync.WaitGroup
	for i, n := range needs {
		allowed[i] = make([]bool, len(asked[i]))
		for j, verb := range asked[i] {
			wg.Go(func() {
				answer, err := authz.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Group: n.Resource.Group, Resource: n.Resource.Resource, Subresource: n.Subresource, Name: n.Name, Verb: verb,
					},
				}}, metav1.CreateOptions{})
				if err != nil {
					errs[i] = fmt.Errorf("asking whether kro-agent may %s %s: %w", verb, n, err)
					return
				}
				allowed[i][j] = answer.Status.Allowed
			})
		}
	}
	wg.Wait()
	denied := make([][]string, len(needs))
	for i := range needs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		for j, verb := range asked[i] {
			if !allowed[i][j] {
				denied[i] = append(denied[i], verb)
			}
		}
	}
	return denied, nil
}
