package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// toucherMB is how much memory the helper process keeps touching.
const toucherMB = 16

// TestMain lets the test binary stand in for a controller that holds
// toucherMB of memory: one that keeps touching it, when started with
// BENCH_TOUCHER=busy, or one that touched it once and now sleeps, with
// BENCH_TOUCHER=idle.
func TestMain(m *testing.M) {
	if mode := os.Getenv("BENCH_TOUCHER"); mode != "" {
		if mode == "idle" {
			// Nothing for the collector and scavenger to walk.
			debug.SetGCPercent(-1)
		}
		held = make([]byte, toucherMB<<20)
		for {
			for i := 0; i < len(held); i += 4096 {
				held[i]++
			}
			if mode == "idle" {
				for {
					time.Sleep(time.Hour)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(m.Run())
}

// held is the toucher's memory, kept live while it sleeps.
var held []byte

// toucher starts the test binary holding toucherMB, in mode busy or idle,
// and waits until it holds it, however slowly it starts. The idle one runs
// from a copy of the binary: the kernel counts a page of a file as
// referenced in every process mapping it once any of them touches it, and
// the busy one keeps touching the binary's runtime code.
func toucher(t *testing.T, mode string) *process {
	t.Helper()
	bin := os.Args[0]
	if mode == "idle" {
		bin = filepath.Join(t.TempDir(), "idle-toucher")
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "BENCH_TOUCHER="+mode)
	p := startHelper(t, cmd)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if u, err := p.usage(); err == nil && u.AnonMB >= toucherMB {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s toucher does not hold %d MB after 30 s", mode, toucherMB)
		}
	}
}

func startHelper(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &process{cmd: cmd}
}

func TestTouchedCountsWhatAProcessUsesNotWhatItHolds(t *testing.T) {
	busy := toucher(t, "busy")
	idle := toucher(t, "idle")
	// Measured once the idle one has finished starting, which CI's load
	// can stretch into the window.
	settled(t, idle)

	ctx := context.Background()
	busyMB, err := busy.touchedIn(ctx, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	idleMB, err := idle.touchedIn(ctx, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("touched in 300 ms: %.2f MB busy, %.2f MB idle", busyMB, idleMB)
	// The idle one's runtime still wakes (its monitor thread, timers), and
	// under CI's load it has touched up to 1.4 MB in the window: a quarter
	// of what it holds tells the two apart with room for that.
	if busyMB < toucherMB || idleMB >= toucherMB/4 {
		t.Errorf("touched in 300 ms: %.1f MB by a process touching %d MB, %.1f MB by one that holds as much and sleeps", busyMB, toucherMB, idleMB)
	}
	u, err := busy.usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.AnonMB < toucherMB || u.FileMB <= 0 || u.RSSMB < u.AnonMB+u.FileMB-1 {
		t.Errorf("usage of a process holding %d MB: %+v", toucherMB, u)
	}
}

// settled waits until p sleeps and has taken no page fault for 50 ms.
func settled(t *testing.T, p *process) {
	t.Helper()
	last := ""
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		// The fields after the command name, which may hold spaces:
		// state first, minor faults the eighth.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 7 && f[0] == "S" && f[7] == last {
			return
		}
		if len(f) > 7 {
			last = f[7]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not settled after 10 s: %s", p.cmd.Path, stat)
		}
	}
}
