//go:build e2e

package e2e

import (
	"fmt"
	"sync"
	"testing"

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
