package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAPartialRunRefinesAResultsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "2026-11-21.json")
	day := &Results{Date: "2026-11-21", Machine: "m", Kro: "v0.9.4", Workers: 16, Repeat: 3,
		Floors: []Floor{{Workload: "agent-bound", N: 100, Seconds: 0.3}},
		Throughput: []Throughput{
			{Workload: "agent-bound", N: 100, Controller: "kro", Seconds: 15},
			{Workload: "agent-bound", N: 5000, Controller: "kro", Seconds: 857, PerInstance: Requests{Writes: 2.03}},
		},
		Idle: []Idle{{Controller: "kro", RSSMB: 59}},
	}
	if err := writeResults(file, day); err != nil {
		t.Fatal(err)
	}
	res, err := resultsToRefine(file, &Results{Date: "2026-11-21", Machine: "m", Kro: "v0.9.4", Workers: 16, Repeat: 1})
	if err != nil {
		t.Fatal(err)
	}
	res.setThroughput(Throughput{Workload: "agent-bound", N: 5000, Controller: "kro", Seconds: 850, PerInstance: Requests{Writes: 13}})
	res.setThroughput(Throughput{Workload: "pods-bound", N: 100, Controller: "kro", Seconds: 20})
	res.setFloor(Floor{Workload: "agent-bound", N: 100, Seconds: 0.25})
	if len(res.Throughput) != 3 || res.Throughput[0].Seconds != 15 || res.Throughput[1].PerInstance.Writes != 13 || res.Throughput[2].Workload != "pods-bound" {
		t.Errorf("throughput = %+v", res.Throughput)
	}
	if len(res.Floors) != 1 || res.Floors[0].Seconds != 0.25 {
		t.Errorf("floors = %+v", res.Floors)
	}
	if res.Repeat != 3 || len(res.Idle) != 1 {
		t.Errorf("the day's other figures changed: repeat %d, idle %+v", res.Repeat, res.Idle)
	}
	if res.Dates != nil || res.measuredOn() != "2026-11-21" {
		t.Errorf("refined on its own day: dates %q, measured on %q", res.Dates, res.measuredOn())
	}

	// Figures of another kro release or worker count do not mix in.
	_, err = resultsToRefine(file, &Results{Date: "2026-11-21", Machine: "m", Kro: "v0.10.0", Workers: 16})
	if err == nil || !strings.Contains(err.Error(), "move it away first") {
		t.Errorf("mixing kro releases: %v", err)
	}
	// Another day starts its own file...
	fresh := &Results{Date: "2026-11-22", Machine: "m", Kro: "v0.9.4", Workers: 16}
	if res, err := resultsToRefine(filepath.Join(filepath.Dir(file), "2026-11-22.json"), fresh); err != nil || res != fresh {
		t.Errorf("a new day: %v, %+v", err, res)
	}
	// ...unless it completes an earlier day's (-into), which then says so.
	res, err = resultsToRefine(file, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if res.Date != "2026-11-21" || !slices.Equal(res.Dates, []string{"2026-11-21", "2026-11-22"}) || len(res.Throughput) != 2 {
		t.Errorf("completing an earlier day: date %s, dates %q, throughput %+v", res.Date, res.Dates, res.Throughput)
	}
	if got := res.measuredOn(); got != "2026-11-21 and 2026-11-22" {
		t.Errorf("measured on %q", got)
	}
	if err := writeResults(file, res); err != nil {
		t.Fatal(err)
	}
	again, err := resultsToRefine(file, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Dates, res.Dates) {
		t.Errorf("a second run of the same day: dates %q", again.Dates)
	}
}

func TestTheMedianRunKeepsItsOwnFigures(t *testing.T) {
	floors := []Floor{
		{Seconds: 70, ClusterCPU: map[string]float64{apiServer: 70}},
		{Seconds: 60, ClusterCPU: map[string]float64{apiServer: 60}},
		{Seconds: 65, ClusterCPU: map[string]float64{apiServer: 65}},
	}
	m := medianBySeconds(floors, func(f Floor) float64 { return f.Seconds })
	if m.Seconds != 65 || m.ClusterCPU[apiServer] != 65 {
		t.Errorf("median of 60, 65, 70 s: got %v s with the API server's %v s", m.Seconds, m.ClusterCPU[apiServer])
	}
}
