package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuSeconds is the CPU time, user and system, a process has used so far.
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th, in clock ticks (100 per second).
	s := string(stat)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(rest) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat has %d fields after the command name, want at least 13", pid, len(rest))
	}
	ut, err := strconv.ParseFloat(rest[11], 64)
	if err != nil {
		return 0, err
	}
	st, err := strconv.ParseFloat(rest[12], 64)
	if err != nil {
		return 0, err
	}
	return (ut + st) / 100, nil
}

// cpu is the CPU time each of the cluster's own processes (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok-controller)
// has used so far, by the names of the pid files kwokctl keeps for them.
// On two cores everything shares, it is what the API server and the
// cluster's controllers spent on a workload beside the controller measured.
func (c *benchCluster) cpu() (map[string]float64, error) {
	dir := filepath.Join(filepath.Dir(c.kubeconfig), "pids")
	files, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no pid files of the cluster's processes in %s", dir)
	}
	out := map[string]float64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s, err := cpuSeconds(pid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".pid")] = s
	}
	return out, nil
}

// apiServer names the API server's process in what cpu returns.
const apiServer = "kube-apiserver"

// cpuSince is what each process used between two readings of cpu.
func cpuSince(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// sumCPU adds up CPU seconds by process.
func sumCPU(cpu map[string]float64) float64 {
	t := 0.0
	for _, v := range cpu {
		t += v
	}
	return t
}
