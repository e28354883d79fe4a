package reconcile

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every index is called once, and never more than concurrentWrites at a
// time.
func TestConcurrentlyCallsEachIndexOnceWithinTheBound(t *testing.T) {
	const n = 100
	var mu sync.Mutex
	calls := map[int]int{}
	var inFlight, most atomic.Int32
	concurrently(n, func(i int) {
		now := inFlight.Add(1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
		mu.Lock()
		calls[i]++
		mu.Unlock()
	})
	for i := range n {
		if calls[i] != 1 {
			t.Errorf("index %d called %d times", i, calls[i])
		}
	}
	if m := most.Load(); m > concurrentWrites || m < 2 {
		t.Errorf("%d calls at once at most, want 2 to %d", m, concurrentWrites)
	}
}
