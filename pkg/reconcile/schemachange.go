package reconcile

import (
	"iter"
	"maps"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// schemaPublishWait bounds how long a graph whose CRDs changed waits for
// the API server to publish their new schemas. It does so a moment after
// the change; a change that leaves the schema of the version a graph uses
// as it was (another version added, a printer column) publishes nothing
// new for it, and after this the graph is compiled again all the same.
const schemaPublishWait = 10 * time.Second

// schemaPublishGiveUp bounds how long a graph compiled after
// schemaPublishWait against the schemas of before goes on looking for the
// new ones: an API server under load may publish them later than that,
// and a graph checked against the old schema would otherwise stay as it
// was (its RGD invalid for a field it lacked, or a default missing) until
// its RGD changes.
const schemaPublishGiveUp = 2 * time.Minute

// schemaPollEvery is how often a graph waiting for a new schema looks.
const schemaPollEvery = time.Second

// schemaChanges remembers, for each RGD's last compile, the kinds it
// resolved and which of their CRDs changed since: an operator's upgrade
// may add a field, give one a default or change its type under a graph
// that was checked against the schema of before, and the graph must be
// compiled again against the new one, with its RGD unchanged.
type schemaChanges struct {
	mu sync.Mutex
	// used are the kinds each RGD's last compile resolved, as resolved.
	used map[string]map[schema.GroupVersionKind]*kinds.Info
	// changed are, for each RGD, the CRDs of those kinds that changed
	// since, and when.
	changed map[string]map[schema.GroupResource]time.Time
	// compiledAt is when each RGD was last compiled.
	compiledAt map[string]time.Time
	// polling are the RGDs an awaitPublish runs for.
	polling map[string]bool
}

func newSchemaChanges() *schemaChanges {
	return &schemaChanges{
		used:       map[string]map[schema.GroupVersionKind]*kinds.Info{},
		changed:    map[string]map[schema.GroupResource]time.Time{},
		compiledAt: map[string]time.Time{},
		polling:    map[string]bool{},
	}
}

// compiled records the kinds an RGD's compile resolved, successful or
// not: an RGD invalid against a CRD is compiled again when it changes. A
// changed CRD whose kinds the compile still found with the schemas of
// before is waited for still, until schemaPublishGiveUp: the compile came
// before the new ones were published, and another must follow it.
func (s *schemaChanges) compiled(rgdName string, used map[schema.GroupVersionKind]*kinds.Info, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.used[rgdName]
	s.used[rgdName] = used
	s.compiledAt[rgdName] = now
	for gr, since := range s.changed[rgdName] {
		if now.Sub(since) >= schemaPublishGiveUp || !sameSchemas(gr, before, used) {
			delete(s.changed[rgdName], gr)
		}
	}
	if len(s.changed[rgdName]) == 0 {
		delete(s.changed, rgdName)
	}
}

// sameSchemas tells whether the kinds of gr in before are all in now, with
// the same schemas.
func sameSchemas(gr schema.GroupResource, before, now map[schema.GroupVersionKind]*kinds.Info) bool {
	for gvk, info := range kindsOf(gr, before) {
		current, ok := now[gvk]
		if !ok || !sameSchema(current, info) {
			return false
		}
	}
	return true
}

// kindsOf yields the kinds of used that the resource gr serves.
func kindsOf(gr schema.GroupResource, used map[schema.GroupVersionKind]*kinds.Info) iter.Seq2[schema.GroupVersionKind, *kinds.Info] {
	return func(yield func(schema.GroupVersionKind, *kinds.Info) bool) {
		for gvk, info := range used {
			if info.GVR().GroupResource() == gr && !yield(gvk, info) {
				return
			}
		}
	}
}

// uses tells whether used holds a kind the resource gr serves.
func uses(gr schema.GroupResource, used map[schema.GroupVersionKind]*kinds.Info) bool {
	for range kindsOf(gr, used) {
		return true
	}
	return false
}

// sameSchema compares two resolutions of a kind by their schemas' content:
// a resolver that forgot what it had cached reads the same document again
// into a new schema.
func sameSchema(a, b *kinds.Info) bool {
	return a.Schema == b.Schema || reflect.DeepEqual(a.Schema, b.Schema)
}

// crdChanged records that the CRD serving gr changed at now, and names the
// RGDs whose last compile resolved one of its kinds.
func (s *schemaChanges) crdChanged(gr schema.GroupResource, now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rgds []string
	for name, used := range s.used {
		if !uses(gr, used) {
			continue
		}
		if s.changed[name] == nil {
			s.changed[name] = map[schema.GroupResource]time.Time{}
		}
		if _, seen := s.changed[name][gr]; !seen {
			s.changed[name][gr] = now
		}
		rgds = append(rgds, name)
	}
	return rgds
}

// pending tells whether a CRD of an RGD's kinds changed since its last
// compile (stale) and, if so, how soon to look again (wait) because every
// such kind still resolves to the schema that compile used: its new one is
// not published yet. wait 0 with stale means compile again now. After
// schemaPublishWait the graph is compiled once with the schemas there are;
// compiled so, it is not stale until the new ones are published.
func (s *schemaChanges) pending(rgdName string, resolver kinds.Resolver, now time.Time) (stale bool, wait time.Duration) {
	s.mu.Lock()
	// A copy: compiled deletes from the RGD's map of changes, and this
	// reads it without the lock (resolving a kind may ask the API server).
	// used is replaced whole, never changed.
	changed, used, compiledAt := maps.Clone(s.changed[rgdName]), s.used[rgdName], s.compiledAt[rgdName]
	s.mu.Unlock()
	for gr, since := range changed {
		if now.Sub(since) >= schemaPublishGiveUp {
			continue
		}
		if published(gr, used, resolver) {
			return true, 0
		}
		switch {
		case now.Sub(since) < schemaPublishWait:
			stale, wait = true, schemaPollEvery
		case compiledAt.Before(since.Add(schemaPublishWait)):
			// Waited long enough: compile with what there is.
			return true, 0
		}
	}
	return stale, wait
}

// published tells whether a kind of gr in used resolves to another schema
// now (or no longer resolves, which the compile reports).
func published(gr schema.GroupResource, used map[schema.GroupVersionKind]*kinds.Info, resolver kinds.Resolver) bool {
	for gvk, info := range kindsOf(gr, used) {
		current, err := resolver.Resolve(gvk)
		if err != nil || !sameSchema(current, info) {
			return true
		}
	}
	return false
}

// awaiting tells whether a changed CRD of an RGD's kinds has not been
// compiled against since its new schema was published, and is still
// looked for.
func (s *schemaChanges) awaiting(rgdName string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, since := range s.changed[rgdName] {
		if now.Sub(since) < schemaPublishGiveUp {
			return true
		}
	}
	return false
}

// awaitPublish looks every schemaPollEvery, while a changed CRD of the
// RGD's kinds is awaited, for a reason to compile its graph again: the new
// schema published, or schemaPublishWait over. It tells stale once for
// each compile, and returns when nothing is awaited any more. One runs per
// RGD at a time.
func (s *schemaChanges) awaitPublish(rgdName string, resolver func() kinds.Resolver, stale func()) {
	s.mu.Lock()
	if s.polling[rgdName] {
		s.mu.Unlock()
		return
	}
	s.polling[rgdName] = true
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.polling, rgdName)
			s.mu.Unlock()
		}()
		// The compile stale was last told after, and when: told again
		// only if no compile followed for a while.
		var toldAfter, toldAt time.Time
		for {
			time.Sleep(schemaPollEvery)
			now := time.Now()
			if !s.awaiting(rgdName, now) {
				return
			}
			s.mu.Lock()
			compiledAt := s.compiledAt[rgdName]
			s.mu.Unlock()
			if compiledAt.Equal(toldAfter) && now.Sub(toldAt) < schemaPublishWait {
				continue
			}
			if isStale, wait := s.pending(rgdName, resolver(), now); isStale && wait == 0 {
				toldAfter, toldAt = compiledAt, now
				stale()
			}
		}
	}()
}

// forget drops what is remembered of an RGD.
func (s *schemaChanges) forget(rgdName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.used, rgdName)
	delete(s.changed, rgdName)
	delete(s.compiledAt, rgdName)
}
