package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestClusterCPUReadsEveryProcessOfItsPidFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	// This test's own process stands in for the cluster's.
	self := []byte(strconv.Itoa(os.Getpid()) + "\n")
	for _, name := range []string{"etcd", apiServer} {
		if err := os.WriteFile(filepath.Join(dir, "pids", name+".pid"), self, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &benchCluster{kubeconfig: filepath.Join(dir, "kubeconfig.yaml")}
	before, err := c.cpu()
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel has counted some (in 10 ms ticks).
	var used map[string]float64
	for i := 0; used[apiServer] <= 0 && i < 1000; i++ {
		for j := range 1_000_000 {
			_ = strconv.Itoa(j)
		}
		after, err := c.cpu()
		if err != nil {
			t.Fatal(err)
		}
		used = cpuSince(before, after)
	}
	// The two files are read a moment apart, so a clock tick (10 ms) may
	// fall between them.
	if len(used) != 2 || used[apiServer] <= 0 || math.Abs(used["etcd"]-used[apiServer]) > 0.011 {
		t.Errorf("CPU used by the two processes: %v, want the same positive figure for both", used)
	}
	if got := sumCPU(used); got != used["etcd"]+used[apiServer] {
		t.Errorf("sum of %v: %v", used, got)
	}
}

func TestClusterCPUNamesAMissingProcess(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids", "etcd.pid"), []byte("999999999"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &benchCluster{kubeconfig: filepath.Join(dir, "kubeconfig.yaml")}
	if _, err := c.cpu(); err == nil || !strings.Contains(err.Error(), "etcd.pid") {
		t.Errorf("a pid file of a process that is gone: got %v, want an error naming etcd.pid", err)
	}
	if _, err := (&benchCluster{kubeconfig: filepath.Join(t.TempDir(), "kubeconfig.yaml")}).cpu(); err == nil {
		t.Error("no pid files: got no error")
	}
}
