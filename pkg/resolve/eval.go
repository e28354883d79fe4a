// Package resolve evaluates a compiled graph for one instance: it renders
// resource templates, expands collections, decides includeWhen and
// readyWhen, and projects status. It is pure: no API calls, so every rule
// is testable with plain maps.
package resolve

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// ErrPending is wrapped by errors about data that does not exist yet: a
// status field a controller has not written, a resource not observed. It is
// a reason to wait, not a failure.
var ErrPending = errors.New("input not available yet")

// Scope holds the values of the names expressions may read.
type Scope struct {
	vars map[string]any
}

// NewScope starts a scope with the instance as `schema`. The instance's
// status is left out: expressions may not read it.
func NewScope(instance map[string]any) *Scope {
	in := map[string]any{}
	for k, v := range instance {
		if k != "status" {
			in[k] = v
		}
	}
	return &Scope{vars: map[string]any{graph.SchemaVar: in}}
}

// Set binds a resource id (or iterator) to its observed value.
func (s *Scope) Set(name string, v any) { s.vars[name] = v }

// Has reports whether name is bound.
func (s *Scope) Has(name string) bool {
	_, ok := s.vars[name]
	return ok
}

// With returns a scope that adds one binding to s without changing s.
func (s *Scope) With(name string, v any) *Scope {
	vars := make(map[string]any, len(s.vars)+1)
	for k, val := range s.vars {
		vars[k] = val
	}
	vars[name] = v
	return &Scope{vars: vars}
}

// absent is the value of an optional expression that holds nothing; a
// field set to it is left out of the object.
type absentValue struct{}

var absent = absentValue{}

// Eval evaluates e in s and returns a plain Go value (JSON-like: map,
// slice, string, int64, float64, bool, nil).
func Eval(e *graph.Expression, s *Scope) (any, error) {
	for _, ref := range e.References {
		if _, ok := s.vars[ref]; !ok {
			return nil, fmt.Errorf("%s is not observed: %w", ref, ErrPending)
		}
	}
	out, _, err := e.Program.Eval(s.vars)
	if err != nil {
		return nil, classify(err)
	}
	return native(out)
}

// classify marks errors caused by missing data as pending.
func classify(err error) error {
	msg := err.Error()
	for _, p := range []string{"no such key", "no such attribute", "no such field", "index out of bounds", "index out of range"} {
		if strings.Contains(msg, p) {
			return fmt.Errorf("%s: %w", msg, ErrPending)
		}
	}
	return err
}

// native converts a CEL value into the JSON-like value Kubernetes objects
// hold.
func native(v ref.Val) (any, error) {
	switch t := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(t), nil
	case types.Int:
		return int64(t), nil
	case types.Uint:
		return int64(t), nil
	case types.Double:
		return float64(t), nil
	case types.String:
		return string(t), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(t), nil
	case types.Timestamp:
		return t.Time.UTC().Format(time.RFC3339), nil
	case types.Duration:
		return t.Duration.String(), nil
	case *types.Optional:
		if !t.HasValue() {
			return absent, nil
		}
		return native(t.GetValue())
	case *types.Err:
		return nil, classify(t)
	}
	switch {
	case isMap(v):
		m := v.(traits.Mapper)
		out := map[string]any{}
		it := m.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			val, err := native(m.Get(k))
			if err != nil {
				return nil, err
			}
			if val != absent {
				out[string(ks)] = val
			}
		}
		return out, nil
	case isList(v):
		l := v.(traits.Lister)
		var out []any
		it := l.Iterator()
		for it.HasNext() == types.True {
			val, err := native(it.Next())
			if err != nil {
				return nil, err
			}
			if val != absent {
				out = append(out, val)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	// Values from the API server's CEL libraries (quantity, URL, IP, ...)
	// are written in their string form.
	if s, err := v.ConvertToNative(stringType); err == nil {
		return s, nil
	}
	return nil, fmt.Errorf("a value of type %s cannot be written into an object", v.Type().TypeName())
}

func isMap(v ref.Val) bool {
	_, ok := v.(traits.Mapper)
	return ok
}

func isList(v ref.Val) bool {
	_, ok := v.(traits.Lister)
	return ok
}
