package resolve

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// errZeroLeftOut is wrapped by the pending errors zeroLeftOut explains, so
// that no other explanation is added after its own.
var errZeroLeftOut = fmt.Errorf("%w", ErrPending)

// zeroLeftOut adds to a pending error of e, one that misses a key, the
// integer of a resource's status that e waits for when the resource's
// controller has written that status, for the object's current
// generation where it says which: the API server's built-in kinds leave a
// count of 0 out of their status (a Deployment scaled to zero has no
// availableReplicas), so while the count is 0 the field never comes, and
// whatever waits for it waits for good. It says how to read the field as
// 0; other errors are returned as they are.
func (s *Scope) zeroLeftOut(e *graph.Expression, err error) error {
	if s.graph == nil || !WaitsForValue(err) || errors.Is(err, ErrNeverComes) || !strings.Contains(err.Error(), "no such key: ") {
		return err
	}
	for _, ref := range e.References {
		// One object: a resource's, or a collection's item as each.
		n := s.node(ref)
		if n == nil || n.IsCollection() && ref != graph.EachVar || n.Kind == nil || n.Kind.Custom || !statusWritten(s.vars[ref]) {
			continue
		}
		whose := ref + "'s controller"
		if ref == graph.EachVar {
			whose = "the controller of " + n.ID + "'s items"
		}
		for _, in := range e.Inputs() {
			if !strings.HasPrefix(in.Source, ref+".status.") || in.Type == nil || in.Type.Kind() != types.IntKind {
				continue
			}
			if strings.ContainsAny(in.Source, "[?") {
				continue // not a plain path of fields
			}
			at := strings.LastIndexByte(in.Source, '.')
			// The program alone: Eval would explain the input's own
			// failure in turn.
			if _, _, inErr := in.Program.Eval(s.vars); inErr == nil {
				continue
			}
			return pendingWith(err, fmt.Sprintf("%s has written its status without %s: Kubernetes leaves a count of 0 out, so where 0 is an answer read %s.?%s.orValue(0)",
				whose, in.Source[len(ref)+1:], in.Source[:at], in.Source[at+1:]), errZeroLeftOut)
		}
	}
	return err
}

// statusWritten reports whether observed has a status its controller
// wrote for its current generation: one that says which generation it
// observed says whether that is the object's, and one that does not is
// taken at its word.
func statusWritten(observed any) bool {
	obj, _ := observed.(map[string]any)
	status, _ := obj["status"].(map[string]any)
	if len(status) == 0 {
		return false
	}
	seen, says := status["observedGeneration"].(int64)
	if !says {
		return true
	}
	meta, _ := obj["metadata"].(map[string]any)
	generation, _ := meta["generation"].(int64)
	return seen >= generation
}
