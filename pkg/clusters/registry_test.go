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
