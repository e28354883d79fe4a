package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// A change of admission configuration retries the instances whose last
// run had a write the API server refused: not those it did not answer,
// nor those admitted since. Each change retries them until their next run
// says how it ended, so a change while a retry runs is not lost.
func TestAdmissionChangesRetryRefusedInstances(t *testing.T) {
	var retried []string
	// Nothing here is watched: no client.
	a := newAdmissionWatch(nil, func(k InstanceKey) { retried = append(retried, k.Name) }, logr.Discard())
	key := func(name string) InstanceKey {
		return InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Mood"}, Namespace: "ns", Name: name}
	}
	denied := fmt.Errorf("applying ConfigMap sulky (resource config) in the local cluster: %w",
		apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "sulky", errors.New("ValidatingAdmissionPolicy 'p' with binding 'b' denied request")))
	unreachable := fmt.Errorf("applying ConfigMap far: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")})

	a.note(key("sulky"), denied)
	a.note(key("far"), unreachable)
	a.note(key("fine"), nil)
	a.note(key("mended"), denied)
	a.note(key("mended"), nil)
	vap := schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}
	a.changed(vap, "p")
	if !slices.Equal(retried, []string{"sulky"}) {
		t.Errorf("retried %v, want [sulky]", retried)
	}
	retried = nil
	a.changed(vap, "p")
	if !slices.Equal(retried, []string{"sulky"}) {
		t.Errorf("a second change before sulky's next run retried %v, want [sulky]", retried)
	}
	retried = nil
	a.note(key("sulky"), nil)
	var observed []string
	a.observe = func(gr schema.GroupResource, name string) { observed = append(observed, gr.String()+"/"+name) }
	a.changed(vap, "p")
	if len(retried) != 0 {
		t.Errorf("a change after sulky was admitted retried %v", retried)
	}
	// The agent's own cluster also tells its webhook registration.
	if want := []string{"validatingadmissionpolicies.admissionregistration.k8s.io/p"}; !slices.Equal(observed, want) {
		t.Errorf("observed %v, want %v", observed, want)
	}
	var none *admissionWatch
	none.note(key("sulky"), denied) // a target without the watch
	none.stopWatching()
}

// A refusal to list admission configuration (no permission, or a
// resource the cluster does not serve) is told once in the log, and the
// watch keeps trying: an API server that has just restarted refuses every
// list until its RBAC caches fill, and a watch that stopped then would be
// lost for as long as the agent runs. Once allowed it follows again, and
// says so once.
func TestAdmissionWatchOutlastsRefusals(t *testing.T) {
	var mu sync.Mutex
	lists := map[string]int{}
	const refusedLists = 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Query().Get("watch") != "true" {
			lists[r.URL.Path]++
		}
		refused := lists[r.URL.Path] <= refusedLists
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		resource := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		switch {
		case refused:
			// Policies are forbidden to the agent; the other kinds are
			// not served, as by an API server still reading its CRDs.
			status := apierrors.NewNotFound(schema.GroupResource{}, "").Status()
			if resource == "validatingadmissionpolicies" {
				status = apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: resource}, "",
					errors.New(`User "agent" cannot list resource "validatingadmissionpolicies"`)).Status()
			}
			w.WriteHeader(int(status.Code))
			_ = json.NewEncoder(w).Encode(status)
		case r.URL.Query().Get("sendInitialEvents") == "true":
			// No streaming lists here: the reflector lists instead.
			status := apierrors.NewInternalError(errors.New("streaming lists are not served here")).Status()
			w.WriteHeader(int(status.Code))
			_ = json.NewEncoder(w).Encode(status)
		case r.URL.Query().Get("watch") == "true":
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": map[string]any{
				"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
				"metadata": map[string]any{"name": "late-" + resource, "resourceVersion": "2"}}})
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
				"metadata": map[string]any{"resourceVersion": "1"}, "items": []any{}})
		}
	}))
	defer srv.Close()
	client, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{Verbosity: 1})
	var observed []string
	a := newAdmissionWatch(client, func(InstanceKey) {}, log)
	a.observe = func(gr schema.GroupResource, name string) {
		mu.Lock()
		defer mu.Unlock()
		observed = append(observed, gr.Resource+"/"+name)
	}
	a.start()
	defer a.stopWatching()
	// The reflector tries again 0.8 to 1.6 s after a failed list, then
	// 1.6 to 3.2 s after the second.
	eventually := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(observed)
		mu.Unlock()
		if n == len(admissionResources) || time.Now().After(eventually) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, gvr := range admissionResources {
		if want := gvr.Resource + "/late-" + gvr.Resource; !slices.Contains(observed, want) {
			t.Errorf("%s was not followed once allowed: observed %v", gvr.Resource, observed)
		}
	}
	count := func(part string) int {
		n := 0
		for _, l := range logged {
			if strings.Contains(l, part) {
				n++
			}
		}
		return n
	}
	for part, want := range map[string]int{
		`"msg"="not following validatingadmissionpolicies.admissionregistration.k8s.io while the agent may not list and watch it`: 1,
		`"msg"="following validatingadmissionpolicies.admissionregistration.k8s.io again`:                                         1,
		`"msg"="the cluster does not serve this resource"`:                                                                        len(admissionResources) - 1,
		`"msg"="the cluster serves this resource now"`:                                                                            len(admissionResources) - 1,
	} {
		if got := count(part); got != want {
			t.Errorf("%d log lines with %s, want %d:\n%s", got, part, want, strings.Join(logged, "\n"))
		}
	}
}
