package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// subdomainNamedGroups are the built-in API groups whose kinds all take
// names of the DNS subdomain form or a stricter one (a Service's or a
// Namespace's label), so that text outside lowercase letters, digits, '-'
// and '.' is refused in any of them. RBAC's kinds (path segments) and
// groups whose rule is not known here are left out.
var subdomainNamedGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"networking.k8s.io": true, "storage.k8s.io": true, "scheduling.k8s.io": true,
	"discovery.k8s.io": true, "coordination.k8s.io": true, "node.k8s.io": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true,
}

// warnNameText notes a warning for the text of a template's metadata.name,
// outside its expressions, that holds what no name of the kind may: an
// upper-case letter, an underscore, a stray quote or brace after an
// expression (${a + '-' + b}'}). The API server refuses every object so
// named, for every instance; the warning says which characters, and the
// text as it may be written when case or underscores are all that is wrong.
func (c *compiler) warnNameText(n *Node, path *field.Path) {
	if n.Kind == nil || !(subdomainNamedGroups[n.Kind.GVK.Group] || n.Kind.Custom) {
		return
	}
	meta, _ := n.Template["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	segs, err := expr.Parse(name)
	if err != nil {
		return
	}
	var texts []string
	for _, s := range segs {
		if !s.IsExpr && badNameChars(s.Literal) != "" {
			texts = append(texts, s.Literal)
		}
	}
	if len(texts) == 0 {
		return
	}
	quoted := make([]string, len(texts))
	for i, t := range texts {
		quoted[i] = strconv.Quote(t)
	}
	msg := fmt.Sprintf("%s: %s: its text %s holds %s, which no %s's name may: names are lowercase letters, digits, '-' and '.', and the API server refuses every object so named",
		path.Child("metadata", "name"), name, strings.Join(quoted, " and "), badNameChars(strings.Join(texts, "")), n.Kind.GVK.Kind)
	if fixed := strings.ReplaceAll(strings.ToLower(texts[0]), "_", "-"); len(texts) == 1 && badNameChars(fixed) == "" {
		msg += fmt.Sprintf(": write %q", fixed)
	}
	c.warnings = append(c.warnings, msg)
}

// badNameChars lists, quoted and once each, the characters of text that a
// DNS subdomain name cannot hold.
func badNameChars(text string) string {
	var bad []string
	for _, r := range text {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			continue
		}
		if q := strconv.Quote(string(r)); !slices.Contains(bad, q) {
			bad = append(bad, q)
		}
	}
	switch len(bad) {
	case 0:
		return ""
	case 1:
		return bad[0]
	}
	return strings.Join(bad[:len(bad)-1], ", ") + " and " + bad[len(bad)-1]
}
