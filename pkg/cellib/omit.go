package cellib

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// OmitOverload is the overload of omit(), which expressions other than
// template fields must not call: it means "leave this field out", and only
// a field can be left out.
const OmitOverload = "omit"

// omitFunctions: omit() leaves the template field it is written into out
// of the object (in a map or list, the entry), as an empty optional does.
// It is typed dyn so that it fits either branch of a conditional:
// ${cond ? {...} : omit()}.
func omitFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("omit",
			cel.Overload(OmitOverload, nil, cel.DynType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return types.OptionalNone }))),
	}
}
