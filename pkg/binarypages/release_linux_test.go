package binarypages

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestReadOnlyMappings(t *testing.T) {
	maps := []byte(`00400000-01726000 r-xp 00000000 fe:00 9995058                            /opt/kro agent/kro-agent
01726000-02b2a000 r--p 01326000 fe:00 9995058                            /opt/kro agent/kro-agent
02b2a000-02bfd000 rw-p 0272a000 fe:00 9995058                            /opt/kro agent/kro-agent
02bfd000-02c40000 rw-p 00000000 00:00 0 
c000000000-c000400000 rw-p 00000000 00:00 0 
7f0000000000-7f0000001000 r--p 00000000 fe:00 1234                       /opt/kro agent/kro-agent.other
7f0000002000-7f0000003000 r--p 00000000 fe:00 1234                       /opt/kro agent/kro-agent (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
`)
	got := readOnlyMappings(maps, "/opt/kro agent/kro-agent")
	want := []mapping{{0x400000, 0x1726000}, {0x1726000, 0x2b2a000}, {0x7f0000002000, 0x7f0000003000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mappings = %#v, want %#v", got, want)
	}
}

// Releasing the test binary's pages leaves it running, with fewer of its
// pages resident: what it runs next is read back from the file.
func TestReleaseShrinksTheResidentFilePages(t *testing.T) {
	before, err := residentFileBytes()
	if err != nil {
		t.Fatal(err)
	}
	released, err := Release()
	if err != nil {
		t.Skipf("the kernel does not release pages here: %v", err)
	}
	after, err := residentFileBytes()
	if err != nil {
		t.Fatal(err)
	}
	if released <= 0 || after >= before {
		t.Errorf("RssFile %d bytes before, %d after releasing %d", before, after, released)
	}
}

// Nothing is released while the process keeps a CPU busy; it is once the
// process has been quiet for the window; and not at all once ctx ends.
func TestReleaseWhenIdleWaitsForQuiet(t *testing.T) {
	if _, err := cpuTime(); err != nil {
		t.Skip(err)
	}
	type result struct {
		released int64
		err      error
	}
	done := make(chan result, 1)
	busy, stop := context.WithCancel(context.Background())
	go func() {
		for busy.Err() == nil { // a CPU's worth of work
		}
	}()
	go func() {
		released, err := ReleaseWhenIdle(context.Background(), 500*time.Millisecond)
		done <- result{released, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("released while busy: %+v", r)
	case <-time.After(1500 * time.Millisecond):
	}
	stop()
	select {
	case r := <-done:
		if r.err != nil || r.released <= 0 {
			t.Errorf("once idle: released %d bytes, %v", r.released, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing released once idle")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if asked, err := ReleaseWhenIdle(ctx, time.Hour); !errors.Is(err, context.Canceled) || asked != 0 {
		t.Errorf("with ctx ended: released %d bytes, %v", asked, err)
	}
}
