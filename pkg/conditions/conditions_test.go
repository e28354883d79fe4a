package conditions

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newManager(conds *[]metav1.Condition, gen int64, c *clock) *Manager {
	set := NewSet("Ready", "A", "B").With(Dependent{Type: "Pressure", Negative: true})
	return set.Manage(conds, gen).WithClock(c.now)
}

func status(m *Manager, t string) metav1.ConditionStatus { return m.Get(t).Status }

func TestReadyIsDerived(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var conds []metav1.Condition
	m := newManager(&conds, 1, c)
	m.InitializeConditions()
	if status(m, "Ready") != metav1.ConditionUnknown || len(conds) != 4 {
		t.Fatalf("after init: %+v", conds)
	}
	if conds[0].Type != "A" || conds[2].Type != "Pressure" || conds[3].Type != "Ready" {
		t.Errorf("conditions not sorted in declaration order, then Ready: %+v", conds)
	}
	m.MarkTrue("A", "Done", "")
	m.MarkTrue("B", "Done", "")
	if status(m, "Ready") != metav1.ConditionUnknown {
		t.Error("Ready must stay Unknown while a dependent is Unknown")
	}
	m.MarkFalse("Pressure", "NoPressure", "")
	if !m.IsHappy() || m.Get("Ready").Reason != ReasonReady {
		t.Errorf("all happy (negative Pressure False) must make Ready True: %+v", m.Get("Ready"))
	}
	m.MarkTrue("Pressure", "DiskFull", "disk %d%% full", 97)
	if r := m.Get("Ready"); r.Status != metav1.ConditionFalse || r.Reason != "DiskFull" || r.Message != "disk 97% full" {
		t.Errorf("negative-polarity True must make Ready False with its reason: %+v", r)
	}
}

func TestFalseOutranksUnknownAndFreshestWins(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var conds []metav1.Condition
	m := newManager(&conds, 1, c)
	m.MarkFalse("Pressure", "Fine", "")
	m.MarkUnknown("A", "Working", "creating")
	m.MarkFalse("B", "Broken", "b is broken")
	if r := m.Get("Ready"); r.Status != metav1.ConditionFalse || r.Reason != "Broken" {
		t.Errorf("False must outrank Unknown: %+v", r)
	}
	c.t = c.t.Add(time.Minute)
	m.MarkTrue("B", "Ok", "")
	m.MarkFalse("A", "AFailed", "a failed")
	if r := m.Get("Ready"); r.Reason != "AFailed" {
		t.Errorf("Ready must carry the unhappy dependent: %+v", r)
	}
	c.t = c.t.Add(time.Minute)
	m.MarkFalse("B", "BFailed", "b failed again")
	if r := m.Get("Ready"); r.Reason != "BFailed" {
		t.Errorf("the most recent unhappy dependent must lend its reason: %+v", r)
	}
}

func TestTransitionTimeMovesOnlyOnStatusChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	var conds []metav1.Condition
	m := newManager(&conds, 1, c)
	m.MarkUnknown("A", "Working", "step 1")
	c.t = t0.Add(time.Hour)
	m.MarkUnknown("A", "Working", "step 2")
	if got := m.Get("A"); !got.LastTransitionTime.Time.Equal(t0) || got.Message != "step 2" {
		t.Errorf("same status must keep lastTransitionTime and update the message: %+v", got)
	}
	c.t = t0.Add(2 * time.Hour)
	m.MarkTrue("A", "Done", "")
	if got := m.Get("A"); !got.LastTransitionTime.Time.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("status change must move lastTransitionTime: %+v", got)
	}
}

// Conditions marked again after a failed write keep the times they were
// written with when their status is that again; the others keep theirs.
func TestKeepTransitionTimesOfWhatWasWritten(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	var conds []metav1.Condition
	m := newManager(&conds, 1, c)
	m.MarkFalse("A", "Failed", "")
	m.MarkTrue("B", "Done", "")
	written := slices.Clone(conds)

	c.t = t0.Add(time.Hour)
	m.MarkTrue("A", "Done", "") // the write of this failed
	m.MarkFalse("A", "Failed", "again")
	m.MarkFalse("B", "Broken", "")
	m.KeepTransitionTimes(written)
	if got := m.Get("A"); !got.LastTransitionTime.Time.Equal(t0) || got.Message != "again" {
		t.Errorf("A, False as written, must keep its time: %+v", got)
	}
	if got := m.Get("B"); !got.LastTransitionTime.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("B, True when written and False now, must keep its new time: %+v", got)
	}
	if got := m.Get("Ready"); got.Status != metav1.ConditionFalse || !got.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Ready, False as written, must keep its time: %+v", got)
	}
}

func TestObservedGenerationStamped(t *testing.T) {
	c := &clock{t: time.Now()}
	var conds []metav1.Condition
	newManager(&conds, 1, c).InitializeConditions()
	m := newManager(&conds, 7, c)
	m.MarkTrue("A", "Done", "")
	if got := m.Get("A").ObservedGeneration; got != 7 {
		t.Errorf("observedGeneration = %d, want 7", got)
	}
	if got := m.Get("Ready").ObservedGeneration; got != 7 {
		t.Errorf("Ready observedGeneration = %d, want 7", got)
	}
}

func TestMarkingReadyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("marking the derived condition must panic")
		}
	}()
	var conds []metav1.Condition
	NewSet("Ready", "A").Manage(&conds, 1).MarkTrue("Ready", "X", "")
}

func TestInformationalConditionsAreKept(t *testing.T) {
	var conds []metav1.Condition
	m := NewSet("Ready", "A").Manage(&conds, 1)
	m.MarkTrue("A", "Done", "")
	m.MarkFalse("Info", "Whatever", "does not count toward Ready")
	if !m.IsHappy() {
		t.Error("a condition outside the set must not affect Ready")
	}
	if m.Get("Info") == nil || conds[len(conds)-1].Type != "Info" {
		t.Errorf("informational condition must be kept, sorted last: %+v", conds)
	}
}

func TestRetainKeepsTheSetsOwn(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var conds []metav1.Condition
	m := newManager(&conds, 1, c)
	m.InitializeConditions()
	m.MarkTrue("Computed", "Checked", "")
	m.MarkTrue("Gone", "Checked", "")
	m.Retain(func(t string) bool { return t == "Computed" })
	var got []string
	for _, c := range conds {
		got = append(got, c.Type)
	}
	if want := []string{"A", "B", "Pressure", "Ready", "Computed"}; !slices.Equal(got, want) {
		t.Errorf("after Retain: %v, want %v", got, want)
	}
}

// A dependent nothing has marked yet lends Ready its reason only when no
// other dependent is Unknown, however recently it was added: an Unknown
// that was marked says what is going on.
func TestUnmarkedDependentsHaveNoNews(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var conds []metav1.Condition
	m := NewSet("Ready", "A").Manage(&conds, 1).WithClock(c.now)
	m.InitializeConditions()
	m.MarkUnknown("A", "Suspended", "nothing is written")
	c.t = c.t.Add(time.Minute)
	m = NewSet("Ready", "A", "B").Manage(&conds, 2).WithClock(c.now)
	m.InitializeConditions()
	if r := m.Get("Ready"); r.Status != metav1.ConditionUnknown || r.Reason != "Suspended" {
		t.Errorf("Ready with a dependent just added and unmarked: %+v, want the reason of the marked one", r)
	}
	m.MarkTrue("A", "Done", "")
	if r := m.Get("Ready"); r.Status != metav1.ConditionUnknown || r.Reason != ReasonPending {
		t.Errorf("Ready with only an unmarked dependent left: %+v, want Unknown, %s", r, ReasonPending)
	}
}

// A message longer than the API allows a condition is cut, after a whole
// line where it has lines, saying how much was left out; Ready borrows the
// cut one. The API server would refuse the whole status otherwise.
func TestLongMessagesFitTheAPI(t *testing.T) {
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("spec.resources[widget%d].template.kind: Not found: \"example.com/v1 Widget\"", i))
	}
	errs := strings.Join(lines, "\n")
	var conds []metav1.Condition
	m := newManager(&conds, 1, &clock{t: time.Now()})
	m.MarkFalse("A", "Invalid", "%s", errs)
	for _, typ := range []string{"A", "Ready"} {
		got := m.Get(typ).Message
		if len(got) > maxMessageLength {
			t.Fatalf("%s: %d bytes, over the API's %d", typ, len(got), maxMessageLength)
		}
		body, note, _ := strings.Cut(got, "\n… and ")
		kept := strings.Count(body, "\n") + 1
		if !strings.HasPrefix(errs, body+"\n") || note != fmt.Sprintf("%d more lines, left out to keep within 32768 bytes", 1000-kept) {
			t.Errorf("%s: %d lines kept, then %q", typ, kept, note)
		}
	}

	// One long line is cut where a character begins.
	long := strings.Repeat("é", maxMessageLength)
	got := fitMessage(long)
	if len(got) > maxMessageLength || !utf8.ValidString(got) || !strings.HasSuffix(got, " more bytes, left out to keep within 32768") {
		t.Errorf("a long line: %d bytes, valid UTF-8 %v, ending %q", len(got), utf8.ValidString(got), got[len(got)-80:])
	}
	if short := "all is well"; fitMessage(short) != short {
		t.Errorf("a short message changed: %q", fitMessage(short))
	}
}

// An Event's note is cut to what the events API takes, which refuses the
// whole Event otherwise: an RGD's dozen errors are past it already.
func TestEventNoteFitsTheEventsAPI(t *testing.T) {
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf("spec.resources[widget%d].template.kind: Not found: \"example.com/v1 Widget (is its CRD installed?)\"", i))
	}
	note := EventNote("GraphAccepted is False: " + strings.Join(lines, "\n") + "\n")
	if len(note) > 1024 {
		t.Fatalf("%d bytes, over the events API's 1024", len(note))
	}
	body, rest, _ := strings.Cut(note, "\n… and ")
	kept := strings.Count(body, "\n") + 1
	if want := fmt.Sprintf("%d more lines, left out to keep within 1024 bytes", 12-kept); rest != want || kept < 5 {
		t.Errorf("%d lines kept, then %q; want %q", kept, rest, want)
	}
	if short := " all is well\n"; EventNote(short) != "all is well" {
		t.Errorf("a short note: %q", EventNote(short))
	}
}
