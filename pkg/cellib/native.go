package cellib

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

type absentValue struct{}

// Absent is the value of an expression that holds nothing: an empty
// optional, or omit(). Written into an object it leaves the field out; in a
// map or list it drops the entry.
var Absent any = absentValue{}

var stringType = reflect.TypeOf("")

// Native converts a CEL value into the JSON-like value Kubernetes objects
// hold: map[string]any, []any, string, int64, float64, bool or nil. Bytes
// become base64 and timestamps RFC 3339 text, as in the Kubernetes API;
// values of the Kubernetes libraries (quantity, URL, IP, ...) their string
// form. json.marshal writes the same values.
func Native(v ref.Val) (any, error) {
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
		return t.Time.UTC().Format(time.RFC3339Nano), nil
	case types.Duration:
		return t.Duration.String(), nil
	case *types.Optional:
		if !t.HasValue() {
			return Absent, nil
		}
		return Native(t.GetValue())
	case *types.Err:
		return nil, t
	case *moving:
		return nil, errWrittenAsIs
	}
	if m, ok := v.(traits.Mapper); ok {
		out := map[string]any{}
		it := m.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			val, err := Native(m.Get(k))
			if err != nil {
				return nil, err
			}
			if val != Absent {
				out[string(ks)] = val
			}
		}
		return out, nil
	}
	if l, ok := v.(traits.Lister); ok {
		out := []any{}
		it := l.Iterator()
		for it.HasNext() == types.True {
			val, err := Native(it.Next())
			if err != nil {
				return nil, err
			}
			if val != Absent {
				out = append(out, val)
			}
		}
		return out, nil
	}
	if s, err := v.ConvertToNative(stringType); err == nil {
		return s, nil
	}
	return nil, fmt.Errorf("a value of type %s cannot be written into an object", v.Type().TypeName())
}
