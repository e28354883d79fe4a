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

// Without permission to list admission configuration, the watch asks once
// and stops, rather than ask again every few seconds for as long as the
// agent runs (refused instances are then retried with backoff alone).
func TestAdmissionWatchStopsWhenForbiddenOrNotServed(t *testing.T) {
	var mu sync.Mutex
	lists := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Each try is a streaming watch, then a list when that fails.
		if r.URL.Query().Get("watch") != "true" {
			mu.Lock()
			lists[r.URL.Path]++
			mu.Unlock()
		}
		// Policies are forbidden to the agent; the other kinds are not
		// served, as by an older cluster.
		status := apierrors.NewNotFound(schema.GroupResource{}, "").Status()
		if strings.HasSuffix(r.URL.Path, "/validatingadmissionpolicies") {
			status = apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, "",
				errors.New(`User "agent" cannot list resource "validatingadmissionpolicies"`)).Status()
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Code))
		_ = json.NewEncoder(w).Encode(status)
	}))
	defer srv.Close()
	client, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	a := newAdmissionWatch(client, func(InstanceKey) {}, logr.Discard())
	a.start()
	defer a.stopWatching()
	// The reflector tries again 0.8 to 1.6 s after a failed list.
	time.Sleep(3 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(lists) != len(admissionResources) {
		t.Errorf("%d resources listed, want each of the %d: %v", len(lists), len(admissionResources), lists)
	}
	for path, n := range lists {
		if n != 1 {
			t.Errorf("%s was listed %d times, want once", path, n)
		}
	}
}
