package quota

import "testing"

func TestRefusedBy(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    Refusal
	}{
		// The API server's words (k8s.io/apiserver's resourcequota admission).
		{`configmaps "a" is forbidden: exceeded quota: team-quota, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2`, Refusal{Quota: "team-quota"}},
		{`persistentvolumeclaims "data" is forbidden: status unknown for quota: storage, resources: requests.storage`, Refusal{Quota: "storage"}},
		// The Pod evaluator's words for what the Pod does not specify.
		{`pods "p" is forbidden: failed quota: compute: must specify cpu for: app; memory for: app,sidecar`, Refusal{Quota: "compute", Unspecified: true}},
		// As a condition of the instance quotes it.
		{`applying ConfigMap a (resource cm) in the local cluster: configmaps "a" is forbidden: exceeded quota: q.1, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`, Refusal{Quota: "q.1"}},
	} {
		got, ok := RefusedBy(tc.message)
		if got != tc.want || !ok {
			t.Errorf("RefusedBy(%q) = %+v, %v; want %+v", tc.message, got, ok, tc.want)
		}
	}
	for _, message := range []string{
		// Neither no room nor an unspecified request: no change of a
		// quota's limits is known to lift them.
		`configmaps "a" is forbidden: insufficient quota to consume: count/configmaps`,
		`pods "p" is forbidden: failed quota: compute: error on matching scope`,
		`configmaps "a" already exists`,
	} {
		if got, ok := RefusedBy(message); ok {
			t.Errorf("RefusedBy(%q) = %+v; want no quota refusal", message, got)
		}
	}
}
