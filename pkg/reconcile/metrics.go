package reconcile

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kro-agent/kro-agent/pkg/clusters"
)

var (
	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kro_agent_instance_reconcile_total",
		Help: "Instance reconciles by result (success, error).",
	}, []string{"result"})
	reconcileSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kro_agent_instance_reconcile_duration_seconds",
		Help:    "Duration of instance reconciles.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	})
	writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kro_agent_writes_total",
		Help: "Write requests the agent sent for instances, by kind of write and result.",
	}, []string{"write", "result"})
)

func init() {
	metrics.Registry.MustRegister(reconcileTotal, reconcileSeconds, writesTotal)
}

func observeReconcile(start time.Time, err error) {
	reconcileSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		reconcileTotal.WithLabelValues("error").Inc()
		return
	}
	reconcileTotal.WithLabelValues("success").Inc()
}

func countWrite(kind string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	writesTotal.WithLabelValues(kind, result).Inc()
}

// instancesDesc describes kro_agent_instances, which the engine's
// instanceCounter reports.
var instancesDesc = prometheus.NewDesc("kro_agent_instances",
	`Instances of each RGD's kind by status.state ("" for one not reconciled yet), as the leader's informers hold them.`,
	[]string{"rgd", "kind", "state"}, nil)

// instanceCounter counts the instances the engine serves when Prometheus
// scrapes, from the informers that hold them anyway: nothing is kept or
// updated between scrapes, and the count is what the cluster says, also
// of instances whose status another agent wrote.
type instanceCounter struct{ e *Engine }

// Describe implements prometheus.Collector.
func (c instanceCounter) Describe(ch chan<- *prometheus.Desc) { ch <- instancesDesc }

// countInstances registers the engine's instanceCounter while it runs
// (leads): the returned func unregisters it.
func (e *Engine) countInstances() (stop func()) {
	c := instanceCounter{e}
	if err := metrics.Registry.Register(c); err != nil {
		// Another engine of this process counts (tests run several).
		return func() {}
	}
	return func() { metrics.Registry.Unregister(c) }
}

// countedKind is a kind the engine serves, as the metrics count it.
type countedKind struct {
	rgdName  string
	gvk      schema.GroupVersionKind
	informer *watched
}

// countedKinds lists the kinds served, with their instance informers.
func (e *Engine) countedKinds() []countedKind {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]countedKind, 0, len(e.kinds))
	for gvk, s := range e.kinds {
		out = append(out, countedKind{rgdName: s.rgdName, gvk: gvk, informer: s.informer})
	}
	return out
}

// Collect implements prometheus.Collector.
func (c instanceCounter) Collect(ch chan<- prometheus.Metric) {
	for _, k := range c.e.countedKinds() {
		counts := map[string]int{}
		for _, obj := range k.informer.informer.GetStore().List() {
			if h, ok := obj.(*heldObject); ok {
				counts[h.state()]++
			}
		}
		for state, n := range counts {
			ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(n), k.rgdName, k.gvk.Kind, state)
		}
	}
}

// clusterReadyDesc describes kro_agent_cluster_ready, which clusterGauge
// reports.
var clusterReadyDesc = prometheus.NewDesc("kro_agent_cluster_ready",
	"Whether each registered workload Cluster was Ready at its last check (1) or not (0), as the leader checked it.",
	[]string{"cluster", "region"}, nil)

// clusterGauge reports the registry's clusters when Prometheus scrapes:
// an alert on a workload cluster that stopped needs no query of the
// Clusters' conditions.
type clusterGauge struct{ registry *clusters.Registry }

// Describe implements prometheus.Collector.
func (g clusterGauge) Describe(ch chan<- *prometheus.Desc) { ch <- clusterReadyDesc }

// Collect implements prometheus.Collector.
func (g clusterGauge) Collect(ch chan<- prometheus.Metric) {
	for _, c := range g.registry.Candidates() {
		ready := 0.0
		if c.Ready {
			ready = 1
		}
		ch <- prometheus.MustNewConstMetric(clusterReadyDesc, prometheus.GaugeValue, ready, c.Name, c.Region)
	}
}

// reportClusters registers the clusterGauge of registry while the leader
// checks the clusters: only its registry is filled.
func reportClusters(registry *clusters.Registry) manager.RunnableFunc {
	return func(ctx context.Context) error {
		g := clusterGauge{registry}
		if err := metrics.Registry.Register(g); err != nil {
			// Another agent of this process reports (tests run several).
			return nil
		}
		<-ctx.Done()
		metrics.Registry.Unregister(g)
		return nil
	}
}
