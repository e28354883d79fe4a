package clusters

import (
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestRegistryTellsWatchersOfChangesOnly(t *testing.T) {
	r := NewRegistry()
	var told []string
	r.Watch(func(name string) { told = append(told, name) })
	e := Entry{Name: "a", Region: "eu", Ready: true, ConfigDigest: "1"}
	r.Set(e)
	r.Set(e) // a periodic check that found nothing new
	e.Ready, e.Message = false, "down"
	r.Set(e)
	r.Delete("a")
	r.Delete("a")
	if want := []string{"a", "a", "a"}; !slices.Equal(told, want) {
		t.Errorf("watchers were told %v, want %v", told, want)
	}
	if _, ok := r.Get("a"); ok || len(r.Candidates()) != 0 {
		t.Error("a deleted cluster is still registered")
	}
}

// The registry is complete once every Cluster listed at the start has been
// checked or is gone: before that, a cluster it lacks may only not be
// checked yet. The watchers are told once, with "", when it completes.
func TestRegistryIsCompleteOnceEveryListedClusterIsChecked(t *testing.T) {
	r := NewRegistry()
	var told []string
	r.Watch(func(name string) { told = append(told, name) })
	r.Set(Entry{Name: "a", Region: "eu"})
	if r.Complete() {
		t.Fatal("complete before the Clusters that exist are known")
	}
	r.Expect([]string{"a", "b", "c"})
	if r.Complete() {
		t.Fatal("complete while b and c are not checked")
	}
	r.Set(Entry{Name: "b", Region: "us"})
	r.Delete("c") // deleted before its first check
	if !r.Complete() {
		t.Fatal("not complete once every listed Cluster is checked or gone")
	}
	r.Set(Entry{Name: "d", Region: "ap"})
	if want := []string{"a", "b", "", "d"}; !slices.Equal(told, want) {
		t.Errorf("watchers were told %v, want %v", told, want)
	}

	// No Cluster at all: complete as soon as that is known.
	empty := NewRegistry()
	told = nil
	empty.Watch(func(name string) { told = append(told, name) })
	empty.Expect(nil)
	if !empty.Complete() || !slices.Equal(told, []string{""}) {
		t.Errorf("an agent with no Cluster: complete %v, watchers told %v", empty.Complete(), told)
	}
}

// A request that finds a cluster otherwise than its last check asks for
// another check at once; one that agrees asks for nothing, and so does a
// request to a cluster whose kubeconfig did not load, or is not registered.
// Rechecks on the same finding are spaced; a cluster back from a stop is
// rechecked at once all the same.
func TestRegistryAsksForACheckWhenARequestContradictsTheLast(t *testing.T) {
	r := NewRegistry()
	now := time.Unix(0, 0)
	r.now = func() time.Time { return now }
	type asked struct {
		name     string
		answered bool
	}
	var got []asked
	r.OnRecheck(func(name string, answered bool) { got = append(got, asked{name, answered}) })
	r.Set(Entry{Name: "up", Ready: true, Reachable: true, Config: &rest.Config{}})
	r.Set(Entry{Name: "noconfig", Message: "the kubeconfig is empty"})

	r.Answered("up", true)
	r.Answered("noconfig", false)
	r.Answered("unregistered", false)
	if len(got) != 0 {
		t.Fatalf("rechecks asked where requests agree with the checks: %v", got)
	}
	r.Answered("up", false)
	r.Answered("up", false) // the other informers, moments later
	now = now.Add(recheckSpacing / 2)
	r.Answered("up", false)
	if want := []asked{{"up", false}}; !slices.Equal(got, want) {
		t.Fatalf("after failed requests: asked %v, want %v", got, want)
	}
	// The check found it reachable all the same: failures go on asking,
	// spaced.
	now = now.Add(recheckSpacing)
	r.Answered("up", false)
	if want := []asked{{"up", false}, {"up", false}}; !slices.Equal(got, want) {
		t.Fatalf("asked %v, want %v", got, want)
	}
	// The check found it unreachable: failures agree now, and an answer,
	// moments later, does not.
	r.Set(Entry{Name: "up", Message: "unreachable", Config: &rest.Config{}})
	got = nil
	r.Answered("up", false)
	r.Answered("up", true)
	if want := []asked{{"up", true}}; !slices.Equal(got, want) {
		t.Fatalf("once checked unreachable: asked %v, want %v", got, want)
	}
}
