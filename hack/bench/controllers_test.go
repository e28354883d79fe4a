package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// toucherMB is how much memory the helper process keeps touching.
const toucherMB = 16

// TestMain lets the test binary stand in for a controller that keeps
// touching toucherMB of memory, when started with BENCH_TOUCHER set.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_TOUCHER") != "" {
		buf := make([]byte, toucherMB<<20)
		for {
			for i := 0; i < len(buf); i += 4096 {
				buf[i]++
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(m.Run())
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
	toucher := exec.Command(os.Args[0], "-test.run=^$")
	toucher.Env = append(os.Environ(), "BENCH_TOUCHER=1")
	busy := startHelper(t, toucher)
	idle := startHelper(t, exec.Command("sleep", "60"))
	// Measured once the toucher holds its buffer, however slowly it starts.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if u, err := busy.usage(); err == nil && u.AnonMB >= toucherMB {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the toucher does not hold %d MB after 30 s", toucherMB)
		}
	}

	// And once the sleeping one has finished starting: a process just
	// exec'd touches its loader's and libc's pages, which CI's load can
	// stretch into the window.
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
	if busyMB < toucherMB || idleMB >= 1 {
		t.Errorf("touched in 300 ms: %.1f MB by a process touching %d MB, %.1f MB by a sleeping one", busyMB, toucherMB, idleMB)
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
