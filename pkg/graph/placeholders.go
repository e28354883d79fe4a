package graph

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// foreignPlaceholder matches the placeholders of other templating
// languages, which kro-agent leaves as text: {{ x }} (Go templates, Helm,
// Jinja, Argo), $(x.y) (a container's variable reference) and $x.y (a
// shell's). Its groups hold the expression each names.
var foreignPlaceholder = regexp.MustCompile(`\{\{-?\s*\.?([A-Za-z_][\w.]*)\s*-?\}\}|\$\(([A-Za-z_]\w*(?:\.\w+)+)\)|\$([A-Za-z_]\w*(?:\.\w+)+)`)

// warnForeignPlaceholders notes a warning for each placeholder of another
// templating language in the text of the template v (at path) that names
// what an expression here may read ({{ schema.spec.name }}): it stays in
// the object as written, where a value was meant. One naming anything
// else ({{ .Values.name }}, a Prometheus rule's {{ $labels.pod }},
// $(POD_NAME)) is text for another tool to read.
func (c *compiler) warnForeignPlaceholders(env *celenv.Env, v any, p expr.Path, base *field.Path) {
	// Most placeholders name what does not compile here (a script's
	// $HOME.x): they are compiled without the hints that explain why.
	env = env.Compiler()
	walk(v, p, func(v any, p expr.Path) bool {
		x, ok := v.(string)
		if !ok || !strings.Contains(x, "{{") && !strings.Contains(x, "$") {
			return true
		}
		segs, err := expr.Parse(x)
		if err != nil {
			return true
		}
		for _, s := range segs {
			if s.IsExpr {
				continue
			}
			for _, m := range foreignPlaceholder.FindAllStringSubmatch(s.Literal, -1) {
				meant := m[1] + m[2] + m[3] // one group matched
				ast, err := env.Compile(meant)
				if err != nil {
					continue
				}
				switch ast.OutputType().Kind() {
				case types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind:
					if m[0] != x {
						// Within text, as ${...} is, it must be a string.
						meant = "string(" + meant + ")"
					}
				}
				c.warnings = append(c.warnings, fmt.Sprintf("%s: %s: the text %s stays as written, since kro-agent evaluates only ${...}: write ${%s} in its place",
					p.FieldPath(base), x, strconv.Quote(m[0]), meant))
			}
		}
		return true
	})
}
