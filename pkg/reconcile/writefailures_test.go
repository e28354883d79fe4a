package reconcile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWriteFailuresTellTheFirstInFullAndTheOthersByALine(t *testing.T) {
	if joinWriteFailures(nil) != nil {
		t.Error("no failure: want nil")
	}
	one := errors.New("applying ConfigMap a/b (resource cm) in the local cluster: refused\nwith a diff")
	if got := joinWriteFailures([]error{one}); got != one {
		t.Errorf("one failure = %v, want it as it is", got)
	}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "m1", errors.New("changed"))
	errs := []error{one, fmt.Errorf("applying Job a/m1 (resource job) in the local cluster: %w", conflict)}
	for i := range 5 {
		errs = append(errs, fmt.Errorf("applying ConfigMap a/q%d (resource queues) in the local cluster: refused\nwith a diff", i))
	}
	err := joinWriteFailures(errs)
	want := "applying ConfigMap a/b (resource cm) in the local cluster: refused\nwith a diff" +
		"\nAlso: applying Job a/m1 (resource job) in the local cluster: " + conflict.Error() +
		"\nAlso: applying ConfigMap a/q0 (resource queues) in the local cluster: refused" +
		"\nAlso: applying ConfigMap a/q1 (resource queues) in the local cluster: refused" +
		"\nAlso: 3 more"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	// A refusal after the first is still found by what classifies them.
	if !apierrors.IsConflict(err) || !errors.Is(err, one) || strings.Count(err.Error(), "Also:") != 4 {
		t.Errorf("%v: want the conflict and the first error found in it", err)
	}
}
