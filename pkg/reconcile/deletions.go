package reconcile

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// deletionTTL is how long a deletion is remembered while the informer
// has not shown it: far longer than an informer takes to deliver one,
// even relisting after its watch broke. An informer stopped meanwhile
// never delivers it; the record then goes with the next sweep.
const deletionTTL = 5 * time.Minute

// deletions are the objects, by UID, that the agent deleted (or found
// gone) and that the informers may still hold, as they do until the
// watch delivers the delete. A pass in that moment sees them still there:
// told of them, it does not delete them again, a request bound to find
// them gone (hundreds, for a collection that shrank by hundreds). A UID
// names one object for good, so what is recorded stays true: the object
// is gone, or being deleted, and never comes back.
//
// Its zero value is ready to use, on the real clock.
type deletions struct {
	// clock is the real one when nil.
	clock clock.PassiveClock

	mu    sync.Mutex
	at    map[types.UID]time.Time
	swept time.Time
}

func (d *deletions) now() time.Time {
	if d.clock == nil {
		return time.Now()
	}
	return d.clock.Now()
}

// deleted records that the object uid is deleted.
func (d *deletions) deleted(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if d.at == nil {
		d.at, d.swept = map[types.UID]time.Time{}, now
	}
	d.at[uid] = now
	if now.Sub(d.swept) > deletionTTL {
		for u, t := range d.at {
			if now.Sub(t) > deletionTTL {
				delete(d.at, u)
			}
		}
		d.swept = now
	}
}

// seen forgets the object uid: the informer has delivered its delete.
func (d *deletions) seen(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, uid)
}

// pending tells whether the object uid was deleted and the informer has
// not shown it gone yet.
func (d *deletions) pending(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.at[uid]
	return ok && d.now().Sub(t) <= deletionTTL
}
