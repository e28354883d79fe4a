package celenv

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// orderedProvider is the API server's type registry, except that it turns
// the maps of the objects expressions read into CEL maps that iterate over
// their keys in sorted order. CEL leaves the order unspecified, and a Go
// map's changes from one evaluation to the next: the items of a forEach
// over m.map(k, k), or a string joined from them, would come out in
// another order at each reconcile, and every one would write the objects
// again. Lists keep their order; their elements are adapted here too, so
// that maps within them are ordered as well. Every environment derives
// from the one it is set in, so none pays for it when it is built.
type orderedProvider struct {
	*types.Registry
}

func (p orderedProvider) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	case map[string]any:
		return orderedMap{types.NewStringInterfaceMap(p, v)}
	case []any:
		return types.NewDynamicList(p, v)
	}
	return p.Registry.NativeToValue(v)
}

// orderedMap is a CEL map whose iteration follows the order of its keys.
type orderedMap struct {
	traits.Mapper
}

// Iterator ranges over the keys in sorted order.
func (m orderedMap) Iterator() traits.Iterator {
	var keys []ref.Val
	for it := m.Mapper.Iterator(); it.HasNext() == types.True; {
		keys = append(keys, it.Next())
	}
	slices.SortFunc(keys, compareKeys)
	return types.NewRefValList(types.DefaultTypeAdapter, keys).Iterator()
}

// IsZeroValue tells an empty map, as optional.ofNonZeroValue asks.
func (m orderedMap) IsZeroValue() bool {
	return m.Size() == types.IntZero
}

// compareKeys orders map keys: strings, as the keys of objects are, by
// their text; others by what they print.
func compareKeys(a, b ref.Val) int {
	as, aok := a.(types.String)
	bs, bok := b.(types.String)
	if aok && bok {
		return cmp.Compare(as, bs)
	}
	return cmp.Compare(fmt.Sprint(a.Value()), fmt.Sprint(b.Value()))
}
