package cellib

import (
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// stringFunctions are those of cel-go's strings extension newer than the
// version the API server's environment enables (2), which kro's has (it
// takes the latest): s.reverse(). The extension is registered once per
// environment, so a later version cannot be added beside it.
func stringFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("reverse",
			cel.MemberOverload("string_reverse", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(reverseString))),
	}
}

// reverseString reverses a string by code point, as the extension does.
func reverseString(s ref.Val) ref.Val {
	str, ok := s.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	runes := []rune(string(str))
	slices.Reverse(runes)
	return types.String(runes)
}
