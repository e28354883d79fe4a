package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kro-agent/kro-agent/pkg/jsonvalue"
)

func TestRecordApplyKeepsResultOnlyUntilTheInformerHasIt(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm"}
	out := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cm", "resourceVersion": "7"}}}
	notCached := func(objectRef) bool { return false }
	isCached := func(objectRef) bool { return true }

	for _, tc := range []struct {
		name        string
		created     bool
		cached      func(objectRef) bool
		eventAfter  bool
		wantPending bool
	}{
		{name: "created, informer not there yet", created: true, cached: notCached, wantPending: true},
		{name: "created, informer event after the record", created: true, cached: notCached, eventAfter: true},
		{name: "created, informer stored it before the record", created: true, cached: isCached},
		{name: "updated", created: false, cached: notCached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newAppliedCache()
			c.recordApply("inst", ref, [32]byte{1}, nil, out, tc.created, tc.cached)
			if tc.eventAfter {
				c.observed(ref, false, "")
			}
			r, ok := c.get(ref)
			if !ok {
				t.Fatal("no record after a successful apply")
			}
			if r.resourceVersion != "7" {
				t.Errorf("resourceVersion = %q, want 7", r.resourceVersion)
			}
			if got := r.pending != nil; got != tc.wantPending {
				t.Errorf("pending kept = %v, want %v", got, tc.wantPending)
			}
		})
	}
}

func TestEchoesOnlyOurOwnVersion(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm"}
	other := objectRef{GVR: ref.GVR, Namespace: "ns", Name: "other"}
	out := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cm", "resourceVersion": "7"}}}
	c := newAppliedCache()
	if c.observed(ref, false, "7") {
		t.Error("an object never applied echoes")
	}
	c.recordApply("inst", ref, [32]byte{1}, nil, out, true, func(objectRef) bool { return false })
	for _, tc := range []struct {
		ref  objectRef
		rv   string
		want bool
	}{
		{ref, "7", true},  // the informer catching up with our apply
		{ref, "8", false}, // someone else's write since (a status update, a hand edit)
		{ref, "", false},
		{other, "7", false},
	} {
		if got := c.observed(tc.ref, false, tc.rv); got != tc.want {
			t.Errorf("observed(%s, %q) echoes = %v, want %v", tc.ref.Name, tc.rv, got, tc.want)
		}
	}
	// A deletion is never an echo, and leaves the record a mark that the
	// object is gone, so that applying it again says it re-creates it; and
	// no version an event could echo.
	if c.observed(ref, true, "7") {
		t.Error("a deletion was taken for an echo")
	}
	if r, ok := c.get(ref); !ok || !r.gone || r.resourceVersion != "" {
		t.Errorf("the record after the object's deletion = %+v (found %v), want it marked gone, without a version", r, ok)
	}
	if c.observed(ref, false, "7") {
		t.Error("an event after the deletion echoes the version of before")
	}
	// The agent's own deletion (a prune) forgets it.
	c.drop(ref)
	if _, ok := c.get(ref); ok {
		t.Error("the record outlived the agent's own deletion")
	}
}

func TestStoredFieldsTellOthersChangesFromOurs(t *testing.T) {
	desired := map[string]any{
		"metadata": map[string]any{"name": "d"},
		"spec": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": "1000m"}}},
			}}},
		},
	}
	// What the API server returns: the quantity in its own form, defaults
	// and a status beside our fields.
	stored := func(cpu string, replicas int64, status string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "d", "resourceVersion": status, "generation": int64(1)},
			"spec": map[string]any{
				"replicas": replicas,
				"strategy": map[string]any{"type": "RollingUpdate"},
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": cpu}}},
				}}},
			},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "phase": status},
		}
	}
	applied := storedFields(stored("1", 2, "a"), desired)
	if applied == nil {
		t.Fatal("no stored form for an object that does not visibly hold the desired one")
	}
	for _, tc := range []struct {
		name string
		live map[string]any
		same bool
	}{
		{"a status update", stored("1", 2, "b"), true},
		{"our quantity changed", stored("2", 2, "a"), false},
		{"our replicas changed", stored("1", 3, "a"), false},
		{"our field removed", map[string]any{"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": int64(2)}}, false},
	} {
		if got := jsonvalue.Contains(tc.live, applied); got != tc.same {
			t.Errorf("%s: same stored form = %v, want %v", tc.name, got, tc.same)
		}
	}
	if d := storedFields(map[string]any{"metadata": map[string]any{"name": "d"}, "spec": desired["spec"]}, desired); d != nil {
		t.Error("a stored form kept for an object that holds the desired one as it is")
	}
}

// A Secret's stringData is applied as the data the API server would make
// of it; what cannot be folded is left for the API server to answer.
func TestFoldStringData(t *testing.T) {
	for _, tc := range []struct {
		name       string
		secret     string
		wantSecret string
	}{
		{"stringData alone", `{"stringData":{"user":"admin"}}`, `{"data":{"user":"YWRtaW4="}}`},
		{"a key in both takes stringData's value", `{"data":{"user":"b2xk","other":"eA=="},"stringData":{"user":"admin"}}`,
			`{"data":{"other":"eA==","user":"YWRtaW4="}}`},
		{"no stringData", `{"data":{"user":"b2xk"}}`, `{"data":{"user":"b2xk"}}`},
		{"a value that is not a string", `{"stringData":{"port":80}}`, `{"stringData":{"port":80}}`},
		{"data that is not a map", `{"data":"x","stringData":{"user":"admin"}}`, `{"data":"x","stringData":{"user":"admin"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var secret map[string]any
			if err := json.Unmarshal([]byte(tc.secret), &secret); err != nil {
				t.Fatal(err)
			}
			foldStringData(secret)
			if got, _ := json.Marshal(secret); string(got) != tc.wantSecret {
				t.Errorf("got %s, want %s", got, tc.wantSecret)
			}
		})
	}
}

// An apply over a copy the informer holds from before the agent's own last
// apply changes nothing, and is no restoration (nor an adoption): the
// object stays at the version that apply made, and the apply says it
// repeated that one. Only an apply that moves the object on, after
// someone changed a field the RGD sets, restores it, and says which.
func TestOnlyAnApplyThatChangesTheObjectRestoresIt(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespace: "ns", Name: "shop"}
	desired := map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "shop", "namespace": "ns", "labels": map[string]any{"app": "billing"}}}
	// The informer's copy, without the label the agent's last apply (at
	// version 296) added.
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "shop", "namespace": "ns", "resourceVersion": "290"}}}
	for _, tc := range []struct {
		name       string
		answeredRV string
		want       drift
	}{
		{"the informer behind the agent's last apply", "296", drift{repeated: true}},
		{"someone took the label off since", "300", drift{field: "metadata.labels.app"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPatch {
					http.Error(rw, "only the apply is expected", http.StatusMethodNotAllowed)
					return
				}
				rw.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(rw, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"shop","namespace":"ns","resourceVersion":%q,"labels":{"app":"billing"}}}`, tc.answeredRV)
			}))
			defer server.Close()
			e := &Engine{applied: newAppliedCache()}
			target := &target{client: dynamic.NewForConfigOrDie(&rest.Config{Host: server.URL}), managed: &managedInformers{}}
			body, _ := json.Marshal(desired)
			e.applied.put("inst", ref, sha256.Sum256(body), "296", nil, nil)

			_, got, err := e.applyIfChanged(context.Background(), target, "inst", ref, desired, live.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("drift undone = %+v, want %+v", got, tc.want)
			}
			r, _ := e.applied.get(ref)
			if wantRepairs := map[bool]int{false: 0, true: 1}[tc.want.field != ""]; r.contest.repairs != wantRepairs {
				t.Errorf("restorations counted = %d, want %d", r.contest.repairs, wantRepairs)
			}
		})
	}
}

// An object adopted by a new instance of the name is the new one's to
// forget: the earlier instance's forgetting leaves it, the new one's does not.
func TestAdoptedRecordsAreForgottenWithTheirNewInstance(t *testing.T) {
	ref := objectRef{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm"}
	c := newAppliedCache()
	c.put("earlier", ref, [32]byte{1}, "7", nil, nil)
	c.put("new", ref, [32]byte{2}, "8", nil, nil)
	c.forget("earlier")
	if _, ok := c.get(ref); !ok {
		t.Fatal("forgetting the earlier instance dropped the record of the object the new one adopted")
	}
	c.forget("new")
	if _, ok := c.get(ref); ok {
		t.Error("forgetting the new instance kept the record of the object it adopted")
	}
}
