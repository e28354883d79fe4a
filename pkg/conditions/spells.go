package conditions

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Spells remembers the objects whose top-level condition has been False
// since it was last True. A status write knows only the conditions it
// replaces, so a recovery that passes through Unknown on its way back (a fix
// applied, then waited for) looks to Newsworthy like a healthy rollout; with
// Spells it is told as the end of the trouble it is. Only memory: a spell
// under way when the process restarts ends untold. K identifies an object
// for as long as it lives: an instance's UID, an RGD's name.
type Spells[K comparable] struct {
	mu      sync.Mutex
	unhappy map[K]bool
}

// Ended notes the top-level condition of the object id as it was before
// a status write (prev) and as written (next), and reports whether next
// ends a spell: True after being False since it was last True. Noting prev
// as well knows a spell begun before the process started, or by a write
// it did not see.
func (s *Spells[K]) Ended(id K, prev, next *metav1.Condition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note(id, prev)
	return s.note(id, next)
}

// note notes the top-level condition top of the object id, and reports
// whether it ends a spell.
func (s *Spells[K]) note(id K, top *metav1.Condition) bool {
	if top == nil {
		return false
	}
	switch top.Status {
	case metav1.ConditionFalse:
		if s.unhappy == nil {
			s.unhappy = map[K]bool{}
		}
		s.unhappy[id] = true
	case metav1.ConditionTrue:
		if s.unhappy[id] {
			delete(s.unhappy, id)
			return true
		}
	}
	return false
}

// Forget drops what is remembered of an object that is gone.
func (s *Spells[K]) Forget(id K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.unhappy, id)
}
