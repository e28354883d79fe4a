package conditions

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// News is a change of condition worth an Event: one that turned unhappy
// (Warning), or the top-level condition back to True.
type News struct {
	metav1.Condition
	Warning bool
}

// EventType is the type of the news's Event: Warning or Normal.
func (n News) EventType() string {
	if n.Warning {
		return "Warning"
	}
	return "Normal"
}

// Note is what an Event of the news says: "GraphAccepted is False: ...".
func (n News) Note() string {
	note := n.Type + " is " + string(n.Status)
	if n.Message != "" {
		note += ": " + n.Message
	}
	return note
}

// noteLimit is the events API's limit on an Event's note, in bytes: it
// refuses a longer one, and with it the Event.
const noteLimit = 1024

// EventNote is note as the events API takes it: trimmed, and cut to its
// limit as a condition's message is cut to its own. A dozen of an RGD's
// errors pass it, and every Event of a condition carries the message.
func EventNote(note string) string {
	return fit(strings.TrimSpace(note), noteLimit)
}

// Newsworthy returns the changes from prev to next worth telling: each
// condition that turned unhappy (False, or True where negative says True
// is the unhappy status of that type) or, unhappy, changed its reason, and
// the top-level condition happy back to True after being False: in prev,
// or, as spellEnded says, at some write since it was last True (Spells).
// The steps of a healthy rollout are left to the conditions themselves. A
// message is told once: the top-level condition repeats the reason and
// message of the dependent that turned it, so it is told only when no
// dependent told that.
func Newsworthy(prev, next []metav1.Condition, happy string, negative func(conditionType string) bool, spellEnded bool) []News {
	var news []News
	told := map[string]bool{}
	tell := func(c metav1.Condition, warning bool) {
		if told[c.Message] {
			return
		}
		told[c.Message] = true
		news = append(news, News{Condition: c, Warning: warning})
	}
	changed := func(c metav1.Condition) (was *metav1.Condition, ok bool) {
		i := slices.IndexFunc(prev, func(p metav1.Condition) bool { return p.Type == c.Type })
		if i < 0 {
			return nil, true
		}
		return &prev[i], prev[i].Status != c.Status
	}
	var top *metav1.Condition
	for i, c := range next {
		if c.Type == happy {
			top = &next[i]
			continue
		}
		unhappy := c.Status == metav1.ConditionFalse
		if negative != nil && negative(c.Type) {
			unhappy = c.Status == metav1.ConditionTrue
		}
		// Unhappy for another reason is another problem, also news.
		if was, ok := changed(c); unhappy && (ok || was.Reason != c.Reason) {
			tell(c, true)
		}
	}
	if top != nil {
		if was, ok := changed(*top); ok {
			switch {
			case top.Status == metav1.ConditionFalse:
				tell(*top, true)
			case top.Status == metav1.ConditionTrue && was != nil && (was.Status == metav1.ConditionFalse || spellEnded):
				tell(*top, false)
			}
		}
	}
	return news
}
