package kinds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
	best, bestDistance := schema.GroupVersionKind{}, 3 // at most two edits away
	for _, b := range all {
		if d := editDistance(strings.ToLower(b.Kind), strings.ToLower(gvk.Kind)); d < bestDistance {
			best, bestDistance = b, d
		}
	}
	if bestDistance < 3 {
		return fmt.Sprintf("did you mean %s, apiVersion %s?", best.Kind, best.GroupVersion())
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
