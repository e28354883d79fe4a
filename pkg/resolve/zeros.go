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
			if !strings.HasPrefix(in.Source, ref+".status.") || in.Type == nil || in.Type.Kind() != types.IntKind || !s.missingField(in) {
				continue
			}
			return pendingWith(err, fmt.Sprintf("%s has written its status without %s: Kubernetes leaves a count of 0 out, so where 0 is an answer read %s",
				whose, in.Source[len(ref)+1:], optionalRead(in.Source, "0")), errZeroLeftOut)
		}
	}
	return err
}

// missingField tells whether in, an input of an expression, is a plain
// path of fields (deploy.status.availableReplicas) that finds nothing in s.
func (s *Scope) missingField(in *graph.Expression) bool {
	if strings.ContainsAny(in.Source, "[?(") {
		return false // not a plain path of fields
	}
	// The program alone: Eval would explain the input's own failure in
	// turn.
	_, _, err := in.Program.Eval(s.vars)
	return err != nil
}

// optionalRead is path, a plain path of fields, read so that a missing
// last field gives zero: a.b.?c.orValue(zero).
func optionalRead(path, zero string) string {
	at := strings.LastIndexByte(path, '.')
	return fmt.Sprintf("%s.?%s.orValue(%s)", path[:at], path[at+1:], zero)
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
