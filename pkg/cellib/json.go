package cellib

import (
	"encoding/json"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// jsonFunctions: json.unmarshal(string) parses JSON text into a CEL value,
// json.marshal(value) writes one as JSON text.
func jsonFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("json.unmarshal",
			cel.Overload("json_unmarshal_string", []*cel.Type{cel.StringType}, cel.DynType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					// Whole numbers become ints, as in objects read from
					// the API server, so that they add to other ints.
					var out any
					if err := utiljson.Unmarshal([]byte(s), &out); err != nil {
						return types.NewErr("json.unmarshal: %v", err)
					}
					return types.DefaultTypeAdapter.NativeToValue(out)
				}))),
		cel.Function("json.marshal",
			cel.Overload("json_marshal_dyn", []*cel.Type{cel.DynType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					native, err := Native(v)
					if err != nil {
						return types.NewErr("json.marshal: %v", err)
					}
					if native == Absent {
						native = nil
					}
					// Map keys are written sorted: the same value always
					// gives the same text.
					b, err := json.Marshal(native)
					if err != nil {
						return types.NewErr("json.marshal: %v", err)
					}
					return types.String(b)
				}))),
	}
}
