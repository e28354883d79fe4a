// Package conditions manages status conditions the way Knative's condition
// sets do: a set is declared once with its top-level condition (Ready) and
// the conditions it depends on; callers only mark facts, and the manager
// derives Ready from the dependents, keeps lastTransitionTime stable while
// a status does not change, and stamps observedGeneration on every condition.
//
// Conditions have positive polarity by default (True is good). A dependent
// may be declared Negative, as in DiskPressure, where True is the bad status.
package conditions

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons the manager writes on the top-level condition.
const (
	// ReasonReady is Ready's reason when every dependent is happy.
	ReasonReady = "Ready"
	// ReasonPending is a dependent's reason before anything marked it.
	ReasonPending = "Pending"
)

// Dependent is a condition the top-level condition depends on.
type Dependent struct {
	Type string
	// Negative means True is the unhappy status.
	Negative bool
}

// Set declares a top-level condition and its dependents.
type Set struct {
	happy      string
	dependents []Dependent
}

// NewSet declares happy (usually "Ready") over the given dependents, all of
// positive polarity.
func NewSet(happy string, dependents ...string) Set {
	s := Set{happy: happy}
	for _, d := range dependents {
		s.dependents = append(s.dependents, Dependent{Type: d})
	}
	return s
}

// With returns a copy of s with more dependents, for sets that vary per
// object (an RGD's custom instance conditions).
func (s Set) With(more ...Dependent) Set {
	return Set{happy: s.happy, dependents: append(slices.Clip(s.dependents), more...)}
}

// Happy is the type of the top-level condition.
func (s Set) Happy() string { return s.happy }

// Manage returns a manager for the conditions in *conds, of an object at
// generation. The manager edits *conds in place.
func (s Set) Manage(conds *[]metav1.Condition, generation int64) *Manager {
	return &Manager{set: s, conds: conds, generation: generation, now: time.Now}
}

// Manager edits one object's conditions.
type Manager struct {
	set        Set
	conds      *[]metav1.Condition
	generation int64
	now        func() time.Time
}

// WithClock makes the manager read time from now, for tests.
func (m *Manager) WithClock(now func() time.Time) *Manager {
	m.now = now
	return m
}

// InitializeConditions sets every dependent that has no condition yet, and
// the top-level one, to Unknown.
func (m *Manager) InitializeConditions() {
	for _, d := range m.set.dependents {
		if m.Get(d.Type) == nil {
			m.set0(d.Type, metav1.ConditionUnknown, ReasonPending, "")
		}
	}
	m.recompute()
}

// Get returns the condition of type t, or nil.
func (m *Manager) Get(t string) *metav1.Condition {
	return meta.FindStatusCondition(*m.conds, t)
}

// MarkTrue sets condition t to True.
func (m *Manager) MarkTrue(t, reason, messageFormat string, args ...any) {
	m.mark(t, metav1.ConditionTrue, reason, messageFormat, args...)
}

// MarkFalse sets condition t to False: intervention is needed.
func (m *Manager) MarkFalse(t, reason, messageFormat string, args ...any) {
	m.mark(t, metav1.ConditionFalse, reason, messageFormat, args...)
}

// MarkUnknown sets condition t to Unknown: work is in progress.
func (m *Manager) MarkUnknown(t, reason, messageFormat string, args ...any) {
	m.mark(t, metav1.ConditionUnknown, reason, messageFormat, args...)
}

// Retain removes every condition keep refuses, except the set's own, for
// objects whose other conditions come and go (an RGD's computed ones).
func (m *Manager) Retain(keep func(t string) bool) {
	*m.conds = slices.DeleteFunc(*m.conds, func(c metav1.Condition) bool {
		return !m.set.owns(c.Type) && !keep(c.Type)
	})
}

func (s Set) owns(t string) bool {
	return t == s.happy || slices.ContainsFunc(s.dependents, func(d Dependent) bool { return d.Type == t })
}

// KeepTransitionTimes gives each condition whose status is the one it has
// in written, the conditions as last written, the transition time it has
// there. It is for conditions marked again after a write of them failed:
// a status they went through in between was never written, so it was no
// transition anyone saw.
func (m *Manager) KeepTransitionTimes(written []metav1.Condition) {
	for i := range *m.conds {
		c := &(*m.conds)[i]
		if w := meta.FindStatusCondition(written, c.Type); w != nil && w.Status == c.Status {
			c.LastTransitionTime = w.LastTransitionTime
		}
	}
}

// IsHappy reports whether the top-level condition is True.
func (m *Manager) IsHappy() bool {
	c := m.Get(m.set.happy)
	return c != nil && c.Status == metav1.ConditionTrue
}

func (m *Manager) mark(t string, status metav1.ConditionStatus, reason, messageFormat string, args ...any) {
	if t == m.set.happy {
		// Ready is derived; marking it directly is a programming error
		// that would be overwritten at once.
		panic(fmt.Sprintf("conditions: %s is derived from its dependents and cannot be marked", t))
	}
	msg := messageFormat
	if len(args) > 0 {
		msg = fmt.Sprintf(messageFormat, args...)
	}
	m.set0(t, status, reason, msg)
	m.recompute()
}

// set0 writes one condition, moving lastTransitionTime only when the status
// changes.
func (m *Manager) set0(t string, status metav1.ConditionStatus, reason, msg string) {
	if reason == "" {
		reason = string(status)
	}
	c := metav1.Condition{Type: t, Status: status, Reason: reason, Message: fitMessage(msg), ObservedGeneration: m.generation}
	if old := m.Get(t); old != nil {
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != status {
			c.LastTransitionTime = metav1.NewTime(m.now().Truncate(time.Second))
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.NewTime(m.now().Truncate(time.Second))
	*m.conds = append(*m.conds, c)
	m.sort()
}

// recompute derives the top-level condition: False if any dependent is
// unhappy, else Unknown if any is Unknown or missing, else True. The
// unhappy (or unknown) dependent that changed last lends its reason and
// message, as it is the freshest news; a dependent nothing has marked yet
// has no news, so it lends them only when no other is Unknown (a
// suspended instance newly labelled with a region says it is suspended,
// not that its placement is pending).
func (m *Manager) recompute() {
	var worst *metav1.Condition
	worstRank := 0
	for _, d := range m.set.dependents {
		c := m.Get(d.Type)
		rank := 0
		switch {
		case c == nil || c.Status == metav1.ConditionUnknown && c.Reason == ReasonPending && c.Message == "":
			rank = 1
		case c.Status == metav1.ConditionUnknown:
			rank = 2
		case (c.Status == metav1.ConditionFalse) != d.Negative:
			rank = 3
		}
		if rank == 0 {
			continue
		}
		if c == nil {
			c = &metav1.Condition{Type: d.Type, Status: metav1.ConditionUnknown, Reason: ReasonPending}
		}
		if rank > worstRank || rank == worstRank && worst != nil && c.LastTransitionTime.After(worst.LastTransitionTime.Time) {
			worst, worstRank = c, rank
		}
	}
	switch worstRank {
	case 0:
		m.set0(m.set.happy, metav1.ConditionTrue, ReasonReady, "")
	case 1, 2:
		m.set0(m.set.happy, metav1.ConditionUnknown, worst.Reason, worst.Message)
	default:
		m.set0(m.set.happy, metav1.ConditionFalse, worst.Reason, worst.Message)
	}
}

// sort keeps the dependents in declaration order, then the top-level
// condition, then any others by type, so `kubectl get -o yaml` reads the
// same every time, and as kro's instances read: Ready after what it sums up.
func (m *Manager) sort() {
	order := map[string]int{m.set.happy: len(m.set.dependents)}
	for i, d := range m.set.dependents {
		order[d.Type] = i
	}
	rank := func(t string) int {
		if r, ok := order[t]; ok {
			return r
		}
		return len(order) + 1
	}
	slices.SortStableFunc(*m.conds, func(a, b metav1.Condition) int {
		if ra, rb := rank(a.Type), rank(b.Type); ra != rb {
			return ra - rb
		}
		if a.Type < b.Type {
			return -1
		}
		if a.Type > b.Type {
			return 1
		}
		return 0
	})
}

// maxMessageLength is the API's limit on a condition's message, in bytes
// (metav1.Condition): the API server refuses a status write with a longer
// one whole, which would leave every condition as it was.
const maxMessageLength = 32768

func fitMessage(msg string) string { return fit(msg, maxMessageLength) }

// fit cuts text to limit bytes, saying how much it left out. Text of many
// lines (an RGD's errors, one a line) is cut after a whole line.
func fit(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	// 100 bytes leave room for the note.
	cut := limit - 100
	for !utf8.RuneStart(text[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl >= cut/2 {
		left := strings.Count(strings.TrimSuffix(text[nl+1:], "\n"), "\n") + 1
		return fmt.Sprintf("%s\n… and %d more lines, left out to keep within %d bytes", text[:nl], left, limit)
	}
	return fmt.Sprintf("%s… and %d more bytes, left out to keep within %d", text[:cut], len(text)-cut, limit)
}
