package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

func TestStatusMemoEchoOfOwnWrite(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": "u-1", "resourceVersion": "10"}}}
	var memo statusMemo
	memo.wrote(inst, map[string]any{"state": "IN_PROGRESS"}, at(inst, "11", nil))
	cached := func(rv string) func() (*heldObject, error) {
		return func() (*heldObject, error) {
			return &heldObject{meta: metav1.ObjectMeta{UID: "u-1", ResourceVersion: rv}}, nil
		}
	}

	if memo.echoed("u-1", "12") {
		t.Error("an update past our write was taken for its echo")
	}
	if memo.echoed("u-2", "11") {
		t.Error("another instance's update was taken for the echo")
	}
	// A cache still at the version the write was based on reads the status written.
	if _, written, _ := memo.read(cached("10")); written == nil || written.status["state"] != "IN_PROGRESS" {
		t.Errorf("stale cache reads %+v, want the written IN_PROGRESS", written)
	}
	if !memo.echoed("u-1", "11") {
		t.Fatal("the update at the version our write produced is not its echo")
	}
	// Once echoed, the write is forgotten: the memo holds writes in flight only.
	if memo.echoed("u-1", "11") {
		t.Error("an echo was recognised twice")
	}
	if _, written, _ := memo.read(cached("10")); written != nil {
		t.Errorf("a forgotten write still replaces the cached status: %v", written)
	}
}

// The informer updates its store and then delivers the update, whose echo
// forgets the write. Were the echo let in between a read of the store and
// the look into the memo, a reconcile would see neither the write nor the
// store's new version, and write the same status again.
func TestStatusMemoReadKeepsEchoesOut(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": "u-1", "resourceVersion": "10"}}}
	var memo statusMemo
	memo.wrote(inst, map[string]any{"state": "ACTIVE"}, at(inst, "11", nil))
	echoed := make(chan bool)
	_, written, _ := memo.read(func() (*heldObject, error) {
		go func() { echoed <- memo.echoed("u-1", "11") }()
		select {
		case <-echoed:
			t.Error("the echo was taken while the store was being read")
		case <-time.After(50 * time.Millisecond):
		}
		return &heldObject{meta: metav1.ObjectMeta{UID: "u-1", ResourceVersion: "10"}}, nil
	})
	if written == nil || written.status["state"] != "ACTIVE" {
		t.Errorf("read %+v, want the written ACTIVE", written)
	}
	if !<-echoed {
		t.Error("the echo, once let in, was not recognised")
	}
}

// at is inst as the API server answers a status write with: at version
// rv, and changed by change, when set, as someone else's write in between.
func at(inst *unstructured.Unstructured, rv string, change func(*unstructured.Unstructured)) *unstructured.Unstructured {
	out := inst.DeepCopy()
	out.SetResourceVersion(rv)
	out.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kro-agent", Subresource: "status"}})
	if change != nil {
		change(out)
	}
	return out
}

// A run that reads an instance whose cache has not caught up with the
// agent's own status writes takes the version they produced, so that its
// writes conditional on the version (the finalizer's removal) do not
// conflict with them; but not when someone else's change came in between.
func TestStatusMemoGivesTheVersionItsWritesProduced(t *testing.T) {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"uid": "u-1", "resourceVersion": "10", "finalizers": []any{"kro.run/finalizer"}},
		"spec":     map[string]any{"size": int64(1)},
	}}
	var memo statusMemo
	cached := func(rv string) func() (*heldObject, error) {
		return func() (*heldObject, error) {
			return &heldObject{meta: metav1.ObjectMeta{UID: "u-1", ResourceVersion: rv}}, nil
		}
	}
	if v := memo.wrote(inst, map[string]any{"state": "DELETING"}, at(inst, "11", nil)); v != "11" {
		t.Errorf("a write that changed only the status leaves the instance at %q, want 11", v)
	}
	_, written, _ := memo.read(cached("10"))
	if written == nil || written.version != "11" {
		t.Fatalf("a cache at 10 reads %+v, want version 11", written)
	}
	// The next run writes over 11 what the cache still shows as 10: both
	// read the last status written, at the version it produced.
	inst.SetResourceVersion(written.version)
	if v := memo.wrote(inst, map[string]any{"state": "DELETING", "n": 2}, at(inst, "12", nil)); v != "12" {
		t.Errorf("the second write leaves the instance at %q, want 12", v)
	}
	for _, rv := range []string{"10", "11"} {
		if _, w, _ := memo.read(cached(rv)); w == nil || w.version != "12" || fmt.Sprint(w.status["n"]) != "2" {
			t.Errorf("a cache at %s reads %+v, want the second write at 12", rv, w)
		}
	}
	// Someone added a finalizer before the agent's write: the run keeps
	// the version it read, and its conditional writes fail until the
	// cache shows that change.
	inst.SetResourceVersion("12")
	added := at(inst, "14", func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"kro.run/finalizer", "example.com/hold"})
	})
	if v := memo.wrote(inst, map[string]any{"state": "DELETING", "n": 3}, added); v != "12" {
		t.Errorf("a write over someone else's change leaves the instance at %q, want 12", v)
	}
	if _, w, _ := memo.read(cached("10")); w == nil || w.version != "12" || fmt.Sprint(w.status["n"]) != "3" {
		t.Errorf("a cache at 10 reads %+v, want the third write at 12", w)
	}
}

func TestStatusPatchNullsWhatIsGoneAtEveryLevel(t *testing.T) {
	old := map[string]any{"state": "ACTIVE", "gone": "x", "first": map[string]any{"name": "s-dune", "count": 1}, "all": []any{"a", "b"}}
	next := map[string]any{"state": "ACTIVE", "first": map[string]any{"count": 0}, "all": []any{"a"}}
	got, err := statusPatch(asJSON(t, old), asJSON(t, next))
	if err != nil {
		t.Fatal(err)
	}
	var patch map[string]any
	if err := json.Unmarshal(got, &patch); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": map[string]any{"gone": nil, "first": map[string]any{"name": nil, "count": 0.0}, "all": []any{"a"}}}
	if !reflect.DeepEqual(patch, want) {
		t.Errorf("patch = %s, want %v", got, want)
	}
	if got, err := statusPatch(asJSON(t, map[string]any(nil)), asJSON(t, map[string]any{"state": "IN_PROGRESS"})); err != nil || string(got) != `{"status":{"state":"IN_PROGRESS"}}` {
		t.Errorf("patch of a first status = %s, %v", got, err)
	}
}

func asJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A held instance (its RGD's graph not known) has its conditions told in
// Events like any other: without a graph, no condition is of negative
// polarity. It used to panic on the missing graph.
func TestHeldInstanceTransitionsAreTold(t *testing.T) {
	inst := &unstructured.Unstructured{}
	inst.SetName("n3")
	r := &run{e: &Engine{}, inst: inst}
	var st v1alpha1.InstanceStatus
	st.Manage(v1alpha1.InstanceConditions, 1)
	st.MarkHeld("notes", v1alpha1.ConditionKindReady, false)
	st.ComputeState(false, false)
	r.recordTransitions(nil, &st)
	if !r.told[meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady).Message] {
		t.Errorf("Ready turning False was not told; told %v", r.told)
	}
}

// While part of the graph waits, GraphResolved, and so Ready, names what
// waits on what and why; once every resource is rendered the graph is
// resolved, and Ready tells what is not ready from ResourcesReady.
func TestConditionsNameWhatTheGraphWaitsFor(t *testing.T) {
	platform, config, app := &graph.Node{ID: "platform"}, &graph.Node{ID: "config"}, &graph.Node{ID: "app"}
	for _, tc := range []struct {
		name                string
		run                 func(r *run)
		graphStatus         metav1.ConditionStatus
		graphMessage, ready string
	}{
		{"a dependency not ready", func(r *run) {
			r.waitExternal(platform, "platform: external ConfigMap default/settings does not exist yet", true)
			r.unreached, r.waits.node, r.waits.dependency = map[string]bool{"app": true}, "app", "platform"
		}, metav1.ConditionUnknown,
			"app waits for platform: external ConfigMap default/settings does not exist yet",
			"app waits for platform: external ConfigMap default/settings does not exist yet"},
		{"a dependency being deleted", func(r *run) {
			r.deleting = "ConfigMap default/c (resource config) is being deleted"
			r.noteWhy(config, "config: "+r.deleting) // as applyOne notes it
			r.unreached, r.waits.node, r.waits.dependency = map[string]bool{"app": true}, "app", "config"
		}, metav1.ConditionUnknown,
			"app waits for config: ConfigMap default/c (resource config) is being deleted",
			"app waits for config: ConfigMap default/c (resource config) is being deleted"},
		{"a dependency not ready for a reason not recorded", func(r *run) {
			r.unreached, r.waits.node, r.waits.dependency = map[string]bool{"app": true}, "app", "config"
		}, metav1.ConditionUnknown, "app waits for config to be ready", "app waits for config to be ready"},
		{"the last resource not ready", func(r *run) {
			r.noteNotReady(app, "app (Deployment web): 1 of 2 replicas available")
		}, metav1.ConditionTrue, "runtime graph created and all resources resolved", "app (Deployment web): 1 of 2 replicas available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{}
			tc.run(r)
			var st v1alpha1.InstanceStatus
			st.Manage(v1alpha1.InstanceConditions, 1)
			st.MarkManaged()
			r.markProgress(&st)
			g := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionGraphResolved)
			if g.Status != tc.graphStatus || g.Message != tc.graphMessage {
				t.Errorf("GraphResolved = %s %q, want %s %q", g.Status, g.Message, tc.graphStatus, tc.graphMessage)
			}
			if ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); ready.Message != tc.ready {
				t.Errorf("Ready says %q, want %q", ready.Message, tc.ready)
			}
		})
	}
}

// A status the API server stored without fields the kind's schema has
// (the CRD just changed to add them, its new schema not in use yet) is
// told apart from fields the schema prunes for good, which are not
// written again and again.
func TestDroppedFieldsAreThoseTheSchemaKeeps(t *testing.T) {
	preserve := true
	schema := &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
		"state": {Type: "string"},
		"size":  {Type: "integer"},
		"endpoint": {Type: "object", Properties: map[string]extv1.JSONSchemaProps{
			"url": {Type: "string"}, "port": {Type: "integer"},
		}},
		"ports":  {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{"name": {Type: "string"}}}}},
		"labels": {Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Schema: &extv1.JSONSchemaProps{Type: "string"}}},
		"free":   {XPreserveUnknownFields: &preserve},
	}}
	written := map[string]any{
		"state":    "ACTIVE",
		"size":     int64(3),
		"endpoint": map[string]any{"url": "http://x", "port": int64(80)},
		"ports":    []any{map[string]any{"name": "http", "extra": "pruned for good"}},
		"labels":   map[string]any{"a": "b"},
		"free":     map[string]any{"anything": map[string]any{"deep": true}},
		"unknown":  "pruned for good",
		"gone":     nil,
	}
	stored := map[string]any{
		"state":    "ACTIVE",
		"endpoint": map[string]any{"url": "http://x"},
		"ports":    []any{map[string]any{"name": "http"}},
		"labels":   map[string]any{},
		"free":     map[string]any{"anything": map[string]any{}},
	}
	got := droppedFields("status", written, stored, schema)
	want := []string{"status.endpoint.port", "status.free.anything.deep", "status.labels.a", "status.size"}
	if !slices.Equal(got, want) {
		t.Errorf("droppedFields = %v, want %v", got, want)
	}
	if got := droppedFields("status", written, written, schema); len(got) != 0 {
		t.Errorf("droppedFields of a status stored whole = %v", got)
	}
	msg := (&statusNotStoredError{kind: "Outer", fields: want[3:]}).Error()
	if !strings.Contains(msg, "did not store status.size of the status written: the schema it uses for Outer does not have them yet") {
		t.Errorf("message %q", msg)
	}
}

// A status refused for its size names the largest fields the RGD
// projects, their sizes and the API server's words, and stays a lasting
// refusal for the retries' pace.
func TestStatusTooLargeNamesTheLargestFields(t *testing.T) {
	refused := fmt.Errorf("writing status: %w", &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 500, Message: "etcdserver: request is too large"}})
	err := newStatusTooLargeError(map[string]any{
		"small":  "x",
		"config": strings.Repeat("c", 900<<10),
		"dump":   map[string]any{"log": strings.Repeat("d", 700<<10)},
		"names":  []any{"a", "b"},
		"count":  int64(3),
	}, refused)
	want := "the status fields come to 1.6 MiB (config 900 KiB, dump 700 KiB, names 9 bytes and 2 more), " +
		"more than the API server stores with the instance (etcdserver: request is too large); they are left out until they fit"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	if !refusedUntilChange(err) {
		t.Error("a status too large is retried as an error the next try may get past")
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 700 << 10: "700 KiB", 3 << 19: "1.5 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// A status refused as too large is known again only for the same fields
// and the same generation of the same instance, and forgotten once one is
// written.
func TestOversizedStatusesAreKnownForTheSameFieldsAndGeneration(t *testing.T) {
	var o oversizedStatuses
	fields := map[string]any{"a": "x", "b": map[string]any{"c": int64(1)}}
	refusal := newStatusTooLargeError(fields, errors.New("etcdserver: request is too large"))
	if err := o.refused("u-1", 1, fields); err != nil {
		t.Errorf("nothing refused yet, got %v", err)
	}
	o.remember("u-1", 1, fields, refusal)
	if err := o.refused("u-1", 1, map[string]any{"b": map[string]any{"c": 1}, "a": "x"}); err != refusal {
		t.Errorf("the same fields: %v, want the refusal", err)
	}
	for what, err := range map[string]*statusTooLargeError{
		"other fields":     o.refused("u-1", 1, map[string]any{"a": "y"}),
		"other generation": o.refused("u-1", 2, fields),
		"other instance":   o.refused("u-2", 1, fields),
	} {
		if err != nil {
			t.Errorf("%s: %v, want none", what, err)
		}
	}
	o.forget("u-1")
	if err := o.refused("u-1", 1, fields); err != nil {
		t.Errorf("forgotten, got %v", err)
	}
}

// A status refused for size is told in an Event when the instance itself
// is too large to take it; with fields the RGD projects, writeProjected
// tells it in the status instead, and other server errors are not told.
func TestStatusTooLargeWithoutFieldsIsTold(t *testing.T) {
	tooLarge := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: "etcdserver: request is too large"}}
	timedOut := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: "etcdserver: request timed out"}}
	for _, tc := range []struct {
		what   string
		err    error
		fields map[string]any
		told   string
	}{
		{"no fields", tooLarge, nil, "writing status: the instance is larger than the API server stores with its status (etcdserver: request is too large); it keeps the status it has until its spec is made smaller"},
		{"fields left out", tooLarge, map[string]any{}, "writing status: the instance is larger than the API server stores with its status (etcdserver: request is too large); it keeps the status it has until its spec is made smaller"},
		{"fields to blame", tooLarge, map[string]any{"a": "x"}, ""},
		{"another server error", timedOut, nil, ""},
	} {
		inst := &unstructured.Unstructured{}
		inst.SetUID("u-1")
		r := &run{e: &Engine{}, s: &served{}, inst: inst}
		if err := r.statusRefused(tc.err, tc.fields); !errors.Is(err, tc.err) {
			t.Errorf("%s: returned %v, not the refusal", tc.what, err)
		}
		var told []string
		for m := range r.told {
			told = append(told, m)
		}
		var want []string
		if tc.told != "" {
			want = []string{tc.told}
		}
		if !slices.Equal(told, want) {
			t.Errorf("%s: told %q, want %q", tc.what, told, want)
		}
	}
}
