// Package jsonvalue compares JSON-like values (maps, lists and scalars as
// encoding/json and the unstructured converter make them): whether one
// holds what another sets, as a controller asks of an object in the
// cluster and the object it would write.
package jsonvalue

import (
	"encoding/json"
	"reflect"
)

// Contains reports whether every field set in want holds the same value in
// have. Maps may have more keys in have (defaults, other managers' fields);
// lists must match item by item, each item by the same rule.
func Contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if wv == nil {
					continue
				}
				return false
			}
			if !Contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return equalScalar(have, want)
	}
}

// equalScalar compares JSON scalars, treating the integer kinds alike (the
// rendered object and the decoded one may differ in Go type).
func equalScalar(a, b any) bool {
	if af, ok := number(a); ok {
		bf, ok := number(b)
		return ok && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
