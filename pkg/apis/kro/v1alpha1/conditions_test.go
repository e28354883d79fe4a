package v1alpha1

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ControllerReady names the kind served as a manifest would, apiVersion
// then kind, not as Go prints a GroupVersionKind.
func TestServingNamesTheKind(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	var s ResourceGraphDefinitionStatus
	s.MarkServing(3, gvk)
	if c := meta.FindStatusCondition(s.Conditions, ConditionControllerReady); c == nil || c.Message != "serving instances of kro.run/v1alpha1 WebApp" {
		t.Errorf("ControllerReady = %+v", c)
	}
	s.MarkServingEarlier(4, 3, gvk)
	if c := meta.FindStatusCondition(s.Conditions, ConditionControllerReady); c == nil || c.Reason != ReasonServingEarlierGeneration ||
		c.Message != "serving instances of kro.run/v1alpha1 WebApp with the graph of generation 3: generation 4 is not applied (see KindReady)" {
		t.Errorf("ControllerReady = %+v", c)
	}
}

// GraphAccepted names the resources in order, the first twenty of a large
// graph; status.topologicalOrder keeps them all.
func TestGraphAcceptedNamesTheOrder(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "resource graph is valid and has no resources"},
		{2, "resource graph is valid: r0 -> r1"},
		{21, "resource graph is valid: r0 -> r1 -> r2 -> r3 -> r4 -> r5 -> r6 -> r7 -> r8 -> r9 -> r10 -> r11 -> r12 -> r13 -> r14 -> r15 -> r16 -> r17 -> r18 -> r19 -> r20"},
		{450, "resource graph is valid: r0 -> r1 -> r2 -> r3 -> r4 -> r5 -> r6 -> r7 -> r8 -> r9 -> r10 -> r11 -> r12 -> r13 -> r14 -> r15 -> r16 -> r17 -> r18 -> r19 -> ... and 430 more (status.topologicalOrder lists all 450)"},
	} {
		var order []string
		for i := range tc.n {
			order = append(order, fmt.Sprintf("r%d", i))
		}
		var s ResourceGraphDefinitionStatus
		s.MarkGraphAccepted(1, order, nil, nil)
		if c := meta.FindStatusCondition(s.Conditions, ConditionGraphAccepted); c == nil || c.Message != tc.want {
			t.Errorf("%d resources: GraphAccepted = %+v, want the message %q", tc.n, c, tc.want)
		}
		if len(s.TopologicalOrder) != tc.n {
			t.Errorf("%d resources: topologicalOrder has %d", tc.n, len(s.TopologicalOrder))
		}
	}
	// Warnings follow the order, one per line.
	var s ResourceGraphDefinitionStatus
	s.MarkGraphAccepted(1, []string{"a", "b"}, nil, []string{"first", "second"})
	if c := meta.FindStatusCondition(s.Conditions, ConditionGraphAccepted); c == nil || c.Message != "resource graph is valid: a -> b\nWarning: first\nWarning: second" || c.Status != metav1.ConditionTrue {
		t.Errorf("GraphAccepted = %+v, want it True with each warning on a line", c)
	}
}
