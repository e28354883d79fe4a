package localcluster

import (
	"os"
	"slices"
	"testing"
)

func TestOrphansAreTheClustersOfTestBinariesThatAreGone(t *testing.T) {
	running := map[int]bool{100: true}
	alive := func(pid int) bool { return running[pid] }
	names := []string{
		"kro-agent",                  // the demo's
		"kro-agent-e2e-100",          // a test binary still running
		"kro-agent-e2e-200",          // one that is gone
		"kro-agent-e2e-",             // no pid
		"kro-agent-e2e-0",            // not a pid
		"kro-agent-e2e-3x",           // not a number
		"someone-e2e-300",            // another prefix
		"kro-agent-e2e-400",          // gone too
		"kro-agent-e2e-200-workload", // the second cluster of one that is gone
		"kro-agent-e2e-100-workload", // and of one still running
	}
	got := orphans(names, "kro-agent-e2e-", alive)
	if want := []string{"kro-agent-e2e-200", "kro-agent-e2e-400", "kro-agent-e2e-200-workload"}; !slices.Equal(got, want) {
		t.Errorf("orphans = %v, want %v", got, want)
	}
}

func TestAliveTellsThisProcessFromAFinishedOne(t *testing.T) {
	if !alive(os.Getpid()) {
		t.Errorf("this process (pid %d) is not alive", os.Getpid())
	}
	// Beyond the kernel's pid_max (at most 2^22), so no process has it.
	if alive(1 << 23) {
		t.Errorf("pid %d is alive", 1<<23)
	}
}
