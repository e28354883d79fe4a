package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
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
