package reconcile

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What an externalRef read routes changes of that object to its instance
// until the reference is not read any more, the instance is gone, or its
// kind is no longer served.
func TestExternalReadsRouteChangesUntilForgotten(t *testing.T) {
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	apps := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "App"}
	dbs := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Database"}
	web := InstanceKey{GVK: apps, Namespace: "shop", Name: "web"}
	api := InstanceKey{GVK: apps, Namespace: "shop", Name: "api"}
	db := InstanceKey{GVK: dbs, Namespace: "shop", Name: "db"}

	var woken []InstanceKey
	w := &externalWatches{enqueue: func(k InstanceKey) { woken = append(woken, k) },
		byGVR: map[schema.GroupVersionResource]*watched{secrets: {}}, // no informer started
		reads: map[schema.GroupVersionResource]map[externalReader]externalRead{}}
	read := externalRead{namespace: "shop", name: "creds"}
	for _, k := range []InstanceKey{web, api, db} {
		w.read(secrets, externalReader{instance: k, node: "creds"}, read)
	}
	creds := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "creds"}}
	changed := func() []InstanceKey {
		woken = nil
		w.changed(secrets, creds)
		slices.SortFunc(woken, func(a, b InstanceKey) int { return strings.Compare(a.String(), b.String()) })
		return woken
	}

	if got := changed(); !slices.Equal(got, []InstanceKey{api, web, db}) {
		t.Fatalf("woken %v, want every reader", got)
	}
	woken = nil
	if w.changed(secrets, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other"}}); len(woken) != 0 {
		t.Errorf("a Secret nobody read woke %v", woken)
	}
	w.unread(secrets, externalReader{instance: web, node: "creds"})
	if got := changed(); !slices.Equal(got, []InstanceKey{api, db}) {
		t.Errorf("after web stopped reading: woken %v", got)
	}
	w.forgetKind(apps)
	if got := changed(); !slices.Equal(got, []InstanceKey{db}) {
		t.Errorf("after Apps were no longer served: woken %v", got)
	}
	w.forget(db)
	if got := changed(); len(got) != 0 {
		t.Errorf("after db was gone: woken %v", got)
	}
}

// An object that stops matching a selector (a label of it removed) reaches
// the instances that read it through the selector, as one that starts to
// does: an update is matched as it was and as it is.
func TestExternalSelectorReadersSeeObjectsLeave(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	team := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Team"}, Namespace: "shop", Name: "blue"}
	var woken []InstanceKey
	w := &externalWatches{enqueue: func(k InstanceKey) { woken = append(woken, k) },
		byGVR: map[schema.GroupVersionResource]*watched{configMaps: {}}, // no informer started
		reads: map[schema.GroupVersionResource]map[externalReader]externalRead{}}
	w.read(configMaps, externalReader{instance: team, node: "members"}, externalRead{selector: labels.SelectorFromSet(labels.Set{"team": "blue"})})
	member := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "alpha", Labels: map[string]string{"team": "blue"}}}
	left := member.DeepCopy()
	left.Labels = nil

	if w.changed(configMaps, left); len(woken) != 0 {
		t.Errorf("an object the selector never matched woke %v", woken)
	}
	if w.changed(configMaps, member, left); !slices.Equal(woken, []InstanceKey{team}) {
		t.Errorf("an object that stopped matching woke %v, want %v", woken, team)
	}
	woken = nil
	if w.changed(configMaps, left, member); !slices.Equal(woken, []InstanceKey{team}) {
		t.Errorf("an object that came to match woke %v, want %v", woken, team)
	}
}

// A workload cluster whose watches could not be made (follow failed) is
// stopped all the same when the connection is given up.
func TestATargetWhoseWatchesWereNotMadeStops(t *testing.T) {
	unfollowed := &target{cluster: "eu-west-1", managed: &managedInformers{}}
	unfollowed.stopInformers()
}
