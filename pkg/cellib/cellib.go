// Package cellib holds the CEL functions upstream kro adds to the cel-go and
// Kubernetes libraries, so that RGDs written for kro compile and evaluate the
// same here: hash.*, json.*, random.seeded*, map merge and deepMerge, list
// index mutation, omit(), the latest strings extension's reverse() and format(),
// and the condition functions runtime.newCondition and runtime.condition.
// Each function is pure: the same arguments give the same value on every
// reconcile, which keeps rendered objects stable and quiet.
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
	for _, group := range [][]cel.EnvOption{hashFunctions(), jsonFunctions(), randomFunctions(), mapFunctions(), listFunctions(), omitFunctions(), conditionFunctions(), stringFunctions()} {
		opts = append(opts, group...)
	}
	return opts
}

func (library) ProgramOptions() []cel.ProgramOption { return nil }
