package reconcile

import (
	"fmt"
	"strings"
)

// maxFailuresListed bounds the further failures a message lists after the
// first: a collection of hundreds refused alike is told by a few and a
// count.
const maxFailuresListed = 3

// writeFailures are the writes of one pass that failed, the first told in
// full and the others by their first line, each on a line of its own
// after it. errors.Is and errors.As see them all.
type writeFailures []error

// joinWriteFailures is nil for no failure, the failure itself for one.
func joinWriteFailures(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return writeFailures(errs)
}

func (f writeFailures) Error() string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(f[0].Error(), "\n"))
	for i, err := range f[1:] {
		if i == maxFailuresListed {
			fmt.Fprintf(&b, "\nAlso: %d more", len(f)-1-maxFailuresListed)
			break
		}
		line, _, _ := strings.Cut(err.Error(), "\n")
		b.WriteString("\nAlso: " + line)
	}
	return b.String()
}

func (f writeFailures) Unwrap() []error { return f }
