package graph

import (
	"maps"
	"slices"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// walk calls visit for v, at p, and, unless visit returns false, for each
// value of a map (in the order of its keys) and item of a list below it,
// depth first: the order in which a template's checks report what they
// find.
func walk(v any, p expr.Path, visit func(v any, p expr.Path) bool) {
	if !visit(v, p) {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walk(x[k], p.Child(k), visit)
		}
	case []any:
		for i, item := range x {
			walk(item, p.Index(i), visit)
		}
	}
}

// lastKey is the last field name of p, "" when p is empty or ends with an
// index.
func lastKey(p expr.Path) string {
	if len(p) == 0 || p[len(p)-1].IsIndex {
		return ""
	}
	return p[len(p)-1].Key
}

// parentKey is the field name before p's last step, "" when there is none.
func parentKey(p expr.Path) string {
	if len(p) < 2 {
		return ""
	}
	return lastKey(p[:len(p)-1])
}
