package placement

import (
	"fmt"
	"strings"
	"testing"
)

func ready(name, region string) Candidate { return Candidate{Name: name, Region: region, Ready: true} }

func TestPlaceIsDeterministicAndOrderIndependent(t *testing.T) {
	a := []Candidate{ready("a", "eu"), ready("b", "eu"), ready("c", "eu")}
	b := []Candidate{a[2], a[0], a[1]}
	for i := range 100 {
		key := fmt.Sprintf("uid-%d", i)
		if x, y := Place(key, "eu", "", a), Place(key, "eu", "", b); x != y || x.Cluster == "" {
			t.Fatalf("%s: %v vs %v", key, x, y)
		}
	}
}

func TestPlaceSpreadsAcrossTheRegion(t *testing.T) {
	clusters := []Candidate{ready("a", "eu"), ready("b", "eu"), ready("c", "eu"), ready("x", "us")}
	counts := map[string]int{}
	for i := range 3000 {
		counts[Place(fmt.Sprintf("%08x-uid", i), "eu", "", clusters).Cluster]++
	}
	if counts["x"] != 0 || len(counts) != 3 {
		t.Fatalf("placed outside the region or not on all clusters: %v", counts)
	}
	for name, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("cluster %s got %d of 3000 instances; want about 1000", name, n)
		}
	}
}

func TestAddingAClusterMovesOnlyToIt(t *testing.T) {
	before := []Candidate{ready("a", "eu"), ready("b", "eu")}
	after := append(before, ready("c", "eu"))
	for i := range 500 {
		key := fmt.Sprintf("uid-%d", i)
		x, y := Place(key, "eu", "", before).Cluster, Place(key, "eu", "", after).Cluster
		if x != y && y != "c" {
			t.Fatalf("%s moved from %s to %s", key, x, y)
		}
	}
}

func TestCurrentPlacementIsKept(t *testing.T) {
	clusters := []Candidate{{Name: "a", Region: "eu"}, ready("b", "eu")}
	if got := Place("k", "eu", "a", clusters); got.Cluster != "a" {
		t.Errorf("a placement on a cluster that is not Ready moved: %v", got)
	}
	if got := Place("k", "eu", "gone", clusters); got.Cluster != "b" {
		t.Errorf("a placement on a deleted cluster was not replaced: %v", got)
	}
	if got := Place("k", "us", "b", clusters); got.Cluster != "b" {
		t.Errorf("a placement moved when its cluster's region changed: %v", got)
	}
}

func TestNoClusterSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		clusters []Candidate
		want     string
	}{
		{nil, `no Cluster is registered for region "eu", and no Cluster exists`},
		{[]Candidate{ready("u", "us"), ready("v", "ap")}, `no Cluster is registered for region "eu"; regions with Clusters: ap, us`},
		{[]Candidate{{Name: "p", Region: "eu", Ready: true, Paused: true}, {Name: "d", Region: "eu"}}, `no Ready, unpaused Cluster in region "eu": d (not Ready), p (paused)`},
	} {
		got := Place("k", "eu", "", tc.clusters)
		if got.Cluster != "" || !strings.Contains(got.Reason, tc.want) {
			t.Errorf("Place = %+v, want reason containing %q", got, tc.want)
		}
	}
}
