package cellib

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// mapFunctions: a.merge(b) is a with b's entries added, b's winning where
// both have a key; a.deepMerge(b) merges maps within maps the same way and
// replaces everything else, and takes objects as well as maps.
func mapFunctions() []cel.EnvOption {
	v := cel.TypeParamType("V")
	stringMap := cel.MapType(cel.StringType, v)
	return []cel.EnvOption{
		cel.Function("merge",
			cel.MemberOverload("map_merge_map", []*cel.Type{stringMap, stringMap}, stringMap,
				cel.BinaryBinding(merge))),
		cel.Function("deepMerge",
			cel.MemberOverload("dyn_deep_merge_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.DynType,
				cel.BinaryBinding(deepMerge))),
	}
}

func merge(base, overlay ref.Val) ref.Val {
	a, ok := base.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(base)
	}
	b, ok := overlay.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(overlay)
	}
	out := map[ref.Val]ref.Val{}
	for _, m := range []traits.Mapper{a, b} {
		for it := m.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			out[k] = m.Get(k)
		}
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}

func deepMerge(base, overlay ref.Val) ref.Val {
	a, err := Native(base)
	if err != nil {
		return types.NewErr("deepMerge: %v", err)
	}
	b, err := Native(overlay)
	if err != nil {
		return types.NewErr("deepMerge: %v", err)
	}
	am, ok := a.(map[string]any)
	if !ok {
		return types.NewErr("deepMerge: the receiver is a %s, not a map or object", base.Type().TypeName())
	}
	bm, ok := b.(map[string]any)
	if !ok {
		return types.NewErr("deepMerge: the argument is a %s, not a map or object", overlay.Type().TypeName())
	}
	return types.DefaultTypeAdapter.NativeToValue(deepMergeMaps(am, bm))
}

// deepMergeMaps returns a with b merged in; a and b are fresh copies from
// Native, so they may be written.
func deepMergeMaps(a, b map[string]any) map[string]any {
	for k, bv := range b {
		am, aIsMap := a[k].(map[string]any)
		bm, bIsMap := bv.(map[string]any)
		if aIsMap && bIsMap {
			a[k] = deepMergeMaps(am, bm)
			continue
		}
		a[k] = bv
	}
	return a
}
