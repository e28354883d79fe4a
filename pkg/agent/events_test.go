package agent

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
)

// Every Event the agent records goes out with a note the events API takes,
// whichever reconciler records it: formatted first, then cut to 1 KB.
func TestEventNotesFitTheEventsAPI(t *testing.T) {
	fake := events.NewFakeRecorder(2)
	r := notesWithinLimit{fake}
	var errs []string
	for i := range 20 {
		errs = append(errs, fmt.Sprintf("spec.resources[widget%d].template.kind: Not found: \"example.com/v1 Widget (is its CRD installed?)\"", i))
	}
	r.Eventf(nil, nil, "Warning", "InvalidResourceGraph", "Reconcile", "%s is %s: %s", "GraphAccepted", "False", strings.Join(errs, "\n"))
	r.Eventf(nil, nil, "Normal", "Ready", "Reconcile", "100%% %s", "done")
	long, short := <-fake.Events, <-fake.Events
	note := strings.TrimPrefix(long, "Warning InvalidResourceGraph ")
	if len(note) > 1024 || !strings.HasPrefix(note, "GraphAccepted is False: spec.resources[widget0]") || !strings.Contains(note, " more lines, left out to keep within 1024 bytes") {
		t.Errorf("a long note: %d bytes:\n%s", len(note), note)
	}
	// The note reaches the recorder as an argument, not as a format.
	if short != "Normal Ready 100% done" {
		t.Errorf("a short note: %q", short)
	}
}
