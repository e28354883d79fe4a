package conditions

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// notes runs one change of conditions through a manager, as a reconciler
// does, and returns the Events Newsworthy would have told of it.
func notes(t *testing.T, conds *[]metav1.Condition, change func(m *Manager)) []string {
	t.Helper()
	prev := slices.Clone(*conds)
	m := newManager(conds, 1, &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	change(m)
	var out []string
	for _, n := range Newsworthy(prev, *conds, "Ready", func(c string) bool { return c == "Pressure" }) {
		out = append(out, n.EventType()+" "+n.Reason+" "+n.Note())
	}
	return out
}

func TestNewsworthy(t *testing.T) {
	var conds []metav1.Condition
	for _, step := range []struct {
		what   string
		change func(m *Manager)
		want   []string
	}{
		{"a healthy start is not news", func(m *Manager) {
			m.InitializeConditions()
			m.MarkTrue("A", "Done", "")
			m.MarkTrue("B", "Done", "")
			m.MarkFalse("Pressure", "NoPressure", "")
		}, nil},
		{"a dependent turning False is told once, not again by Ready", func(m *Manager) {
			m.MarkFalse("B", "Refused", "the API server said no")
		}, []string{"Warning Refused B is False: the API server said no"}},
		{"a message that changes while the status stays is not news", func(m *Manager) {
			m.MarkFalse("B", "Refused", "the API server said no again")
		}, nil},
		{"Ready back to True is", func(m *Manager) {
			m.MarkTrue("B", "Done", "")
		}, []string{"Normal Ready Ready is True"}},
		{"a negative condition turning True is a warning", func(m *Manager) {
			m.MarkTrue("Pressure", "DiskFull", "disk %d%% full", 97)
		}, []string{"Warning DiskFull Pressure is True: disk 97% full"}},
		{"its clearing is told by Ready alone", func(m *Manager) {
			m.MarkFalse("Pressure", "NoPressure", "")
		}, []string{"Normal Ready Ready is True"}},
		{"work in progress is not news", func(m *Manager) {
			m.MarkUnknown("A", "Working", "rolling out")
		}, nil},
		{"two dependents turning False with different messages are both told", func(m *Manager) {
			m.MarkFalse("A", "Broken", "a is broken")
			m.MarkFalse("B", "Broken", "b is broken")
		}, []string{"Warning Broken A is False: a is broken", "Warning Broken B is False: b is broken"}},
	} {
		if got := notes(t, &conds, step.change); !slices.Equal(got, step.want) {
			t.Errorf("%s: told %q, want %q", step.what, got, step.want)
		}
	}
}

func TestNewsworthyTellsReadyTurnedByAConditionAlreadyUnhappy(t *testing.T) {
	// A condition that was False without counting toward Ready, counted
	// once the RGD changed: Ready turns False with no dependent changing.
	prev := []metav1.Condition{
		{Type: "Audit", Status: metav1.ConditionFalse, Reason: "Missing", Message: "no audit"},
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"},
	}
	next := []metav1.Condition{
		{Type: "Audit", Status: metav1.ConditionFalse, Reason: "Missing", Message: "no audit"},
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Missing", Message: "no audit"},
	}
	got := Newsworthy(prev, next, "Ready", nil)
	if len(got) != 1 || got[0].Type != "Ready" || !got[0].Warning {
		t.Errorf("told %+v, want Ready turning False", got)
	}
}
