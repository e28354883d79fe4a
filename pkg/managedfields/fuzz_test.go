package managedfields

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// FuzzDroppedAndMerged feeds objects and managedFields of any shape (the
// plugin reads them from whatever the API server holds, which other
// controllers write): nothing panics, each field Dropped names is one the
// configuration does not set and that kro-agent's entry holds, and a
// configuration merged over itself is what it was (the third seed: a key
// named twice, and an item that is no object, in a keyed list).
func FuzzDroppedAndMerged(f *testing.F) {
	f.Add(`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"a","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"web","ports":[{"containerPort":80}]}]}}}}`,
		`{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`,
		`{"f:spec":{"f:replicas":{}}}`)
	f.Add(`{"a":[1,2,3],"b":{"c":null}}`, `{"a":[1],"b":"x"}`,
		`{"f:a":{"v:1":{},"v:2":{},"i:2":{}},"f:b":{"f:c":{}}}`, `{"f:a":{"i:0":{}}}`)
	f.Add(`{"l":[{"k":1},{"k":"1"},7]}`, `{"l":[{"k":1,"x":2},[]]}`,
		`{"f:l":{"k:{\"k\":1}":{"f:x":{}},"k:{\"k\":\"1\"}":{".":{}}}}`, `{"f:l":{"k:{\"k\":2}":{}}}`)
	f.Fuzz(func(t *testing.T, liveJSON, configJSON, oursJSON, theirsJSON string) {
		var live, config map[string]any
		if json.Unmarshal([]byte(liveJSON), &live) != nil || json.Unmarshal([]byte(configJSON), &config) != nil {
			return
		}
		config["apiVersion"] = "example.com/v1"
		entries := []metav1.ManagedFieldsEntry{
			{Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(oursJSON)},
			{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(theirsJSON)},
		}
		ours, _, _ := heldFields(config, entries[:1])
		dropped, ok := Dropped(config, entries)
		if ok {
			for _, p := range dropped {
				if sets(config, p) {
					t.Errorf("Dropped names %s, which the configuration sets", p)
				}
				if !ours.Has(p) {
					t.Errorf("Dropped names %s, which kro-agent's entry does not hold", p)
				}
			}
		}
		_ = Remove(deepCopy(live), dropped)

		_ = Merged(deepCopy(live), deepCopy(config), entries)
		// Laid over itself, a configuration is what it was (what Dropped
		// takes out is what it does not set).
		self := Merged(deepCopy(config), deepCopy(config), entries)
		if !reflect.DeepEqual(self, config) {
			t.Errorf("Merged of the configuration over itself =\n%v\nwant\n%v", self, config)
		}
	})
}

func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}
