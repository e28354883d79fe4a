package celenv

import (
	"runtime"
	"sync"
	"weak"

	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The CEL type of a variable is built from its kind's OpenAPI schema, and
// for a Deployment or anything with a pod template that is thousands of
// fields: most of what a compiled RGD holds. Every RGD that names a variable
// the same and gives it the same kind (the kind resolvers hand out one schema
// per kind until they are invalidated) gets the same type, so the types are
// shared while anything uses them. DeclTypes are immutable once built.
//
// Both sides are weak: an entry lives only while some environment holds its
// type, and a schema the resolver has dropped is not kept alive by it.
type declKey struct {
	schema weak.Pointer[spec.Schema]
	name   string
}

var declTypes = struct {
	sync.Mutex
	m map[declKey]weak.Pointer[apiservercel.DeclType]
}{m: map[declKey]weak.Pointer[apiservercel.DeclType]{}}

// namedDeclType returns the CEL type of values of schema s named name, or nil
// when CEL cannot type s.
func namedDeclType(s *spec.Schema, name string) *apiservercel.DeclType {
	key := declKey{schema: weak.Make(s), name: name}
	declTypes.Lock()
	cached := declTypes.m[key].Value()
	declTypes.Unlock()
	if cached != nil {
		return cached
	}
	dt := openapi.SchemaDeclType(s, false)
	if dt == nil {
		return nil
	}
	t := dt.MaybeAssignTypeName(name)
	declTypes.Lock()
	defer declTypes.Unlock()
	if cached := declTypes.m[key].Value(); cached != nil {
		return cached // built by another compile meanwhile
	}
	declTypes.m[key] = weak.Make(t)
	runtime.AddCleanup(t, forgetDeclType, key)
	return t
}

// forgetDeclType drops the entry of a type no environment holds any more,
// unless a newer type has taken its place.
func forgetDeclType(key declKey) {
	declTypes.Lock()
	defer declTypes.Unlock()
	if declTypes.m[key].Value() == nil {
		delete(declTypes.m, key)
	}
}
