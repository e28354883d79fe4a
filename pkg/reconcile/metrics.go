package reconcile

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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
