package graph

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkCompileExamples compiles each example RGD, as the agent does
// once per RGD generation, and reports what compiled graphs keep alive,
// which the agent holds for as long as each generation is current:
// first-retained-B is the heap a lone compiled graph holds; retained-B/op
// what each further one adds while the first is alive (RGDs that give the
// same kinds the same ids share those kinds' CEL types).
func BenchmarkCompileExamples(b *testing.B) {
	paths, err := filepath.Glob("../../examples/*/rgd.yaml")
	if err != nil || len(paths) == 0 {
		b.Fatalf("no example RGDs: %v", err)
	}
	resolver := builtin(b)
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		rgd := parseRGD(b, string(raw))
		compile := func() *Graph {
			g, err := Compile(rgd, Options{Resolver: resolver})
			if err != nil {
				b.Fatal(err)
			}
			return g
		}
		b.Run(filepath.Base(filepath.Dir(path)), func(b *testing.B) {
			b.ReportAllocs()
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			start := heap()
			graphs := []*Graph{compile()}
			first := heap()
			for b.Loop() {
				graphs = append(graphs, compile())
			}
			b.StopTimer()
			end := heap()
			b.ReportMetric(float64(first)-float64(start), "first-retained-B")
			b.ReportMetric((float64(end)-float64(first))/float64(len(graphs)-1), "retained-B/op")
			runtime.KeepAlive(graphs)
		})
	}
}
