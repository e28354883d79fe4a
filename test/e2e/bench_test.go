//go:build e2e

package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

var benchSetup sync.Once

// BenchmarkTree measures `kubectl kro tree` on a ready WebApp in a namespace
// next to 1000 unrelated ConfigMaps (a benchmark, not a timed test):
//
//	go test -tags e2e ./test/e2e -run '^$' -bench Tree
func BenchmarkTree(b *testing.B) {
	t := b
	cfg := testenv.EnvConf()
	const ns = "bench-tree"
	benchSetup.Do(func() {
		c := agentIn(t, cfg, ns)
		c.apply(t, example(t, "webapp", "rgd.yaml"))
		c.waitRGDActive(t, "webapp")
		c.apply(t, webapp(ns, "bench", ", replicas: 1"))
		c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "bench", v1alpha1.InstanceActive)
		createNoise(t, c, ns, 1000)
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err := kro(t, cfg, nil, "tree", "webapp", "bench", "-n", ns); err != nil {
			b.Fatal(fmt.Errorf("%w\n%s", err, out))
		}
	}
}

// BenchmarkCollection measures an instance whose collection has 500
// ConfigMaps: seconds from its create until it is ACTIVE, and from its
// delete until it is gone with every item (a benchmark, not a timed test):
//
//	go test -tags e2e ./test/e2e -run '^$' -bench Collection -benchtime 3x
func BenchmarkCollection(b *testing.B) {
	cfg := testenv.EnvConf()
	const ns = "bench-collection"
	c := agentIn(b, cfg, ns)
	c.apply(b, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: benchcollections}
spec:
  schema:
    apiVersion: v1alpha1
    kind: BenchCollection
    spec: {items: integer}
    status: {items: "${size(shards)}"}
  resources:
  - id: shards
    forEach: [{i: "${lists.range(schema.spec.items)}"}]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${string(i)}"}
      data: {index: "${string(i)}"}`)
	c.waitRGDActive(b, "benchcollections")
	var active, gone time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("shards%d", i)
		start := time.Now()
		c.apply(b, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: BenchCollection, metadata: {name: %s, namespace: %s}, spec: {items: 500}}", name, ns))
		c.waitState(b, "kro.run/v1alpha1", "BenchCollection", ns, name, v1alpha1.InstanceActive)
		active += time.Since(start)
		start = time.Now()
		c.deleteAll(b, "kro.run/v1alpha1", "BenchCollection", ns, name)
		gone += time.Since(start)
	}
	b.ReportMetric(active.Seconds()/float64(b.N), "s-to-active/op")
	b.ReportMetric(gone.Seconds()/float64(b.N), "s-to-gone/op")
}
