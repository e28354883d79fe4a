package guard

import (
	"maps"
	"testing"
)

// Written by the agent as two identities (in its own cluster, and through
// a hub's kubeconfig for it), the policies recognise both, and record who
// wrote which; one writer changing its identity replaces only its entry.
func TestPoliciesRecogniseEveryRecordedIdentity(t *testing.T) {
	identities := map[string]string{Self: "system:serviceaccount:kro-system:kro-agent", ForCluster("home"): "hub"}
	policies := Policies(identities)
	labels, takeover := policies[0].Policy, policies[1].Policy
	if got, want := labels.Spec.MatchConditions[0].Expression, `!(request.userInfo.username in ["hub", "system:serviceaccount:kro-system:kro-agent"])`; got != want {
		t.Errorf("labels policy condition = %s, want %s", got, want)
	}
	if got, want := takeover.Spec.MatchConditions[0].Expression, `request.userInfo.username in ["hub", "system:serviceaccount:kro-system:kro-agent"]`; got != want {
		t.Errorf("no-takeover policy condition = %s, want %s", got, want)
	}
	if got := identitiesOf(labels); !maps.Equal(got, identities) {
		t.Errorf("identities read back = %v, want %v", got, identities)
	}
	// One identity for two writers is named once.
	one := Policies(map[string]string{Self: "a", ForCluster("home"): "a"})
	if got := one[0].Policy.Spec.MatchConditions[0].Expression; got != `request.userInfo.username != "a"` {
		t.Errorf("condition for one identity = %s", got)
	}
	// What another manager wrote records nothing.
	labels.Labels = nil
	if got := identitiesOf(labels); len(got) != 0 {
		t.Errorf("identities of a policy not kro-agent's = %v", got)
	}
}
