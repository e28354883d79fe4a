package reconcile

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// waits are what a run of an instance ended waiting for that no event of
// the instance's own brings; its cluster's target follows each, and tries
// the instance again when it happens.
type waits struct {
	// namespaces are those resources could not be applied in because they
	// do not exist or are being deleted, or whose Pod Security level or
	// LimitRanges refused them.
	namespaces sets.Set[string]
	// holders are other owners' objects holding names the graph renders,
	// which the instance waits to be deleted.
	holders sets.Set[objectRef]
	// quotas are the ResourceQuotas that refused writes for want of room,
	// which the instance waits to change.
	quotas sets.Set[objectRef]
	// webhookServices are the Services of admission webhooks the API
	// server could not call, whose endpoints the instance waits to change.
	webhookServices sets.Set[objectRef]
}

// waiters records what each instance's last run waited for that no event
// of its own brings back (a namespace to be created, another owner's
// object to go), so that the instances waiting for a thing are tried
// again when it happens rather than at their next retry: after a few
// refusals the work queue's backoff waits minutes.
type waiters[T comparable] struct {
	mu sync.Mutex
	by map[InstanceKey]sets.Set[T]
}

// note records what an instance's run waited for; nothing forgets the
// instance.
func (w *waiters[T]) note(key InstanceKey, things sets.Set[T]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if things.Len() == 0 {
		delete(w.by, key)
		return
	}
	if w.by == nil {
		w.by = map[InstanceKey]sets.Set[T]{}
	}
	w.by[key] = things
}

// waitingFor returns the instances that wait for thing. They are not
// forgotten until their next run says what it waited for: a second change
// while an instance's retry runs (a quota's limit raised, then counted)
// must bring it back again, since that run may have been refused before
// the change.
func (w *waiters[T]) waitingFor(thing T) []InstanceKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keys []InstanceKey
	for key, things := range w.by {
		if things.Has(thing) {
			keys = append(keys, key)
		}
	}
	return keys
}

// all returns everything some instance waits for.
func (w *waiters[T]) all() sets.Set[T] {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := sets.New[T]()
	for _, things := range w.by {
		all = all.Union(things)
	}
	return all
}

// forgetKind forgets the instances of a kind the agent no longer serves.
func (w *waiters[T]) forgetKind(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key := range w.by {
		if key.GVK == gvk {
			delete(w.by, key)
		}
	}
}

// waitAlso adds thing to what a run waits for, making the set on first
// use: most runs wait for nothing and allocate nothing.
func waitAlso[T comparable](things sets.Set[T], thing T) sets.Set[T] {
	if things == nil {
		things = sets.New[T]()
	}
	return things.Insert(thing)
}
