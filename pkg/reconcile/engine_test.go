package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// unstartedInstances is an instance informer the test fills by hand: it is
// never started, and could list or watch nothing if it were.
func unstartedInstances() cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, errors.New("not listed in this test")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("not watched in this test")
		},
	}, &heldObject{}, 0, cache.Indexers{indexUID: byUID})
}

// A conflict is the cache trailing the API server, retried at once: not an
// error for whoever reads the agent's log. Anything else is one.
func TestConflictsAreNotLoggedAsErrors(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	e := &Engine{opts: EngineOptions{Log: log}}
	key := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Namespace: "default", Name: "demo"}
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "kro.run", Resource: "webapps"}, "demo", errors.New("the object has been modified"))
	e.logFailure(key, fmt.Errorf("writing status: %w", conflict))
	if len(lines) != 0 {
		t.Errorf("a conflict was logged at the default level: %q", lines)
	}
	e.logFailure(key, errors.New("applying config: forbidden"))
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="reconciling instance"`) || !strings.Contains(lines[0], "forbidden") {
		t.Errorf("a failure was logged as %q", lines)
	}
}

// An object whose name labels were changed to name another instance still
// belongs, by the UID its instance-id label names, to the instance that
// made it, which finds its objects by that UID: its events, its deletion
// among them, reach that instance too, or one being deleted would wait for
// an event sent elsewhere. An object whose labels agree is sent to its
// instance alone.
func TestManagedEventsReachTheInstanceTheirUIDNames(t *testing.T) {
	webApp := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	instances := unstartedInstances()
	for _, inst := range []string{
		`{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"moved","namespace":"ns","uid":"uid-moved"}}`,
		`{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"other","namespace":"ns","uid":"uid-other"}}`,
	} {
		h, err := holdJSON([]byte(inst))
		if err != nil {
			t.Fatal(err)
		}
		if err := instances.GetIndexer().Add(h); err != nil {
			t.Fatal(err)
		}
	}
	e := &Engine{
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[InstanceKey]()),
		kinds:   map[schema.GroupVersionKind]*served{webApp: {rgdName: "webapp", gvr: webApp.GroupVersion().WithResource("webapps"), informer: &watched{informer: instances}}},
		byRGD:   map[string]schema.GroupVersionKind{"webapp": webApp},
		applied: newAppliedCache(),
	}
	defer e.queue.ShutDown()
	deployment := func(instanceName string) *heldObject {
		h, err := holdJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"moved","namespace":"ns","uid":"uid-deployment","labels":{` +
			`"kro.run/instance-name":"` + instanceName + `","kro.run/instance-namespace":"ns","kro.run/resource-graph-definition-name":"webapp","kro.run/instance-id":"uid-moved"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	queued := func() []string {
		var out []string
		for e.queue.Len() > 0 {
			key, _ := e.queue.Get()
			out = append(out, key.Name)
			e.queue.Done(key)
			e.queue.Forget(key)
		}
		slices.Sort(out)
		return out
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, tc := range []struct {
		named string
		want  []string
	}{
		{"moved", []string{"moved"}},
		{"other", []string{"moved", "other"}},
		{"nobody-by-that-name", []string{"moved", "nobody-by-that-name"}},
	} {
		e.managedEvent("", deployments, nil, deployment(tc.named), true)
		if got := queued(); !slices.Equal(got, tc.want) {
			t.Errorf("the deletion of an object of moved's labelled for %s queued %q, want %q", tc.named, got, tc.want)
		}
	}
}

// A run keeps the graph it started with while its RGD is served again with
// another: the run renders, records the kinds of and reports on one graph.
// Under -race, the reads of a worker beside Serve's writes are checked too.
func TestARunKeepsItsGraphWhenTheKindIsServedAgain(t *testing.T) {
	webApp := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	instances := unstartedInstances()
	first := &graph.Graph{Instance: webApp, Resource: "webapps"}
	e := &Engine{
		ctx:   context.Background(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[InstanceKey]()),
		kinds: map[schema.GroupVersionKind]*served{webApp: {
			rgdName: "webapp", graph: first, gvr: webApp.GroupVersion().WithResource("webapps"), informer: &watched{informer: instances},
		}},
		byRGD: map[string]schema.GroupVersionKind{"webapp": webApp},
		local: &target{managed: unreachableInformers(t)},
	}
	defer e.queue.ShutDown()
	rgd := &v1alpha1.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "webapp", UID: "rgd-uid", Generation: 2}}

	run := e.kind(webApp)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if s := e.kind(webApp); s.graph == nil || s.rgdName != "webapp" {
				t.Errorf("a worker read a kind without its graph: %+v", s)
				return
			}
		}
	}()
	for range 100 {
		if err := e.Serve(rgd, &graph.Graph{Instance: webApp, Resource: "webapps"}); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if run.graph != first {
		t.Error("the kind served again changed the graph of a run that had started")
	}
	if s := e.kind(webApp); s.graph == first || s.rgdUID != "rgd-uid" {
		t.Errorf("the next run does not get the graph served last: rgd %q", s.rgdUID)
	}
}
