package plugin

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A tree of a graph where config feeds a deployment and a collection, and
// a service hangs off the instance alone, drawn as tree(1) would.
func TestTreeDrawsBranchesAndTheirContinuations(t *testing.T) {
	index := func(i int) *int { return &i }
	tree := &Tree{
		Instance: Row{Kind: "WebApp", Name: "demo", Namespace: "default", Ready: VerdictReady},
		Rows: []Row{
			{NodeID: "config", Depth: 1, Kind: "ConfigMap", Name: "demo-config", Namespace: "default", Ready: VerdictReady, place: []int{0}},
			{NodeID: "deployment", Depth: 2, Kind: "Deployment", Name: "demo", Namespace: "default", Ready: VerdictReady, place: []int{0, 1}},
			{NodeID: "pods", Depth: 3, Kind: "PodMonitor", Name: "demo", Namespace: "default", Ready: VerdictReady, place: []int{0, 1, 2}},
			{NodeID: "shards", Depth: 2, Index: index(0), Kind: "ConfigMap", Name: "demo-0", Namespace: "default", Ready: VerdictReady, place: []int{0, 3, -1, 0}},
			{NodeID: "shards", Depth: 2, Index: index(1), Kind: "ConfigMap", Name: "demo-1", Namespace: "default", Ready: VerdictReady, place: []int{0, 3, -1, 1}},
			{NodeID: "service", Depth: 1, Kind: "Service", Name: "demo", Namespace: "default", Ready: VerdictMissing, place: []int{4}},
		},
	}
	want := []string{
		"├─ config",
		"│  ├─ deployment",
		"│  │  └─ pods",
		"│  └─ shards",
		"│     ├─ shards[0]",
		"│     └─ shards[1]",
		"└─ service",
	}
	checkDrawn(t, tree, want)
}

// checkDrawn draws tree and checks the branches and node ids of its rows
// below the instance's; it returns the text of those rows.
func checkDrawn(t *testing.T, tree *Tree, want []string) []string {
	t.Helper()
	var out bytes.Buffer
	printTree(&out, tree, &subject{}, newPalette(&out, "never"), time.Now())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")[2:]
	node := regexp.MustCompile(`^[│ ]*[├└]─ \S+`)
	var nodes []string
	for _, line := range lines {
		nodes = append(nodes, node.FindString(line))
	}
	if strings.Join(nodes, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree drawn as\n%s\nwant\n%s\n(all of it:\n%s)", strings.Join(nodes, "\n"), strings.Join(want, "\n"), out.String())
	}
	return lines
}

// What depends on a collection is drawn under the collection's own row,
// beside its items, not under the last item; an item's nested instance
// stays under that item.
func TestDependentsOfACollectionNestUnderIt(t *testing.T) {
	index := func(i int) *int { return &i }
	tree := &Tree{
		Instance: Row{Kind: "Org", Name: "one", Namespace: "default", Ready: VerdictReady},
		Rows: []Row{
			{NodeID: "cms", Depth: 1, Index: index(0), Kind: "Tenant", Name: "a", Namespace: "default", Ready: VerdictReady, place: []int{0, -1, 0}},
			{NodeID: "cms", Depth: 1, Index: index(1), Kind: "Tenant", Name: "b", Namespace: "default", Ready: VerdictNotReady, Reason: "IN_PROGRESS", place: []int{0, -1, 1}},
			{NodeID: "cms[1]/ns", Depth: 2, Kind: "Namespace", Name: "b", Ready: VerdictReady, place: []int{0, -1, 1, -2, 0}},
			{NodeID: "cms", Depth: 1, Index: index(2), Kind: "Tenant", Name: "c", Namespace: "other", Ready: VerdictMissing, place: []int{0, -1, 2}},
			{NodeID: "sec", Depth: 2, Kind: "Secret", Name: "s", Namespace: "default", Ready: VerdictReady, place: []int{0, 1}},
		},
	}
	lines := checkDrawn(t, tree, []string{
		"└─ cms",
		"   ├─ cms[0]",
		"   ├─ cms[1]",
		"   │  └─ ns",
		"   ├─ cms[2]",
		"   └─ sec",
	})
	head := strings.Fields(lines[0])
	if got := strings.Join(head[1:], " "); got != "cms Tenant ×3 - NotReady - 1 of 3 ready -" {
		t.Errorf("the collection's row reads %q", got)
	}
}

func TestBranchesOfAFlatList(t *testing.T) {
	got := branches([]Row{{Depth: 1}, {Depth: 1}, {Depth: 1}})
	if want := []string{"├─ ", "├─ ", "└─ "}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("branches = %q, want %q", got, want)
	}
	if got := branches(nil); len(got) != 0 {
		t.Errorf("branches of no rows = %q", got)
	}
}

// What a released instance left is drawn flat, in the order it was
// created: a collection's items keep their index but get no row of their
// own collection, which would nest what follows under it and count as
// not ready items that no readyWhen judges any more.
func TestReleasedItemsAreDrawnFlat(t *testing.T) {
	index := func(i int) *int { return &i }
	rows := []Row{
		{NodeID: "cells", Index: index(0), Kind: "ConfigMap", Name: "m1-a", Ready: VerdictUnknown},
		{NodeID: "cells", Index: index(1), Kind: "ConfigMap", Name: "m1-b", Ready: VerdictUnknown},
		{NodeID: "summary", Kind: "ConfigMap", Name: "m1-summary", Ready: VerdictUnknown},
	}
	for i := range rows {
		rows[i].Depth = 1
	}
	sortByCreation(rows)
	checkDrawn(t, &Tree{Instance: Row{Kind: "Mix", Name: "m1"}, ReleasedFrom: "mix", Rows: rows}, []string{
		"├─ cells[0]",
		"├─ cells[1]",
		"└─ summary",
	})
}

// tree -o name lists the instance and what it manages as kubectl get -o
// name does, and leaves out what is not the instance's to hand to kubectl
// delete: an object it only reads, someone else's object in its way, and
// what does not exist.
func TestTreeNamesAreWhatTheInstanceManages(t *testing.T) {
	obj := func(apiVersion, kind, name string) *unstructured.Unstructured {
		return namedObject(apiVersion, kind, "", name)
	}
	tree := &Tree{
		Instance: Row{Kind: "WebApp", Name: "shop", Ready: VerdictReady, object: obj("kro.run/v1alpha1", "WebApp", "shop")},
		Rows: []Row{
			{NodeID: "shared", Kind: "ConfigMap", Name: "platform", Ready: VerdictExternal, object: obj("v1", "ConfigMap", "platform")},
			{NodeID: "config", Kind: "ConfigMap", Name: "shop-config", Ready: VerdictReady, object: obj("v1", "ConfigMap", "shop-config")},
			{NodeID: "deployment", Kind: "Deployment", Name: "shop", Ready: VerdictNotReady, object: obj("apps/v1", "Deployment", "shop")},
			{NodeID: "service", Kind: "Service", Name: "shop", Ready: VerdictConflict, object: obj("v1", "Service", "shop")},
			{NodeID: "ingress", Kind: "Ingress", Ready: VerdictMissing},
			{NodeID: "old", Kind: "Secret", Name: "shop-old", Ready: VerdictStale, object: obj("v1", "Secret", "shop-old")},
		},
	}
	var b strings.Builder
	printTreeNames(&b, tree)
	want := "webapp.kro.run/shop\nconfigmap/shop-config\ndeployment.apps/shop\nsecret/shop-old\n"
	if b.String() != want {
		t.Errorf("names\n got: %q\nwant: %q", b.String(), want)
	}
}

// namedObject is an object of kind, named, with nothing else set.
func namedObject(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
