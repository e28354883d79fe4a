// Command bench measures kro-agent side by side with upstream kro on fresh
// local clusters (SPEC §10): time to ACTIVE for both workloads against the
// floor of creating the same objects directly, API requests per instance
// (counted exactly from the API server's audit log), writes while nothing
// changes, memory and CPU, drift repair, admission and `kubectl kro tree`
// latency. It writes bench/results/<date>.json and .svg and the table in
// bench/README.md. `make bench` runs it; -report redraws from a results file.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Results are the figures of a `make bench` run, and of the partial runs
// that later replaced some of them.
type Results struct {
	// Date is the day the file was started, and its name.
	Date string `json:"date"`
	// Dates are the days its figures were measured on, when a run merged
	// figures into it on a later day (-into).
	Dates      []string     `json:"dates,omitempty"`
	Machine    string       `json:"machine"`
	Kubernetes string       `json:"kubernetes"`
	Kro        string       `json:"kro"`
	Workers    int          `json:"workers"`
	Repeat     int          `json:"repeat"`
	Floors     []Floor      `json:"floors"`
	Throughput []Throughput `json:"throughput"`
	Idle       []Idle       `json:"idle"`
	Latency    []Latency    `json:"latency"`
}

// Floor is the time to create a workload's objects directly.
type Floor struct {
	Workload string  `json:"workload"`
	N        int     `json:"n"`
	Seconds  float64 `json:"seconds"`
	// ClusterCPU is the CPU seconds each of the cluster's own processes
	// used meanwhile.
	ClusterCPU map[string]float64 `json:"clusterCPU,omitempty"`
}

// Throughput is one controller, one workload, N instances.
type Throughput struct {
	Workload   string  `json:"workload"`
	N          int     `json:"n"`
	Controller string  `json:"controller"`
	Seconds    float64 `json:"seconds"`
	// CreatedSeconds is when the last create returned: instance creation
	// goes through kro-agent's mutating webhook.
	CreatedSeconds float64  `json:"createdSeconds,omitempty"`
	PerInstance    Requests `json:"perInstance"`
	PeakRSSMB      float64  `json:"peakRSSMB"`
	CPUSeconds     float64  `json:"cpuSeconds"`
	// ClusterCPU is the CPU seconds each of the cluster's own processes
	// (the API server above all) used on the way to ACTIVE, beside the
	// controller's CPUSeconds.
	ClusterCPU map[string]float64 `json:"clusterCPU,omitempty"`
	// RestRSSMB is the RSS once all are ACTIVE and the controller has
	// settled (after the quiet period where that is measured); 0: not
	// measured.
	RestRSSMB float64 `json:"restRSSMB,omitempty"`
	// QuietWrites over QuietSeconds after all were ACTIVE; -1: not measured.
	QuietWrites  int     `json:"quietWrites"`
	QuietSeconds float64 `json:"quietSeconds,omitempty"`
	// QuietWritesLate are those of the second half of the quiet period:
	// a controller that keeps writing has some there, one that only
	// finishes what it was doing when everything turned ACTIVE has none.
	// nil: not measured (results of before 25 November).
	QuietWritesLate *int    `json:"quietWritesLate,omitempty"`
	DriftP50ms      float64 `json:"driftP50ms,omitempty"`
	DriftP99ms      float64 `json:"driftP99ms,omitempty"`
}

// Requests per instance on the way to ACTIVE.
type Requests struct {
	Writes float64 `json:"writes"`
	Events float64 `json:"events"`
	Gets   float64 `json:"gets"`
	Lists  float64 `json:"lists"`
}

// Idle is RSS at rest with 200 large CRDs installed: in all, split into
// the process's own memory and the pages of its binary it maps, and how
// much of it is touched over restSettle at rest (results before 26 November
// have RSS alone).
type Idle struct {
	Controller string  `json:"controller"`
	RSSMB      float64 `json:"rssMB"`
	AnonMB     float64 `json:"anonMB,omitempty"`
	FileMB     float64 `json:"fileMB,omitempty"`
	TouchedMB  float64 `json:"touchedMB,omitempty"`
}

// Latency of one operation.
type Latency struct {
	Controller string  `json:"controller"`
	What       string  `json:"what"`
	P50ms      float64 `json:"p50ms"`
	P99ms      float64 `json:"p99ms"`
}

func main() {
	ns := flag.String("n", "100,1000,5000", "instance counts")
	workloads := flag.String("workloads", "agent-bound,pods-bound", "workloads to run; empty for the measurements at rest alone")
	only := flag.String("controllers", "", "controllers to run (default: kro-agent, kro, kro with kro-agent's workers)")
	repeat := flag.Int("repeat", 3, "runs of each measurement at the smallest N, of which the median is reported")
	quiet := flag.Duration("quiet", 5*time.Minute, "how long to count writes after everything is ACTIVE (at the smallest N); 0 skips it")
	drift := flag.Int("drift", 100, "drift repairs timed (agent-bound, smallest N)")
	kroVersion := flag.String("kro-version", "latest", "upstream kro release to compare with")
	workers := flag.Int("workers", 64, "kro-agent's workers (and kro's in the equal-workers run)")
	rest := flag.Bool("rest", true, "measure RSS at rest with 200 large CRDs, and admission and tree latency")
	agentArgs := flag.String("agent-args", "", "more kro-agent flags, such as --pprof-bind-address=127.0.0.1:6060 to profile it")
	outDir := flag.String("out", "bench/results", "directory for the results")
	into := flag.String("into", "", "results file this run's figures replace theirs in (default: the day's file in -out), to complete an earlier day's table")
	report := flag.String("report", "", "only redraw bench/README.md and the plot from this results file")
	clusterLogs := flag.String("cluster-logs", "", "directory to copy each cluster's logs into before it is deleted, the API server's audit log among them")
	flag.Parse()
	log.SetFlags(log.Ltime)

	root, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if *report != "" {
		if err := writeReport(root, *report); err != nil {
			log.Fatal(err)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	cacheDir := filepath.Join(cacheRoot(), "bench")
	version, err := resolveKro(ctx, *kroVersion)
	if err != nil {
		log.Fatal(err)
	}
	ctls, err := controllers(ctx, root, cacheDir, version, *workers, strings.Fields(*agentArgs))
	if err != nil {
		log.Fatal(err)
	}
	if *only != "" {
		ctls = slices.DeleteFunc(ctls, func(c *controller) bool { return !slices.Contains(strings.Split(*only, ","), c.Name) })
	}
	logDir := filepath.Join(cacheDir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		log.Fatal(err)
	}
	var counts []int
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			log.Fatalf("-n: %v", err)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	b := &bench{root: root, logDir: logDir, quiet: *quiet, driftTries: *drift, smallestN: counts[0], clusterName: "kro-bench", clusterLogs: *clusterLogs}
	fresh := &Results{Date: time.Now().UTC().Format("2006-01-02"), Machine: machine(), Kubernetes: "v1.36.3 (kwok fake nodes)", Kro: version, Workers: *workers, Repeat: *repeat}
	file := filepath.Join(*outDir, fresh.Date+".json")
	if *into != "" {
		file = *into
	}
	res, err := resultsToRefine(file, fresh)
	if err != nil {
		log.Fatal(err)
	}
	save := func() {
		if err := writeResults(file, res); err != nil {
			log.Print(err)
		}
	}
	// An empty -workloads runs only the measurements at rest.
	for _, name := range strings.FieldsFunc(*workloads, func(r rune) bool { return r == ',' }) {
		w := map[string]workload{agentBound.Name: agentBound, podsBound.Name: podsBound}[name]
		if w.Name == "" {
			log.Fatalf("unknown workload %q", name)
		}
		for _, n := range counts {
			runs := 1
			if n == counts[0] {
				runs = *repeat
			}
			var floors []Floor
			for range runs {
				log.Printf("floor: %s N=%d", w.Name, n)
				f, err := b.floor(ctx, w, n)
				if err != nil {
					log.Fatal(err)
				}
				log.Printf("  %.1fs; the cluster's CPU %.1fs (API server %.1fs)", f.Seconds, sumCPU(f.ClusterCPU), f.ClusterCPU[apiServer])
				floors = append(floors, f)
			}
			res.setFloor(medianBySeconds(floors, func(f Floor) float64 { return f.Seconds }))
			for _, ctl := range ctls {
				var all []Throughput
				for i := range runs {
					log.Printf("%s: %s N=%d (run %d of %d)", ctl.Name, w.Name, n, i+1, runs)
					t, err := b.throughput(ctx, ctl, w, n, i == 0)
					if err != nil {
						log.Fatal(err)
					}
					log.Printf("  %.1fs, %.2f writes, %.2f GETs per instance; CPU %.1fs, the cluster's %.1fs (API server %.1fs)", t.Seconds, t.PerInstance.Writes, t.PerInstance.Gets, t.CPUSeconds, sumCPU(t.ClusterCPU), t.ClusterCPU[apiServer])
					all = append(all, t)
				}
				res.setThroughput(medianRun(all))
				save()
			}
		}
	}
	for _, ctl := range ctls {
		if !*rest {
			break
		}
		log.Printf("%s: idle with 200 large CRDs", ctl.Name)
		idle, err := b.idle(ctx, ctl, restSettle)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("  RSS %.1f MB (own %.1f, mapped files %.1f); touched in %s at rest: %.1f MB", idle.RSSMB, idle.AnonMB, idle.FileMB, restSettle, idle.TouchedMB)
		res.setIdle(idle)
		log.Printf("%s: latencies", ctl.Name)
		lat, err := b.latencies(ctx, ctl, 100, ctl.Name == "kro-agent")
		if err != nil {
			log.Fatal(err)
		}
		res.setLatencies(ctl.Name, lat)
		save()
	}
	save()
	// bench/README.md shows the published results only: a run written
	// elsewhere (a trial, a profile) leaves it alone.
	if filepath.Dir(filepath.Clean(file)) != filepath.Join("bench", "results") {
		log.Printf("results in %s; bench/README.md left as it is (-report redraws it)", file)
		return
	}
	if err := writeReport(root, file); err != nil {
		log.Fatal(err)
	}
}

// medianRun keeps the run with the median time, and the quiet and drift
// figures of the run that measured them.
func medianRun(runs []Throughput) Throughput {
	m := medianBySeconds(runs, func(t Throughput) float64 { return t.Seconds })
	m.QuietWrites, m.QuietSeconds, m.QuietWritesLate = runs[0].QuietWrites, runs[0].QuietSeconds, runs[0].QuietWritesLate
	m.DriftP50ms, m.DriftP99ms, m.RestRSSMB = runs[0].DriftP50ms, runs[0].DriftP99ms, runs[0].RestRSSMB
	return m
}

// medianBySeconds is the run with the median time, whose other figures
// come with it.
func medianBySeconds[T any](runs []T, seconds func(T) float64) T {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b T) int { return cmp.Compare(seconds(a), seconds(b)) })
	return sorted[len(sorted)/2]
}

// resultsToRefine is the results file this run's figures go into,
// replacing those it measures again: a run of part of the bench
// (-workloads, -n, -controllers, -rest=false) refines the file rather than
// dropping the rest. fresh describes this run; a file that does not exist
// yet starts as fresh.
func resultsToRefine(file string, fresh *Results) (*Results, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if res.Machine != fresh.Machine || res.Kro != fresh.Kro || res.Workers != fresh.Workers {
		return nil, fmt.Errorf("%s was measured on %s with kro %s and %d workers; this run would mix in figures of %s, kro %s, %d workers: move it away first",
			file, res.Machine, res.Kro, res.Workers, fresh.Machine, fresh.Kro, fresh.Workers)
	}
	if fresh.Date != res.Date && !slices.Contains(res.Dates, fresh.Date) {
		if len(res.Dates) == 0 {
			res.Dates = []string{res.Date}
		}
		res.Dates = append(res.Dates, fresh.Date)
	}
	return &res, nil
}

func (r *Results) setFloor(f Floor) {
	r.Floors = replaceOrAppend(r.Floors, f, func(x Floor) bool { return x.Workload == f.Workload && x.N == f.N })
}

func (r *Results) setThroughput(t Throughput) {
	r.Throughput = replaceOrAppend(r.Throughput, t, func(x Throughput) bool {
		return x.Workload == t.Workload && x.N == t.N && x.Controller == t.Controller
	})
}

func (r *Results) setIdle(i Idle) {
	r.Idle = replaceOrAppend(r.Idle, i, func(x Idle) bool { return x.Controller == i.Controller })
}

func (r *Results) setLatencies(controller string, lat []Latency) {
	r.Latency = append(slices.DeleteFunc(r.Latency, func(x Latency) bool { return x.Controller == controller }), lat...)
}

func replaceOrAppend[T any](list []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(list, same); i >= 0 {
		list[i] = v
		return list
	}
	return append(list, v)
}

func writeResults(file string, res *Results) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// resolveKro turns "latest" into the newest release of upstream kro.
func resolveKro(ctx context.Context, v string) (string, error) {
	if v != "latest" {
		return v, nil
	}
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-json", "github.com/kubernetes-sigs/kro@latest").Output()
	if err != nil {
		return "", fmt.Errorf("finding kro's latest release: %w", err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	return m.Version, nil
}

func cacheRoot() string {
	if v := os.Getenv("KRO_AGENT_CACHE"); v != "" {
		return v
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kro-agent")
	}
	return filepath.Join(dir, "kro-agent")
}

// machine describes the CPU and memory the figures were taken on.
func machine() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		if len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			mem = fmt.Sprintf(", %.0f GB RAM", kb/1024/1024)
		}
	}
	return fmt.Sprintf("%d × %s%s, %s", runtime.NumCPU(), model, mem, runtime.Version())
}
