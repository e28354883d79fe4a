package jsonvalue

import (
	"encoding/json"
	"testing"
)

// What an object in the cluster holds of the object a controller would
// write: more keys are the API server's defaults and other writers'
// fields, a list is held item by item, and a number whichever its Go type.
func TestContains(t *testing.T) {
	have := map[string]any{
		"spec": map[string]any{"replicas": int64(2), "strategy": "RollingUpdate", "ports": []any{map[string]any{"port": float64(80), "protocol": "TCP"}}},
	}
	for _, tc := range []struct {
		name string
		want any
		held bool
	}{
		{"fewer keys", map[string]any{"spec": map[string]any{"replicas": 2}}, true},
		{"a number of another Go type", map[string]any{"spec": map[string]any{"replicas": json.Number("2")}}, true},
		{"list items with fewer keys", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}, true},
		{"a key set to nothing, not there", map[string]any{"spec": map[string]any{"paused": nil}}, true},
		{"another value", map[string]any{"spec": map[string]any{"replicas": int64(3)}}, false},
		{"a key not there", map[string]any{"spec": map[string]any{"paused": true}}, false},
		{"a list of another length", map[string]any{"spec": map[string]any{"ports": []any{}}}, false},
		{"a map where a scalar is", map[string]any{"spec": map[string]any{"strategy": map[string]any{}}}, false},
	} {
		if got := Contains(have, tc.want); got != tc.held {
			t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.held)
		}
	}
}
