package resolve

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// ErrExternalValue is wrapped by the pending errors of an expression that
// reads externalRefs alone and misses a key in what they read: the value is
// the external object's owner's to supply, as kro-agent never writes it.
// Its text is ErrPending's, so that what waits is told alike.
var ErrExternalValue = fmt.Errorf("%w", ErrPending)

// externalLacks says, of a pending error of e that misses a key, when e
// reads nothing but externalRefs: whose the value is, that kro-agent goes
// on once it is there, and how to read it so as to go on without it.
func (s *Scope) externalLacks(e *graph.Expression, err error) error {
	if s.graph == nil || len(e.References) == 0 || !WaitsForValue(err) || errors.Is(err, ErrNeverComes) || errors.Is(err, errZeroLeftOut) || !strings.Contains(err.Error(), "no such key: ") {
		return err
	}
	for _, ref := range e.References {
		if n := s.graph.Node(ref); n == nil || n.External == nil {
			return err
		}
	}
	words := e.References[0] + " is an externalRef, which kro-agent reads and never writes: its owner supplies the value"
	if len(e.References) > 1 {
		words = strings.Join(e.References, " and ") + " are externalRefs, which kro-agent reads and never writes: their owners supply the value"
	}
	words += ", and kro-agent goes on as soon as it is there"
	if i := slices.IndexFunc(e.Inputs(), s.missingField); i >= 0 {
		in := e.Inputs()[i]
		zero, ok := celenv.ZeroLiteral(in.Type)
		if !ok {
			zero = "v"
		}
		words += "; to go on without it, read " + optionalRead(in.Source, zero)
	}
	return pendingWith(err, words, ErrExternalValue)
}
