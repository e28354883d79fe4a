package cellib

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// listFunctions: lists.setAtIndex, lists.insertAtIndex and
// lists.removeAtIndex return a new list; the one given is left as it is.
func listFunctions() []cel.EnvOption {
	t := cel.TypeParamType("T")
	list := cel.ListType(t)
	return []cel.EnvOption{
		cel.Function("lists.setAtIndex",
			cel.Overload("lists_set_at_index", []*cel.Type{list, cel.IntType, t}, list,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return edit(args[0], args[1], "lists.setAtIndex", false, func(elems []ref.Val, i int) []ref.Val {
						elems[i] = args[2]
						return elems
					})
				}))),
		cel.Function("lists.insertAtIndex",
			cel.Overload("lists_insert_at_index", []*cel.Type{list, cel.IntType, t}, list,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return edit(args[0], args[1], "lists.insertAtIndex", true, func(elems []ref.Val, i int) []ref.Val {
						return append(elems[:i], append([]ref.Val{args[2]}, elems[i:]...)...)
					})
				}))),
		cel.Function("lists.removeAtIndex",
			cel.Overload("lists_remove_at_index", []*cel.Type{list, cel.IntType}, list,
				cel.BinaryBinding(func(l, index ref.Val) ref.Val {
					return edit(l, index, "lists.removeAtIndex", false, func(elems []ref.Val, i int) []ref.Val {
						return append(elems[:i], elems[i+1:]...)
					})
				}))),
	}
}

// edit copies the list's elements, checks index against them (it may equal
// their count when orEnd is set: an insert at the end) and applies change
// to the copy.
func edit(list, index ref.Val, name string, orEnd bool, change func([]ref.Val, int) []ref.Val) ref.Val {
	l, ok := list.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(list)
	}
	i, ok := index.(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(index)
	}
	n := int64(l.Size().(types.Int))
	limit := n
	if orEnd {
		limit = n + 1
	}
	if i < 0 || int64(i) >= limit {
		return types.NewErr("%s: index %d is outside the list (size %d)", name, int64(i), n)
	}
	elems := make([]ref.Val, 0, n+1)
	for it := l.Iterator(); it.HasNext() == types.True; {
		elems = append(elems, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, change(elems, int(i)))
}
