package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	beginMarker = "<!-- bench:results -->"
	endMarker   = "<!-- /bench:results -->"
)

// writeReport draws the plot and rewrites the results section of
// bench/README.md from a results file.
func writeReport(root, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	file, err = filepath.Abs(file)
	if err != nil {
		return err
	}
	svg := strings.TrimSuffix(file, ".json") + ".svg"
	if err := os.WriteFile(svg, []byte(plot(&res)), 0o644); err != nil {
		return err
	}
	readme := filepath.Join(root, "bench", "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	start, end := strings.Index(string(old), beginMarker), strings.Index(string(old), endMarker)
	if start < 0 || end < start {
		return fmt.Errorf("%s has no %s ... %s section", readme, beginMarker, endMarker)
	}
	rel, _ := filepath.Rel(filepath.Join(root, "bench"), svg)
	section := beginMarker + "\n" + tables(&res, rel) + endMarker
	return os.WriteFile(readme, []byte(string(old[:start])+section+string(old[end+len(endMarker):])), 0o644)
}

func controllerNames(res *Results) []string {
	var out []string
	for _, t := range res.Throughput {
		if !slices.Contains(out, t.Controller) {
			out = append(out, t.Controller)
		}
	}
	return out
}

// ratio formats other / agent, the factor by which kro-agent is ahead
// (above 1) or behind (below 1) where lower is better.
func ratio(other, agent float64) string {
	switch {
	case other < 0:
		return "n/a"
	case agent == 0 && other > 0:
		return "∞ (kro-agent: none)"
	case agent <= 0:
		return "n/a"
	}
	return fmt.Sprintf("%.1f×", other/agent)
}

// measuredOn says the day, or the days, the figures were measured on.
func (r *Results) measuredOn() string {
	if len(r.Dates) < 2 {
		return r.Date
	}
	return strings.Join(r.Dates[:len(r.Dates)-1], ", ") + " and " + r.Dates[len(r.Dates)-1]
}

func tables(res *Results, plotPath string) string {
	res = inOrder(res)
	var w strings.Builder
	ctls := controllerNames(res)
	others := slices.DeleteFunc(slices.Clone(ctls), func(c string) bool { return c == "kro-agent" })
	fmt.Fprintf(&w, "Measured %s on %s; Kubernetes %s; upstream kro %s; kro-agent with %d workers. ", res.measuredOn(), res.Machine, res.Kubernetes, res.Kro, res.Workers)
	fmt.Fprintf(&w, "Ratios are kro / kro-agent: above 1× kro-agent is ahead. Figures at the smallest N are the median of %d runs.\n\n", res.Repeat)
	fmt.Fprintf(&w, "![time to ACTIVE](%s)\n\n", plotPath)

	find := func(wl string, n int, ctl string) (Throughput, bool) {
		i := slices.IndexFunc(res.Throughput, func(t Throughput) bool { return t.Workload == wl && t.N == n && t.Controller == ctl })
		if i < 0 {
			return Throughput{}, false
		}
		return res.Throughput[i], true
	}
	header := func(first string) {
		fmt.Fprintf(&w, "| %s |", first)
		for _, c := range ctls {
			fmt.Fprintf(&w, " %s |", c)
		}
		for _, o := range others {
			fmt.Fprintf(&w, " %s / kro-agent |", o)
		}
		fmt.Fprintf(&w, "\n|%s\n", strings.Repeat("---|", 1+len(ctls)+len(others)))
	}
	row := func(label string, wl string, n int, value func(Throughput) (float64, string)) {
		fmt.Fprintf(&w, "| %s |", label)
		vals := map[string]float64{}
		for _, c := range ctls {
			t, ok := find(wl, n, c)
			if !ok {
				fmt.Fprint(&w, " – |")
				continue
			}
			v, s := value(t)
			vals[c] = v
			fmt.Fprintf(&w, " %s |", s)
		}
		for _, o := range others {
			fmt.Fprintf(&w, " %s |", ratio(vals[o], vals["kro-agent"]))
		}
		fmt.Fprintln(&w)
	}

	fmt.Fprint(&w, "### Time until all instances are ACTIVE\n\n")
	fmt.Fprint(&w, "Seconds from the first create to the last instance ACTIVE, and in parentheses the multiple of the floor: the same objects created directly by 64 parallel clients (for pods-bound, until every Deployment is available).\n\n")
	header("workload, N (floor)")
	for _, f := range res.Floors {
		floor := f.Seconds
		row(fmt.Sprintf("%s, %d (%s s)", f.Workload, f.N, fine(floor)), f.Workload, f.N, func(t Throughput) (float64, string) {
			return t.Seconds, fmt.Sprintf("%.1f s (%.1f× floor)", t.Seconds, t.Seconds/floor)
		})
	}

	fmt.Fprint(&w, "\n### API requests per instance on the way to ACTIVE\n\n")
	fmt.Fprint(&w, "Counted from the API server's audit log by user agent: writes (create, update, patch, delete) without Events, Events separately, single-object GETs. The floor is one write per resource plus one status write.\n\n")
	header("workload, N: writes + events / GETs")
	for _, f := range res.Floors {
		row(fmt.Sprintf("%s, %d", f.Workload, f.N), f.Workload, f.N, func(t Throughput) (float64, string) {
			p := t.PerInstance
			return p.Writes + p.Events, fmt.Sprintf("%.2f + %.2f / %.2f", p.Writes, p.Events, p.Gets)
		})
	}

	fmt.Fprint(&w, "\n### Writes while nothing changes\n\n")
	fmt.Fprint(&w, "Counted from the audit log from a second after the last instance turned ACTIVE, over the period; in parentheses those of its second half, where a controller that keeps writing has some and one that only finishes what it was doing has none.\n\n")
	header("workload, N, period")
	for _, t := range res.Throughput {
		if t.QuietWrites < 0 || t.Controller != ctls[0] {
			continue
		}
		row(fmt.Sprintf("%s, %d, %.0f s", t.Workload, t.N, t.QuietSeconds), t.Workload, t.N, func(t Throughput) (float64, string) {
			if t.QuietWritesLate == nil || t.QuietWrites == 0 {
				return float64(t.QuietWrites), fmt.Sprint(t.QuietWrites)
			}
			return float64(t.QuietWrites), fmt.Sprintf("%d (%d in the last %.0f s)", t.QuietWrites, *t.QuietWritesLate, t.QuietSeconds/2)
		})
	}

	fmt.Fprint(&w, "\n### Memory and CPU\n\n")
	header("workload, N: peak RSS / CPU")
	for _, f := range res.Floors {
		row(fmt.Sprintf("%s, %d", f.Workload, f.N), f.Workload, f.N, func(t Throughput) (float64, string) {
			return t.PeakRSSMB, fmt.Sprintf("%.0f MB / %.1f s", t.PeakRSSMB, t.CPUSeconds)
		})
	}
	if slices.ContainsFunc(res.Throughput, func(t Throughput) bool { return t.RestRSSMB > 0 }) {
		fmt.Fprintf(&w, "\nRSS at rest once all instances are ACTIVE: %.0f s after the last (after the quiet period where that is measured):\n\n", restSettle.Seconds())
		header("workload, N: RSS at rest")
		for _, f := range res.Floors {
			if t, ok := find(f.Workload, f.N, "kro-agent"); !ok || t.RestRSSMB <= 0 {
				continue
			}
			row(fmt.Sprintf("%s, %d", f.Workload, f.N), f.Workload, f.N, func(t Throughput) (float64, string) {
				if t.RestRSSMB <= 0 {
					return -1, "–"
				}
				return t.RestRSSMB, fmt.Sprintf("%.0f MB", t.RestRSSMB)
			})
		}
	}
	if len(res.Idle) > 0 {
		fmt.Fprintf(&w, "\nRSS at rest with 200 large CRDs (about 100 KB of schema each) installed, one RGD and one instance, %.0f s after the instance was created. RSS is the process's own memory (heap, stacks) and the pages of its binary it has mapped: those touched once, at startup too, stay counted until the kernel needs them back. Touched is how much of it all the controller used over the next %.0f s (the kernel's referenced bits, cleared and read again).\n\n", restSettle.Seconds(), restSettle.Seconds())
		fmt.Fprint(&w, "| controller | RSS | own / binary | touched at rest | / kro-agent |\n|---|---|---|---|---|\n")
		agent := 0.0
		for _, i := range res.Idle {
			if i.Controller == "kro-agent" {
				agent = i.RSSMB
			}
		}
		for _, i := range res.Idle {
			split, touched := "–", "–"
			if i.AnonMB > 0 || i.FileMB > 0 {
				split = fmt.Sprintf("%.0f MB / %.0f MB", i.AnonMB, i.FileMB)
			}
			if i.TouchedMB > 0 {
				touched = fmt.Sprintf("%.1f MB", i.TouchedMB)
			}
			fmt.Fprintf(&w, "| %s | %.0f MB | %s | %s | %s |\n", i.Controller, i.RSSMB, split, touched, ratio(i.RSSMB, agent))
		}
	}

	if slices.ContainsFunc(res.Floors, func(f Floor) bool { return f.ClusterCPU != nil }) {
		fmt.Fprint(&w, "\n### CPU on the way to ACTIVE\n\n")
		fmt.Fprint(&w, "CPU seconds from the first create to the last instance ACTIVE: the cluster's own processes (API server, etcd, controller manager, scheduler, kwok), of them the API server, plus the controller's; in parentheses the multiple of what the cluster used for the floor. The cluster and the controller share the machine's cores, so where they keep them busy, time follows this total.\n\n")
		header("workload, N (floor: cluster, API server)")
		for _, f := range res.Floors {
			if f.ClusterCPU == nil {
				continue
			}
			floor := sumCPU(f.ClusterCPU)
			row(fmt.Sprintf("%s, %d (%s s, %s s)", f.Workload, f.N, coarse(floor), coarse(f.ClusterCPU[apiServer])), f.Workload, f.N, func(t Throughput) (float64, string) {
				if t.ClusterCPU == nil {
					return -1, "–"
				}
				cluster := sumCPU(t.ClusterCPU)
				all := cluster + t.CPUSeconds
				return all, fmt.Sprintf("%s (API server %s) + %.1f s (%.1f× floor)", coarse(cluster), coarse(t.ClusterCPU[apiServer]), t.CPUSeconds, all/floor)
			})
		}
	}

	fmt.Fprint(&w, "\n### Latency\n\nMilliseconds, p50 / p99; the ratios compare the p50s.\n\n")
	header("what")
	for _, l := range latencyRows(res) {
		fmt.Fprintf(&w, "| %s |", l.what)
		for _, c := range ctls {
			v, ok := l.by[c]
			switch {
			case !ok:
				fmt.Fprint(&w, " – |")
			case v.P50ms < 0:
				fmt.Fprint(&w, " not repaired within 2 minutes |")
			default:
				fmt.Fprintf(&w, " %s / %s ms |", ms(v.P50ms), ms(v.P99ms))
			}
		}
		agent, hasAgent := l.by["kro-agent"]
		for _, o := range others {
			v, ok := l.by[o]
			switch {
			case !ok || !hasAgent:
				fmt.Fprint(&w, " n/a |")
			case v.P50ms < 0:
				fmt.Fprint(&w, " ∞ (not repaired) |")
			default:
				fmt.Fprintf(&w, " %s |", ratio(v.P50ms, agent.P50ms))
			}
		}
		fmt.Fprintln(&w)
	}
	return w.String()
}

// latencyRow is one latency figure for every controller that has it.
type latencyRow struct {
	what string
	by   map[string]Latency
}

// latencyRows gathers drift repair (from the throughput runs that timed it)
// and the other latencies into rows, in the order first measured.
func latencyRows(res *Results) []latencyRow {
	var rows []latencyRow
	add := func(what, ctl string, l Latency) {
		i := slices.IndexFunc(rows, func(r latencyRow) bool { return r.what == what })
		if i < 0 {
			rows = append(rows, latencyRow{what: what, by: map[string]Latency{}})
			i = len(rows) - 1
		}
		rows[i].by[ctl] = l
	}
	for _, t := range res.Throughput {
		if t.DriftP50ms != 0 {
			add(fmt.Sprintf("drift repair (a deleted ConfigMap back), %s N=%d", t.Workload, t.N), t.Controller,
				Latency{P50ms: t.DriftP50ms, P99ms: t.DriftP99ms})
		}
	}
	for _, l := range res.Latency {
		add(l.What, l.Controller, l)
	}
	return rows
}

// inOrder is res with its rows by workload, then N, whatever order the
// runs that measured them (a later one refining an earlier file) came in;
// the controllers keep theirs.
func inOrder(res *Results) *Results {
	sorted := *res
	sorted.Floors = byWorkloadThenN(res.Floors, func(f Floor) (string, int) { return f.Workload, f.N })
	sorted.Throughput = byWorkloadThenN(res.Throughput, func(t Throughput) (string, int) { return t.Workload, t.N })
	return &sorted
}

func byWorkloadThenN[T any](rows []T, key func(T) (workload string, n int)) []T {
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b T) int {
		aw, an := key(a)
		bw, bn := key(b)
		return cmp.Or(strings.Compare(aw, bw), cmp.Compare(an, bn))
	})
	return sorted
}

// fine prints seconds with two decimals below one, so a floor of a tenth
// of a second is not rounded by half.
func fine(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.2f", s)
	}
	return fmt.Sprintf("%.1f", s)
}

// coarse prints CPU seconds whole, with one decimal below ten, where
// whole seconds would round a small floor to nothing.
func coarse(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.1f", s)
	}
	return fmt.Sprintf("%.0f", s)
}

// ms prints milliseconds with one decimal below 100 ms.
func ms(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// plot draws time to ACTIVE per workload and N, one bar per controller and
// one for the floor, on a log scale.
func plot(res *Results) string {
	res = inOrder(res)
	ctls := controllerNames(res)
	series := append([]string{"floor"}, ctls...)
	colors := []string{"#9e9e9e", "#2e7d32", "#c62828", "#ef6c00", "#1565c0"}
	type group struct {
		label  string
		values []float64
	}
	var groups []group
	maxV := 1.0
	for _, f := range res.Floors {
		g := group{label: fmt.Sprintf("%s N=%d", f.Workload, f.N), values: []float64{f.Seconds}}
		for _, c := range ctls {
			v := 0.0
			for _, t := range res.Throughput {
				if t.Workload == f.Workload && t.N == f.N && t.Controller == c {
					v = t.Seconds
				}
			}
			g.values = append(g.values, v)
			maxV = max(maxV, v)
		}
		groups = append(groups, g)
	}
	const width, height, left, bottom, top = 960, 420, 60, 60, 40
	bar := 14.0
	gap := float64(width-left-20)/float64(max(1, len(groups))) - bar*float64(len(series))
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="%d" y="20" font-size="14">Seconds until all instances are ACTIVE (log scale), %s</text>`+"\n", left, res.measuredOn())
	logMax := math.Log10(maxV*2) + 1
	y := func(v float64) float64 {
		if v <= 0 {
			return float64(height - bottom)
		}
		return float64(height-bottom) - (math.Log10(v)+1)/logMax*float64(height-bottom-top)
	}
	for _, tick := range []float64{0.1, 1, 10, 100, 1000, 10000} {
		if tick > maxV*2 {
			break
		}
		fmt.Fprintf(&s, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%g s</text>`+"\n", left, width-10, y(tick), y(tick), left-4, y(tick)+4, tick)
	}
	x := float64(left) + gap/2
	for _, g := range groups {
		for i, v := range g.values {
			if v > 0 {
				fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.1f s</title></rect>`+"\n",
					x+float64(i)*bar, y(v), bar-2, float64(height-bottom)-y(v), colors[i%len(colors)], series[i], v)
			}
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x+bar*float64(len(series))/2, height-bottom+16, g.label)
		x += bar*float64(len(series)) + gap
	}
	for i, name := range series {
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			left+i*150, height-20, colors[i%len(colors)], left+i*150+14, height-11, name)
	}
	s.WriteString("</svg>\n")
	return s.String()
}
