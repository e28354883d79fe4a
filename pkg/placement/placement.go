// Package placement chooses the workload cluster an instance runs on.
//
// The choice is rendezvous (highest random weight) hashing of the instance
// against each candidate cluster: it depends only on the instance's identity
// and the candidates' names, so every replica and every restart makes the
// same choice; instances spread evenly over a region's clusters; and adding
// a cluster moves no instance that is already placed, since a placement,
// once recorded, is kept until its cluster is deleted.
package placement

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// Candidate is a cluster an instance may be placed on.
type Candidate struct {
	Name   string
	Region string
	// Ready and Paused gate new placements: only Ready, unpaused clusters
	// receive instances.
	Ready  bool
	Paused bool
}

// Decision is the outcome of Place.
type Decision struct {
	// Cluster is the chosen cluster, or "" when none can take the instance.
	Cluster string
	// Reason explains an empty Cluster for the instance's conditions.
	Reason string
}

// Place chooses a cluster of region for the instance identified by key
// (its UID). A current placement on a cluster that still exists is kept,
// Ready or not, even if the cluster's region changed: moving an instance
// would leave its resources behind.
func Place(key, region, current string, clusters []Candidate) Decision {
	if current != "" {
		for _, c := range clusters {
			if c.Name == current {
				return Decision{Cluster: current}
			}
		}
	}
	var best string
	var bestScore uint64
	for _, c := range clusters {
		if c.Region != region || !c.Ready || c.Paused {
			continue
		}
		if s := score(key, c.Name); best == "" || s > bestScore || (s == bestScore && c.Name < best) {
			best, bestScore = c.Name, s
		}
	}
	if best != "" {
		return Decision{Cluster: best}
	}
	return Decision{Reason: whyNone(region, clusters)}
}

func score(key, cluster string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(cluster))
	return mix(h.Sum64())
}

// mix is a 64-bit finalizer (from SplitMix64) so that keys differing in a
// few bytes still get independent scores.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// whyNone says why no cluster of region can take an instance, naming the
// clusters of the region that exist and the regions that do.
func whyNone(region string, clusters []Candidate) string {
	var inRegion []string
	regions := map[string]bool{}
	for _, c := range clusters {
		regions[c.Region] = true
		if c.Region != region {
			continue
		}
		switch {
		case c.Paused:
			inRegion = append(inRegion, c.Name+" (paused)")
		case !c.Ready:
			inRegion = append(inRegion, c.Name+" (not Ready)")
		}
	}
	if len(inRegion) > 0 {
		slices.Sort(inRegion)
		return fmt.Sprintf("no Ready, unpaused Cluster in region %q: %s", region, strings.Join(inRegion, ", "))
	}
	names := make([]string, 0, len(regions))
	for r := range regions {
		names = append(names, r)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return fmt.Sprintf("no Cluster is registered for region %q, and no Cluster exists; register one (kind Cluster, group agent.kro.run)", region)
	}
	return fmt.Sprintf("no Cluster is registered for region %q; regions with Clusters: %s", region, strings.Join(names, ", "))
}
