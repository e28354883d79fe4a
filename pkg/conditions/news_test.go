package conditions

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// notes runs one change of conditions through a manager, as a reconciler
// does, and returns the Events Newsworthy would have told of it.
func notes(t *testing.T, conds *[]metav1.Condition, spells *Spells[string], change func(m *Manager)) []string {
	t.Helper()
	prev := slices.Clone(*conds)
	m := newManager(conds, 1, &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	change(m)
	ended := spells.Ended("o", meta.FindStatusCondition(prev, "Ready"), meta.FindStatusCondition(*conds, "Ready"))
	var out []string
	for _, n := range Newsworthy(prev, *conds, "Ready", func(c string) bool { return c == "Pressure" }, ended) {
		out = append(out, n.EventType()+" "+n.Reason+" "+n.Note())
	}
	return out
}

func TestNewsworthy(t *testing.T) {
	var conds []metav1.Condition
	var spells Spells[string]
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
		{"another reason while it stays False is", func(m *Manager) {
			m.MarkFalse("B", "TooLarge", "the API server stores less")
		}, []string{"Warning TooLarge B is False: the API server stores less"}},
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
		{"their fix under way is not news", func(m *Manager) {
			m.MarkUnknown("A", "Working", "rolling out the fix")
			m.MarkUnknown("B", "Working", "rolling out the fix")
		}, nil},
		{"Ready back to True after trouble is, though Unknown came between", func(m *Manager) {
			m.MarkTrue("A", "Done", "")
			m.MarkTrue("B", "Done", "")
		}, []string{"Normal Ready Ready is True"}},
		{"a rollout after that is not news again", func(m *Manager) {
			m.MarkUnknown("A", "Working", "rolling out")
		}, nil},
		{"nor its end", func(m *Manager) {
			m.MarkTrue("A", "Done", "")
		}, nil},
	} {
		if got := notes(t, &conds, &spells, step.change); !slices.Equal(got, step.want) {
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
	got := Newsworthy(prev, next, "Ready", nil, false)
	if len(got) != 1 || got[0].Type != "Ready" || !got[0].Warning {
		t.Errorf("told %+v, want Ready turning False", got)
	}
}

func TestSpellsEndOnTrueAfterFalse(t *testing.T) {
	var s Spells[string]
	at := func(status metav1.ConditionStatus) *metav1.Condition {
		return &metav1.Condition{Type: "Ready", Status: status}
	}
	unknown, falseNow, trueNow := at(metav1.ConditionUnknown), at(metav1.ConditionFalse), at(metav1.ConditionTrue)
	for i, step := range []struct {
		id         string
		prev, next *metav1.Condition
		forget     bool
		ended      bool
	}{
		{id: "a", prev: nil, next: trueNow},
		{id: "a", prev: trueNow, next: unknown},
		{id: "a", prev: unknown, next: trueNow}, // a rollout: no spell
		{id: "a", prev: trueNow, next: falseNow},
		{id: "b", prev: unknown, next: trueNow}, // another object's spell is its own
		{id: "a", prev: falseNow, next: nil},    // no Ready written: nothing learnt
		{id: "a", prev: falseNow, next: unknown},
		{id: "a", prev: unknown, next: trueNow, ended: true},
		{id: "a", prev: trueNow, next: trueNow}, // ended once
		{id: "a", prev: trueNow, next: falseNow},
		{id: "a", forget: true}, // gone
		{id: "a", prev: unknown, next: trueNow},
		// A spell begun before the process started is known by the
		// status it finds.
		{id: "c", prev: falseNow, next: unknown},
		{id: "c", prev: unknown, next: trueNow, ended: true},
	} {
		if step.forget {
			s.Forget(step.id)
			continue
		}
		if got := s.Ended(step.id, step.prev, step.next); got != step.ended {
			t.Errorf("step %d (%s): ended = %v, want %v", i, step.id, got, step.ended)
		}
	}
}
