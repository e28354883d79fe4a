package graph

// Rules the API server enforces on role bindings beyond their published
// schema: a template breaking one compiles and is refused at every apply,
// so it is warned of.

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rbacGroup is the group of roles, which every roleRef names and every
// subject but a ServiceAccount is of.
const rbacGroup = "rbac.authorization.k8s.io"

// warnRoleBindings notes a warning for what the API server refuses in a
// RoleBinding or ClusterRoleBinding, written without expressions, for
// every binding so written: a roleRef of another group than roles', or of
// a kind the binding cannot bind (a ClusterRoleBinding binds ClusterRoles
// alone); a subject of a kind that is none of ServiceAccount, User and
// Group; a ServiceAccount subject with an apiGroup (it has none), or,
// bound cluster-wide, without its namespace; a User or Group of another
// apiGroup than roles' (left empty, it is defaulted to theirs).
func (c *compiler) warnRoleBindings(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != rbacGroup {
		return
	}
	kind := n.Kind.GVK.Kind
	var bindable []string
	switch kind {
	case "RoleBinding":
		bindable = []string{"Role", "ClusterRole"}
	case "ClusterRoleBinding":
		bindable = []string{"ClusterRole"}
	default:
		return
	}
	refuse := func(at *field.Path, what, rule string) {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %s, and the API server refuses every %s so written: %s", at, what, kind, rule))
	}
	roleRef, _ := n.Template["roleRef"].(map[string]any)
	// Left empty, a roleRef's apiGroup and a User's or Group's are
	// defaulted to roles' group.
	if group, ok := literalText(roleRef["apiGroup"]); ok && group != "" && group != rbacGroup {
		refuse(path.Child("roleRef", "apiGroup"), fmt.Sprintf("%q is no group of roles", group), "write "+rbacGroup)
	}
	if ref, ok := literalText(roleRef["kind"]); ok && !slices.Contains(bindable, ref) {
		refuse(path.Child("roleRef", "kind"), ref, fmt.Sprintf("a %s binds a %s", kind, strings.Join(bindable, " or a ")))
	}
	subjects, _ := n.Template["subjects"].([]any)
	for i, item := range subjects {
		subject, _ := item.(map[string]any)
		at := path.Child("subjects").Index(i)
		subjectKind, ok := literalText(subject["kind"])
		if !ok {
			continue
		}
		group, grouped := literalText(subject["apiGroup"])
		switch subjectKind {
		case "ServiceAccount":
			if grouped && group != "" {
				refuse(at.Child("apiGroup"), fmt.Sprintf("%q given to a ServiceAccount", group), "a ServiceAccount has no apiGroup: leave it out")
			}
			if _, given := subject["namespace"]; !given && kind == "ClusterRoleBinding" {
				refuse(at.Child("namespace"), "left out", "a ServiceAccount bound cluster-wide is named with its namespace")
			}
		case "User", "Group":
			if grouped && group != "" && group != rbacGroup {
				refuse(at.Child("apiGroup"), fmt.Sprintf("%q given to a %s", group, subjectKind), fmt.Sprintf("a %s is of apiGroup %s", subjectKind, rbacGroup))
			}
		default:
			refuse(at.Child("kind"), fmt.Sprintf("%q is no kind of subject", subjectKind), "a subject is a ServiceAccount, a User or a Group")
		}
	}
}
