package kinds

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
)

// discoveryServer serves legacy discovery with example.net/v1 Gizmo while
// served is true, and OpenAPI v3 documents without it: a CRD either
// created moments ago or deleted moments ago. With emptySchema the OpenAPI
// root lists the group's document, which comes back empty, as the API
// server answers for a CRD being deleted.
func discoveryServer(t *testing.T, served *atomic.Bool, emptySchema ...bool) *httptest.Server {
	t.Helper()
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api":
			write(w, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		case "/api/v1":
			write(w, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1"})
		case "/apis":
			list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList"}}
			if served.Load() {
				gv := metav1.GroupVersionForDiscovery{GroupVersion: "example.net/v1", Version: "v1"}
				list.Groups = append(list.Groups, metav1.APIGroup{Name: "example.net", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
			}
			write(w, list)
		case "/apis/example.net/v1":
			if !served.Load() {
				http.NotFound(w, r)
				return
			}
			write(w, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "example.net/v1",
				APIResources: []metav1.APIResource{{Name: "gizmos", Kind: "Gizmo", Namespaced: true, Verbs: []string{"get", "list"}}}})
		case "/openapi/v3":
			paths := map[string]any{}
			if len(emptySchema) > 0 && emptySchema[0] {
				paths["apis/example.net/v1"] = map[string]any{"serverRelativeURL": "/openapi/v3/apis/example.net/v1?hash=0"}
			}
			write(w, map[string]any{"paths": paths})
		case "/openapi/v3/apis/example.net/v1":
			w.Header().Set("Content-Type", "application/json")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDiscoveryTellsUnpublishedFromDeleted(t *testing.T) {
	var served atomic.Bool
	served.Store(true)
	srv := discoveryServer(t, &served)
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	// cachedWhileServed is a discovery cache filled while Gizmo was
	// served, as kubectl's disk cache is by an earlier command.
	cachedWhileServed := func() discovery.CachedDiscoveryInterface {
		c := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL}))
		if _, err := c.ServerResourcesForGroupVersion("example.net/v1"); err != nil {
			t.Fatalf("filling the discovery cache: %v", err)
		}
		return c
	}

	// Served, schema not published yet: say so, it is worth a retry.
	_, err := NewDiscovery(cachedWhileServed()).Resolve(gizmo)
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "has not published its OpenAPI schema yet") {
		t.Fatalf("a kind served without a schema: %v", err)
	}

	// Deleted since the cache was filled: the cache is not believed over
	// the missing schema.
	cached := cachedWhileServed()
	served.Store(false)
	_, err = NewDiscovery(cached).Resolve(gizmo)
	if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "has not published") {
		t.Errorf("a kind deleted since discovery was cached: %v, want not found", err)
	}
}

// The OpenAPI document of a CRD being deleted comes back empty for a
// moment while discovery still lists its kind: worth a retry, and said as
// such rather than as an internal error; once discovery no longer lists
// it, it is not found.
func TestDiscoveryTellsAnUnreadableSchemaFromDeleted(t *testing.T) {
	var served atomic.Bool
	served.Store(true)
	srv := discoveryServer(t, &served, true)
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	d := NewDiscovery(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})))
	_, err := d.Resolve(gizmo)
	if !NotPublished(err) || !strings.Contains(err.Error(), "serves example.net/v1/Gizmo but its OpenAPI schema could not be read (unexpected end of JSON input)") {
		t.Fatalf("a kind served with an empty schema document: %v", err)
	}
	served.Store(false)
	if _, err := d.Resolve(gizmo); !errors.Is(err, ErrNotFound) || NotPublished(err) {
		t.Errorf("the kind once discovery no longer lists it: %v, want not found", err)
	}
}

// A kind the cluster does not serve is matched against what discovery
// lists: the same kind at another version, a kind of the group spelt
// nearly alike, or a group spelt nearly alike.
func TestDiscoverySuggestsWhatTheClusterServes(t *testing.T) {
	var served atomic.Bool
	served.Store(true)
	srv := discoveryServer(t, &served)
	d := NewDiscovery(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})))
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Group: "example.net", Version: "v1alpha1", Kind: "Gizmo"}, "the cluster serves Gizmo as apiVersion example.net/v1"},
		{schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gismo"}, "did you mean Gizmo, apiVersion example.net/v1?"},
		{schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Widget"}, ""},
		{schema.GroupVersionKind{Group: "exmaple.net", Version: "v1", Kind: "Gizmo"}, "the cluster serves no group exmaple.net: did you mean example.net?"},
		{schema.GroupVersionKind{Group: "other.org", Version: "v1", Kind: "Gizmo"}, ""},
	} {
		if _, err := d.Resolve(tc.gvk); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%v resolves: %v", tc.gvk, err)
		}
		if got := Suggest(Chain{d}, tc.gvk); got != tc.want {
			t.Errorf("Suggest(%v) = %q, want %q", tc.gvk, got, tc.want)
		}
	}
}

// gizmoDocument is the OpenAPI v3 document of example.net/v1 with Gizmo,
// whose spec has one property, field.
func gizmoDocument(field string) map[string]any {
	return map[string]any{"components": map[string]any{"schemas": map[string]any{
		"net.example.v1.Gizmo": map[string]any{
			"type":                            "object",
			"x-kubernetes-group-version-kind": []any{map[string]any{"group": "example.net", "version": "v1", "kind": "Gizmo"}},
			"properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{
				field: map[string]any{"type": "string"},
			}}},
		},
	}}}
}

// A kind is read again when its group-version's OpenAPI document changes,
// as when a CRD gains a field, and not while it stays the same; the index
// of documents is read at most once a second. A document taken down while
// the kind is served leaves the schema read before.
func TestDiscoveryReadsAChangedSchemaAgain(t *testing.T) {
	var served atomic.Bool
	served.Store(true)
	var field atomic.Value
	field.Store("size")
	var documents, indexes atomic.Int32
	inner := discoveryServer(t, &served)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/openapi/v3":
			indexes.Add(1)
			paths := map[string]any{}
			if f := field.Load().(string); f != "" { // "": taken down, as while the CRD is deleted
				paths["apis/example.net/v1"] = map[string]any{"serverRelativeURL": "/openapi/v3/apis/example.net/v1?hash=" + f}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"paths": paths})
		case "/openapi/v3/apis/example.net/v1":
			documents.Add(1)
			_ = json.NewEncoder(w).Encode(gizmoDocument(field.Load().(string)))
		default:
			http.Redirect(w, r, inner.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(srv.Close)
	d := NewDiscovery(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})))
	clock := time.Now()
	d.now = func() time.Time { return clock }
	d.dropLater = func(func()) {} // the index expires by the clock above alone
	gizmo := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	specFields := func() []string {
		t.Helper()
		info, err := d.Resolve(gizmo)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for name := range info.Schema.Properties["spec"].Properties {
			names = append(names, name)
		}
		return names
	}

	if got := specFields(); len(got) != 1 || got[0] != "size" {
		t.Fatalf("spec fields %v, want [size]", got)
	}
	clock = clock.Add(2 * indexMaxAge)
	if got := specFields(); got[0] != "size" || documents.Load() != 1 || indexes.Load() != 2 {
		t.Errorf("unchanged: spec fields %v, %d documents and %d indexes read, want [size], 1 and 2", got, documents.Load(), indexes.Load())
	}
	field.Store("colour")
	if got := specFields(); got[0] != "size" || indexes.Load() != 2 {
		t.Errorf("within a second of the last index: spec fields %v, %d indexes read, want the cached [size] and 2", got, indexes.Load())
	}
	clock = clock.Add(2 * indexMaxAge)
	if got := specFields(); got[0] != "colour" || documents.Load() != 2 {
		t.Errorf("changed: spec fields %v, %d documents read, want [colour] and 2", got, documents.Load())
	}
	// Served still, its document taken down: what was read stands.
	field.Store("")
	clock = clock.Add(2 * indexMaxAge)
	if got := specFields(); got[0] != "colour" {
		t.Errorf("document taken down: spec fields %v, want the cached [colour]", got)
	}
}

// The kinds of one group-version resolved while the index lives read its
// document once (the core group's is 1.6 MB, and an RGD uses several of its
// kinds); once the index expires, the document goes with it and is read
// again for the next kind.
func TestDiscoveryReadsADocumentOncePerIndex(t *testing.T) {
	var served atomic.Bool
	served.Store(true)
	inner := discoveryServer(t, &served)
	var documents atomic.Int32
	kind := func(name string) map[string]any {
		return map[string]any{"type": "object", "x-kubernetes-group-version-kind": []any{map[string]any{"group": "example.net", "version": "v1", "kind": name}}}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/example.net/v1":
			_ = json.NewEncoder(w).Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "example.net/v1",
				APIResources: []metav1.APIResource{{Name: "gizmos", Kind: "Gizmo", Namespaced: true}, {Name: "widgets", Kind: "Widget", Namespaced: true}, {Name: "sprockets", Kind: "Sprocket", Namespaced: true}}})
		case "/openapi/v3":
			_ = json.NewEncoder(w).Encode(map[string]any{"paths": map[string]any{"apis/example.net/v1": map[string]any{"serverRelativeURL": "/openapi/v3/apis/example.net/v1?hash=1"}}})
		case "/openapi/v3/apis/example.net/v1":
			documents.Add(1)
			_ = json.NewEncoder(w).Encode(map[string]any{"components": map[string]any{"schemas": map[string]any{
				"net.example.v1.Gizmo": kind("Gizmo"), "net.example.v1.Widget": kind("Widget"), "net.example.v1.Sprocket": kind("Sprocket"),
			}}})
		default:
			http.Redirect(w, r, inner.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(srv.Close)
	d := NewDiscovery(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})))
	var expire func()
	d.dropLater = func(drop func()) { expire = drop }
	resolve := func(kind string) {
		t.Helper()
		if _, err := d.Resolve(schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: kind}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	resolve("Gizmo")
	resolve("Widget")
	if n := documents.Load(); n != 1 {
		t.Errorf("two kinds of one document read it %d times, want once", n)
	}
	expire()
	if d.index != nil {
		t.Fatal("the expired index, and the documents read through it, are still held")
	}
	resolve("Sprocket")
	if n := documents.Load(); n != 2 {
		t.Errorf("a kind resolved after the index expired: the document read %d times in all, want twice", n)
	}
}
