package agent

import "testing"

func TestFirstPassCompletesOnceEveryListedRGDIsReconciled(t *testing.T) {
	calls := 0
	p := &firstPass{complete: func() { calls++ }}
	p.reconciled("a") // before the list is read
	p.reconciled("gone")
	if calls != 0 {
		t.Fatal("complete before the RGDs were listed")
	}
	p.listed([]string{"a", "b", "c"})
	p.reconciled("b")
	if calls != 0 {
		t.Fatal("complete with c not reconciled yet")
	}
	p.reconciled("c")
	p.reconciled("a")
	p.listed([]string{"d"})
	if calls != 1 {
		t.Errorf("complete called %d times, want once", calls)
	}

	none := 0
	empty := &firstPass{complete: func() { none++ }}
	empty.listed(nil)
	if none != 1 {
		t.Errorf("with no RGDs, complete called %d times, want once at the list", none)
	}
}
