package reconcile

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kro-agent/kro-agent/pkg/clusters"
)

// Each registered cluster is one series, 1 while Ready and 0 otherwise;
// a deleted cluster has none.
func TestClusterGaugeReportsEachClusterAsLastChecked(t *testing.T) {
	registry := clusters.NewRegistry()
	registry.Set(clusters.Entry{Name: "eu-west-1", Region: "eu-west", Ready: true, Reachable: true})
	registry.Set(clusters.Entry{Name: "eu-west-2", Region: "eu-west", Message: "API server https://10.0.0.2: connection refused"})
	registry.Set(clusters.Entry{Name: "gone", Region: "ap-south", Ready: true})
	registry.Delete("gone")
	want := `
# HELP kro_agent_cluster_ready Whether each registered workload Cluster was Ready at its last check (1) or not (0), as the leader checked it.
# TYPE kro_agent_cluster_ready gauge
kro_agent_cluster_ready{cluster="eu-west-1",region="eu-west"} 1
kro_agent_cluster_ready{cluster="eu-west-2",region="eu-west"} 0
`
	if err := testutil.CollectAndCompare(clusterGauge{registry}, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
