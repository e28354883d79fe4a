package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// An instance refused for another owner's object is tried again when the
// object is deleted, or at once when it was deleted before the watch
// began; the watch ends when no instance waits for the object.
func TestHolderDeletionRetriesTheInstance(t *testing.T) {
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	client := fakeMetadata("ConfigMap", partialObject("ConfigMap", "ns", "taken"), partialObject("ConfigMap", "third", "kept"))
	retried := make(chan string, 4)
	w := newHolderWatches(client, func(k InstanceKey) { retried <- k.Name }, logr.Discard())
	defer w.stopAll()
	key := func(name string) InstanceKey {
		return InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Mood"}, Namespace: "ns", Name: name}
	}
	taken := objectRef{GVR: configmaps, Namespace: "ns", Name: "taken"}
	// The fake client does not select by field: the object deleted
	// early is in a namespace of its own.
	gone := objectRef{GVR: configmaps, Namespace: "elsewhere", Name: "gone"}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-retried:
			if got != want {
				t.Fatalf("retried %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not retried", want)
		}
	}

	w.note(key("late"), sets.New(gone))
	expect("late")
	w.note(key("patient"), sets.New(taken))
	select {
	case got := <-retried:
		t.Fatalf("%s retried while the object it waits for exists", got)
	case <-time.After(200 * time.Millisecond):
	}
	if err := client.Resource(configmaps).Namespace("ns").Delete(context.Background(), "taken", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("patient")
	w.note(key("patient"), nil)
	w.note(key("late"), nil)
	// Instances of a kind the agent stops serving wait no more.
	other := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Gone"}, Namespace: "ns", Name: "orphan"}
	w.note(other, sets.New(objectRef{GVR: configmaps, Namespace: "third", Name: "kept"}))
	w.forgetKind(other.GVK)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.watches) != 0 {
		t.Errorf("still watching %v with no instance waiting", w.watches)
	}
}

// An instance refused for another owner's object is tried again when the
// object's owner hands it over with kro.run/adopt-by, or takes that back;
// other changes to the object do not matter to it.
func TestHolderHandedOverRetriesTheInstance(t *testing.T) {
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := partialObject("ConfigMap", "ns", "taken")
	client := fakeMetadata("ConfigMap", cm)
	r := newRetries(t)
	w := newHolderWatches(client, r.retry, logr.Discard())
	defer w.stopAll()
	update := func(labels, annotations map[string]string) {
		t.Helper()
		cm.Labels, cm.Annotations = labels, annotations
		updateFake(t, client, configmaps, cm)
	}
	key := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Mood"}, Namespace: "ns", Name: "patient"}
	w.note(key, sets.New(objectRef{GVR: configmaps, Namespace: "ns", Name: "taken"}))
	r.quiet("while the object it waits for exists")
	update(map[string]string{"app": "x"}, nil)
	r.quiet("when the object's labels changed")
	update(map[string]string{"app": "x"}, map[string]string{v1alpha1.AnnotationAdoptBy: "ns/patient"})
	r.expect("when the object was handed over")
	update(map[string]string{"app": "x"}, map[string]string{v1alpha1.AnnotationAdoptBy: "ns/patient", "note": "y"})
	r.quiet("when another annotation changed")
	update(map[string]string{"app": "x"}, nil)
	r.expect("when the hand-over was taken back")
}

// An instance refused by a ResourceQuota is tried again once when the
// watch begins (the quota may have changed since the refusal) and then at
// each change of the quota, for as long as it waits, also before its
// retry has run; the watch outlives a change, so a refusal again waits on
// the next one.
func TestQuotaChangesRetryTheInstance(t *testing.T) {
	quotas := schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	q := partialObject("ResourceQuota", "ns", "team")
	client := fakeMetadata("ResourceQuota", q)
	r := newRetries(t)
	w := newQuotaWatches(client, r.retry, logr.Discard())
	defer w.stopAll()
	key := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Mood"}, Namespace: "ns", Name: "cramped"}
	team := objectRef{GVR: quotas, Namespace: "ns", Name: "team"}
	expect, quiet := r.expect, r.quiet
	change := func(label string) {
		t.Helper()
		q.Labels = map[string]string{"changed": label}
		updateFake(t, client, quotas, q)
	}

	w.note(key, sets.New(team))
	expect("when the watch began")
	quiet("with no change of the quota")
	// Refused again: waits on the next change, which the same watch sees.
	w.note(key, sets.New(team))
	quiet("with no change since")
	change("1")
	expect("when the quota changed")
	// Changed again before the retry's run said what it waited on (a
	// limit raised, then counted by the quota controller): that run may
	// have been refused before this change, so it is retried again.
	change("2")
	expect("when the quota changed again before the retry ran")
	w.note(key, sets.New(team))
	change("3")
	expect("when the quota changed after the retry was refused")
	// Applied at last: the watch ends.
	w.note(key, nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.watches) != 0 {
		t.Errorf("still watching %v with no instance waiting", w.watches)
	}
}

// retries records the instances an objectWatches tries again.
type retries struct {
	t       *testing.T
	retried chan string
}

func newRetries(t *testing.T) *retries { return &retries{t: t, retried: make(chan string, 4)} }

// retry is the objectWatches' retry.
func (r *retries) retry(k InstanceKey) { r.retried <- k.Name }

// expect fails the test unless an instance is tried again soon.
func (r *retries) expect(why string) {
	r.t.Helper()
	select {
	case <-r.retried:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("not retried %s", why)
	}
}

// quiet fails the test if an instance is tried again soon.
func (r *retries) quiet(why string) {
	r.t.Helper()
	select {
	case got := <-r.retried:
		r.t.Fatalf("%s retried %s", got, why)
	case <-time.After(300 * time.Millisecond):
	}
}

// fakeMetadata is a metadata client holding objects of one core kind.
func fakeMetadata(kind string, objects ...runtime.Object) *metadatafake.FakeMetadataClient {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: kind}, &metav1.PartialObjectMetadata{})
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: kind + "List"}, &metav1.PartialObjectMetadataList{})
	return metadatafake.NewSimpleMetadataClient(scheme, objects...)
}

// updateFake writes obj, an object of gvr, to the fake client as an update
// would, so that its watches see the change.
func updateFake(t *testing.T, client *metadatafake.FakeMetadataClient, gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata) {
	t.Helper()
	if _, err := client.Resource(gvr).Namespace(obj.Namespace).(metadatafake.MetadataClient).UpdateFake(obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// partialObject is the metadata of a core object.
func partialObject(kind, namespace, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
	}
}

// An instance refused because a webhook's Service had no endpoints is
// tried again once when the watch begins and then whenever an
// EndpointSlice of that Service comes or changes.
func TestWebhookServiceEndpointsRetryTheInstance(t *testing.T) {
	slices := discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), &metav1.PartialObjectMetadata{})
	scheme.AddKnownTypeWithName(discoveryv1.SchemeGroupVersion.WithKind("EndpointSliceList"), &metav1.PartialObjectMetadataList{})
	client := metadatafake.NewSimpleMetadataClient(scheme)
	slice := func(name, service string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "hooks", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		}
	}
	r := newRetries(t)
	w := newWebhookServiceWatches(client, r.retry, logr.Discard())
	defer w.stopAll()
	key := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Mood"}, Namespace: "ns", Name: "refused"}
	expect, quiet := r.expect, r.quiet
	ri := client.Resource(slices).Namespace("hooks").(metadatafake.MetadataClient)

	w.note(key, sets.New(objectRef{GVR: slices, Namespace: "hooks", Name: "hook"}))
	expect("when the watch began")
	quiet("with no endpoints")
	// The fake client does not select by label: that the watch asks for
	// the Service's slices alone is read from its request.
	watched := false
	for _, a := range client.Actions() {
		if a, ok := a.(clienttesting.WatchAction); ok {
			watched = true
			if got, want := a.GetWatchRestrictions().Labels.String(), discoveryv1.LabelServiceName+"=hook"; got != want {
				t.Errorf("watched EndpointSlices with label selector %q, want %q", got, want)
			}
		}
	}
	if !watched {
		t.Error("EndpointSlices were not watched")
	}
	s := slice("hook-x1", "hook")
	if _, err := ri.CreateFake(s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("when the Service's EndpointSlice was created")
	s.Annotations = map[string]string{"changed": "1"}
	if _, err := ri.UpdateFake(s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("when the Service's EndpointSlice changed")
	w.note(key, nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.watches) != 0 {
		t.Errorf("still watching %v with no instance waiting", w.watches)
	}
}
