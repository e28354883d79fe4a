package cellib

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// stringFormatValidator is the name of the check of format strings against
// their arguments at compile time; the validator given under it takes the
// place of the one configured before.
const stringFormatValidator = "cel.validator.string_format"

// stringFunctions are what kro's environment, which takes cel-go's strings
// extension at its latest version, has beyond the version the API server's
// environment enables (2): s.reverse(), and format() with the later
// formatting rules ("%s" of a list gives [1, a], not [1, "a"]; "%d" takes a
// whole double; "%e" gives 1.2e+03) and their compile-time check. The
// extension is registered once per environment, so its later version cannot
// be added beside the earlier; its functions and check are taken from an
// environment of their own instead, and replace those of the same overload
// and name (the signatures are the same in every version). They are built
// once, for every environment this library is added to.
var stringFunctions = sync.OnceValue(func() []cel.EnvOption {
	latest, err := cel.NewEnv(ext.Strings())
	if err != nil {
		panic(fmt.Sprintf("cel-go's strings extension: %v", err))
	}
	functions := latest.Functions()
	opts := []cel.EnvOption{cel.FunctionDecls(functions["format"], functions["reverse"])}
	for _, v := range latest.Validators() {
		if v.Name() == stringFormatValidator {
			opts = append(opts, cel.ASTValidators(v))
		}
	}
	return opts
})
