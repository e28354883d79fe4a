package kinds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// builtinKinds are the group, version and kind of every built-in kind in
// the snapshot, without their schemas: enough to say what a template
// meant when it names a built-in kind wrongly.
var builtinKinds = sync.OnceValue(func() []schema.GroupVersionKind {
	var s struct {
		Resources map[string][]SnapshotResource `json:"resources"`
	}
	raw, err := gunzip(builtinSnapshot)
	if err != nil || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []schema.GroupVersionKind
	for gv, resources := range s.Resources {
		parsed, err := schema.ParseGroupVersion(gv)
		if err != nil {
			continue
		}
		for _, r := range resources {
			out = append(out, parsed.WithKind(r.Kind))
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(gvkString(a), gvkString(b)) })
	return out
})

// Suggestion says which built-in kind a kind of a built-in group that no
// one serves was probably meant to be: the same kind at the version or
// group Kubernetes serves it at, or a built-in kind spelt nearly alike. It
// is "" for other groups, whose kinds come from CRDs, and when nothing is
// close.
func Suggestion(gvk schema.GroupVersionKind) string {
	all := builtinKinds()
	if !slices.ContainsFunc(all, func(b schema.GroupVersionKind) bool { return b.Group == gvk.Group }) {
		return ""
	}
	if slices.Contains(all, gvk) {
		// An API the cluster has not enabled, or one older than the
		// snapshot's.
		return "a built-in kind this cluster does not serve: is its API enabled?"
	}
	var sameKind []string
	for _, b := range all {
		if b.Kind == gvk.Kind {
			sameKind = append(sameKind, "apiVersion "+b.GroupVersion().String())
		}
	}
	if len(sameKind) > 0 {
		return fmt.Sprintf("Kubernetes serves %s as %s", gvk.Kind, strings.Join(sameKind, " or "))
	}
	names := make([]string, len(all))
	for i, b := range all {
		names[i] = b.Kind
	}
	if kind, ok := spelling.Closest(gvk.Kind, names); ok {
		best := all[slices.Index(names, kind)]
		return fmt.Sprintf("did you mean %s, apiVersion %s?", best.Kind, best.GroupVersion())
	}
	return ""
}
