package main

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func sample() *Results {
	return &Results{
		Date: "2026-11-21", Machine: "test", Kubernetes: "v1.36.3", Kro: "v0.9.4", Workers: 16, Repeat: 3,
		Floors: []Floor{{Workload: "agent-bound", N: 100, Seconds: 0.5, ClusterCPU: map[string]float64{"kube-apiserver": 6, "etcd": 4}}},
		Throughput: []Throughput{
			{Workload: "agent-bound", N: 100, Controller: "kro-agent", Seconds: 1, PerInstance: Requests{Writes: 4}, PeakRSSMB: 50, RestRSSMB: 45, QuietWrites: 0, QuietSeconds: 120, QuietWritesLate: ptr(0), DriftP50ms: 10, DriftP99ms: 20,
				CPUSeconds: 1, ClusterCPU: map[string]float64{"kube-apiserver": 9, "etcd": 5}},
			{Workload: "agent-bound", N: 100, Controller: "kro", Seconds: 9, PerInstance: Requests{Writes: 14, Gets: 3}, PeakRSSMB: 60, RestRSSMB: 54, QuietWrites: 30, QuietSeconds: 120, QuietWritesLate: ptr(12), DriftP50ms: -1,
				CPUSeconds: 10, ClusterCPU: map[string]float64{"kube-apiserver": 40, "etcd": 10}},
		},
		Idle: []Idle{{Controller: "kro-agent", RSSMB: 40, AnonMB: 15, FileMB: 25, TouchedMB: 2.5}, {Controller: "kro", RSSMB: 60}},
		Latency: []Latency{
			{Controller: "kro-agent", What: "admission", P50ms: 10, P99ms: 12.5},
			{Controller: "kro", What: "admission", P50ms: 30, P99ms: 250},
			{Controller: "kro-agent", What: "tree", P50ms: 70, P99ms: 90},
		},
	}
}

func TestTablesShowEveryFigureWithItsRatio(t *testing.T) {
	out := tables(sample(), "results/x.svg")
	for _, want := range []string{
		"| agent-bound, 100 (0.50 s) | 1.0 s (2.0× floor) | 9.0 s (18.0× floor) | 9.0× |",
		"| agent-bound, 100 | 4.00 + 0.00 / 0.00 | 14.00 + 0.00 / 3.00 | 3.5× |",
		"| agent-bound, 100, 120 s | 0 | 30 (12 in the last 60 s) | ∞ (kro-agent: none) |",
		"| kro-agent | 40 MB | 15 MB / 25 MB | 2.5 MB | 1.0× |",
		"| kro | 60 MB | – | – | 1.5× |", // measured before the split was
		"| agent-bound, 100 | 45 MB | 54 MB | 1.2× |",
		"| drift repair (a deleted ConfigMap back), agent-bound N=100 | 10.0 / 20.0 ms | not repaired within 2 minutes | ∞ (not repaired) |",
		"| admission | 10.0 / 12.5 ms | 30.0 / 250 ms | 3.0× |",
		"| tree | 70.0 / 90.0 ms | – | n/a |",
		"| workload, N (floor: cluster, API server) | kro-agent | kro | kro / kro-agent |",
		"| agent-bound, 100 (10 s, 6.0 s) | 14 (API server 9.0) + 1.0 s (1.5× floor) | 50 (API server 40) + 10.0 s (6.0× floor) | 4.0× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tables lack %q:\n%s", want, out)
		}
	}
}

// A run that refines an earlier day's file appends its rows; the tables
// still go by workload, then N.
func TestTablesGoByWorkloadThenN(t *testing.T) {
	res := sample()
	for _, r := range []struct {
		workload string
		n        int
	}{{"pods-bound", 100}, {"agent-bound", 1000}} {
		res.Floors = append([]Floor{{Workload: r.workload, N: r.n, Seconds: 2}}, res.Floors...)
		res.Throughput = append([]Throughput{{Workload: r.workload, N: r.n, Controller: "kro-agent", Seconds: 4}}, res.Throughput...)
	}
	out := tables(res, "results/x.svg")
	table := out[strings.Index(out, "### Time until"):strings.Index(out, "### API requests")]
	a100, a1000, p100 := strings.Index(table, "| agent-bound, 100 "), strings.Index(table, "| agent-bound, 1000 "), strings.Index(table, "| pods-bound, 100 ")
	if a100 < 0 || a1000 < 0 || p100 < 0 || !(a100 < a1000 && a1000 < p100) {
		t.Errorf("rows out of order (agent-bound 100 at %d, 1000 at %d, pods-bound 100 at %d):\n%s", a100, a1000, p100, table)
	}
}

func TestSmallFiguresKeepTheirDecimals(t *testing.T) {
	res := sample()
	res.Floors[0].Seconds = 0.116
	res.Floors[0].ClusterCPU = map[string]float64{"kube-apiserver": 0.14, "etcd": 0.06}
	out := tables(res, "results/x.svg")
	for _, want := range []string{"| agent-bound, 100 (0.12 s) |", "| agent-bound, 100 (0.2 s, 0.1 s) |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tables lack %q:\n%s", want, out)
		}
	}
}

func TestPlotIsWellFormedSVG(t *testing.T) {
	d := xml.NewDecoder(strings.NewReader(plot(sample())))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the plot is not well-formed: %v", err)
			}
			return
		}
	}
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := percentiles(d); p50 != 50 || p99 != 99 {
		t.Errorf("p50, p99 = %v, %v", p50, p99)
	}
}

func ptr(n int) *int { return &n }

// Results of before the quiet period was split show its count alone.
func TestQuietWritesWithoutTheirSecondHalf(t *testing.T) {
	res := sample()
	res.Throughput[1].QuietWritesLate = nil
	if out, want := tables(res, "results/x.svg"), "| agent-bound, 100, 120 s | 0 | 30 | ∞ (kro-agent: none) |"; !strings.Contains(out, want) {
		t.Errorf("the tables lack %q:\n%s", want, out)
	}
}
