package quota

import "testing"

func TestRefusedBy(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    string
	}{
		// The API server's words (k8s.io/apiserver's resourcequota admission).
		{`configmaps "a" is forbidden: exceeded quota: team-quota, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2`, "team-quota"},
		{`persistentvolumeclaims "data" is forbidden: status unknown for quota: storage, resources: requests.storage`, "storage"},
		// As a condition of the instance quotes it.
		{`applying ConfigMap a (resource cm) in the local cluster: configmaps "a" is forbidden: exceeded quota: q.1, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`, "q.1"},
		// Refusals that no change of the quota's usage lifts.
		{`pods "p" is forbidden: failed quota: compute: must specify limits.cpu for: app`, ""},
		{`configmaps "a" is forbidden: insufficient quota to consume: count/configmaps`, ""},
		{`configmaps "a" already exists`, ""},
	} {
		got, ok := RefusedBy(tc.message)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("RefusedBy(%q) = %q, %v; want %q", tc.message, got, ok, tc.want)
		}
	}
}
