// Package clusters holds kro-agent's view of the registered workload
// clusters: how to connect to one from its kubeconfig Secret, how to check
// that it answers, and the Registry the Cluster reconciler keeps and the
// instance engine places and connects by.
package clusters

import (
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kro-agent/kro-agent/pkg/placement"
)

// Entry is one registered cluster as last checked.
type Entry struct {
	Name   string
	Region string
	Paused bool
	// Ready is the Cluster's Ready condition; Message says why not.
	Ready   bool
	Message string
	// Reachable says the API server answered the check.
	Reachable bool
	// Config connects to the cluster; nil until a kubeconfig was loaded.
	Config *rest.Config
	// ConfigDigest identifies the kubeconfig Config came from, so that
	// connections are rebuilt when the Secret changes.
	ConfigDigest string
}

// Registry is the set of registered clusters. It is safe for concurrent use.
//
// It is complete once every Cluster that existed when the agent started has
// been checked: before that, a cluster it lacks may be one not checked yet,
// and taking it for one that is gone would leave the resources of the
// instances placed there behind.
type Registry struct {
	mu       sync.RWMutex
	clusters map[string]Entry
	watchers []func(name string)
	// listed is set once the Clusters that exist are known (Expect);
	// unchecked are those of them not set or deleted since.
	listed    bool
	unchecked map[string]bool

	// recheckers are told of the clusters to check again at once
	// (Answered); recheckAsked is when that was last asked of each, and
	// on what a request found.
	recheckers   []func(name string, answered bool)
	recheckAsked map[string]recheck
	now          func() time.Time
}

type recheck struct {
	at       time.Time
	answered bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{clusters: map[string]Entry{}, unchecked: map[string]bool{},
		recheckAsked: map[string]recheck{}, now: time.Now}
}

// Watch calls f, outside the registry's lock, with the name of every
// cluster that is set with a change, or deleted, and with "" once the
// registry is complete.
func (r *Registry) Watch(f func(name string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers = append(r.watchers, f)
}

// Expect records the Clusters that exist, as listed when the agent
// starts: the registry is complete once each of them has been set or
// deleted.
func (r *Registry) Expect(names []string) {
	r.mu.Lock()
	if r.listed {
		r.mu.Unlock()
		return
	}
	r.listed = true
	for _, name := range names {
		if _, checked := r.clusters[name]; !checked {
			r.unchecked[name] = true
		}
	}
	// Not complete before: nothing was listed.
	r.notifyLocked(r.completeLocked())
}

// Complete tells whether every Cluster that existed when the agent
// started has been checked since, so that a cluster the registry lacks is
// one that is not registered.
func (r *Registry) Complete() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.completeLocked()
}

func (r *Registry) completeLocked() bool {
	return r.listed && len(r.unchecked) == 0
}

// checkedLocked takes name off the clusters not checked yet, and tells
// whether that completed the registry.
func (r *Registry) checkedLocked(name string) bool {
	was := r.completeLocked()
	delete(r.unchecked, name)
	return !was && r.completeLocked()
}

// notifyLocked unlocks the registry and tells the watchers of names, and
// of "" when complete.
func (r *Registry) notifyLocked(complete bool, names ...string) {
	watchers := slices.Clone(r.watchers)
	r.mu.Unlock()
	if complete {
		names = append(names, "")
	}
	for _, name := range names {
		for _, f := range watchers {
			f(name)
		}
	}
}

// Set records a cluster, telling the watchers if anything changed.
func (r *Registry) Set(e Entry) {
	r.mu.Lock()
	old, had := r.clusters[e.Name]
	r.clusters[e.Name] = e
	complete := r.checkedLocked(e.Name)
	if had && old.Region == e.Region && old.Paused == e.Paused && old.Ready == e.Ready &&
		old.Reachable == e.Reachable && old.Message == e.Message && old.ConfigDigest == e.ConfigDigest {
		r.notifyLocked(complete)
		return
	}
	r.notifyLocked(complete, e.Name)
}

// Delete forgets a cluster.
func (r *Registry) Delete(name string) {
	r.mu.Lock()
	_, had := r.clusters[name]
	delete(r.clusters, name)
	delete(r.recheckAsked, name)
	complete := r.checkedLocked(name)
	if !had {
		r.notifyLocked(complete)
		return
	}
	r.notifyLocked(complete, name)
}

// Get returns a registered cluster.
func (r *Registry) Get(name string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.clusters[name]
	return e, ok
}

// Candidates lists every registered cluster for placement.
func (r *Registry) Candidates() []placement.Candidate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]placement.Candidate, 0, len(r.clusters))
	for _, e := range r.clusters {
		out = append(out, placement.Candidate{Name: e.Name, Region: e.Region, Ready: e.Ready, Paused: e.Paused})
	}
	return out
}

// recheckSpacing is the least time between two checks of one cluster asked
// for by Answered on the same finding: a cluster some of whose requests
// fail while its checks pass is checked no more often than that. One
// that stops and is back within it is checked on both.
const recheckSpacing = 10 * time.Second

// OnRecheck calls f, outside the registry's lock, with the name of each
// cluster to check again at once and what its request found (Answered).
func (r *Registry) OnRecheck(f func(name string, answered bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recheckers = append(r.recheckers, f)
}

// Answered records what a request to the named cluster found: whether its
// API server answered. When that contradicts the cluster's last check,
// the cluster is checked again at once rather than at its next interval:
// one that stops answering is not Ready within seconds, while nothing
// else might look at it for a minute, and one that comes back is Ready
// again as soon as the agent's watches, retrying, reach it. A cluster
// whose kubeconfig did not load has no connections to tell of it.
func (r *Registry) Answered(name string, answered bool) {
	r.mu.RLock()
	e, ok := r.clusters[name]
	r.mu.RUnlock()
	if !ok || e.Config == nil || e.Reachable == answered {
		return
	}
	r.mu.Lock()
	now := r.now()
	if last, asked := r.recheckAsked[name]; asked && last.answered == answered && now.Sub(last.at) < recheckSpacing {
		r.mu.Unlock()
		return
	}
	r.recheckAsked[name] = recheck{at: now, answered: answered}
	recheckers := slices.Clone(r.recheckers)
	r.mu.Unlock()
	for _, f := range recheckers {
		f(name, answered)
	}
}
