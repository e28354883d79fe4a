package clusters

import (
	"slices"
	"testing"
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
