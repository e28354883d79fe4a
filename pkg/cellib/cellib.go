// Package cellib holds the CEL functions upstream kro adds to the cel-go and
// Kubernetes libraries, so that RGDs written for kro compile and evaluate the
// same here: hash.*, json.*, random.seeded*, map merge and deepMerge, list
// index mutation, omit(), the latest strings extension's reverse() and format(),
// the condition functions runtime.newCondition and runtime.condition, and
// time.now(). Each function but time.now() is pure: the same arguments give
// the same value on every reconcile, which keeps rendered objects stable
// and quiet; time.now() keeps how what it gives depends on the time, so
// that kro-agent comes back when an answer computed from it turns.
package cellib

import (
	"github.com/google/cel-go/cel"
)

// Library declares every function of the package in a CEL environment.
func Library() cel.EnvOption {
	return cel.Lib(library{})
}

type library struct{}

func (library) LibraryName() string { return "kro-agent.cellib" }

func (library) CompileOptions() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, group := range [][]cel.EnvOption{hashFunctions(), jsonFunctions(), randomFunctions(), mapFunctions(), listFunctions(), omitFunctions(), conditionFunctions(), stringFunctions(), clockFunctions()} {
		opts = append(opts, group...)
	}
	return opts
}

func (library) ProgramOptions() []cel.ProgramOption { return nil }
