package celenv

import (
	"runtime"
	"testing"
	"time"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestEnvironmentsShareTheTypesOfOneSchema(t *testing.T) {
	s := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty()})
	a, err := New(Var{Name: "app", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Var{Name: "app", Schema: s}, Var{Name: "other", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	if a.declTypes[0] != b.declTypes[0] {
		t.Error("two environments built their own type for the same schema under the same name")
	}
	if b.declTypes[0] == b.declTypes[1] || b.declTypes[1].TypeName() != "__other__" {
		t.Errorf("a second name for the schema must get a type of its own, named after it; got %q", b.declTypes[1].TypeName())
	}
	// Both environments check expressions against the shared type.
	for _, env := range []*Env{a, b} {
		if _, err := env.Compile(`app.name + "x"`); err != nil {
			t.Error(err)
		}
		if _, err := env.Compile(`app.nope`); err == nil {
			t.Error("a field the schema lacks compiled")
		}
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

func TestTypesNoEnvironmentHoldsAreForgotten(t *testing.T) {
	s := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty()})
	if _, err := New(Var{Name: "forgotten", Schema: s}); err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		declTypes.Lock()
		defer declTypes.Unlock()
		n := 0
		for k := range declTypes.m {
			if k.name == "__forgotten__" {
				n++
			}
		}
		return n
	}
	if entries() != 1 {
		t.Fatalf("the type was not cached")
	}
	// Cleanups run after a collection, on their own goroutine.
	for deadline := time.Now().Add(10 * time.Second); entries() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the type of an environment nothing holds is still cached")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(s)
}
