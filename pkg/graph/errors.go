package graph

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error is every problem found in an RGD. Each entry names the field path,
// with resources addressed by id: spec.resources[deployment].template.spec.replicas.
type Error struct {
	Errs field.ErrorList
}

// Error lists every problem, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}
