package graph

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkCompileExamples compiles each example RGD, as the agent does
// once per RGD generation. retained-B/op is what a compiled graph keeps
// alive, which the agent holds for as long as the generation is current.
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
		b.Run(filepath.Base(filepath.Dir(path)), func(b *testing.B) {
			b.ReportAllocs()
			graphs := make([]*Graph, 0, b.N)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				g, err := Compile(rgd, Options{Resolver: resolver})
				if err != nil {
					b.Fatal(err)
				}
				graphs = append(graphs, g)
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(graphs)), "retained-B/op")
			runtime.KeepAlive(graphs)
		})
	}
}
