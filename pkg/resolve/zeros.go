package resolve

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// zeroLeftOut explains a readyWhen of n, e, that waits for an integer of
// its object's status when the object's controller has written that
// status, for the object's current generation where it says which: the
// API server's built-in kinds leave a count of 0 out of their status (a
// Deployment scaled to zero has no availableReplicas), so while the count
// is 0 the field never comes, and the readyWhen waits for good. It says
// how to read the field as 0; "" when that is not what holds e up.
func zeroLeftOut(n *graph.Node, e *graph.Expression, scope *Scope, self string, observed any) string {
	if n.Kind == nil || n.Kind.Custom || !statusWritten(observed) {
		return ""
	}
	for _, in := range e.Inputs() {
		if !strings.HasPrefix(in.Source, self+".status.") || in.Type == nil || in.Type.Kind() != types.IntKind {
			continue
		}
		if _, err := Eval(in, scope); err == nil {
			continue
		}
		at := strings.LastIndexByte(in.Source, '.')
		if strings.ContainsAny(in.Source[at:], "[?") {
			continue // not a plain field: said as it is
		}
		return fmt.Sprintf("; %s's controller has written its status without %s: Kubernetes leaves a count of 0 out, so where 0 is an answer read %s.?%s.orValue(0)",
			self, in.Source[len(self)+1:], in.Source[:at], in.Source[at+1:])
	}
	return ""
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
