// Package clusters holds kro-agent's view of the registered workload
// clusters: how to connect to one from its kubeconfig Secret, how to check
// that it answers, and the Registry the Cluster reconciler keeps and the
// instance engine places and connects by.
package clusters

import (
	"slices"
	"sync"

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
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{clusters: map[string]Entry{}, unchecked: map[string]bool{}}
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
		old.Message == e.Message && old.ConfigDigest == e.ConfigDigest {
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
