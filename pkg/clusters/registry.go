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
type Registry struct {
	mu       sync.RWMutex
	clusters map[string]Entry
	watchers []func(name string)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{clusters: map[string]Entry{}}
}

// Watch calls f, outside the registry's lock, with the name of every
// cluster that is set with a change, or deleted.
func (r *Registry) Watch(f func(name string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers = append(r.watchers, f)
}

// Set records a cluster, telling the watchers if anything changed.
func (r *Registry) Set(e Entry) {
	r.mu.Lock()
	old, had := r.clusters[e.Name]
	r.clusters[e.Name] = e
	watchers := slices.Clone(r.watchers)
	r.mu.Unlock()
	if had && old.Region == e.Region && old.Paused == e.Paused && old.Ready == e.Ready &&
		old.Message == e.Message && old.ConfigDigest == e.ConfigDigest {
		return
	}
	for _, f := range watchers {
		f(e.Name)
	}
}

// Delete forgets a cluster.
func (r *Registry) Delete(name string) {
	r.mu.Lock()
	_, had := r.clusters[name]
	delete(r.clusters, name)
	watchers := slices.Clone(r.watchers)
	r.mu.Unlock()
	if !had {
		return
	}
	for _, f := range watchers {
		f(name)
	}
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
