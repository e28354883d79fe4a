package takeover

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// patched applies Patch's result to an object holding entries and returns
// the entries and resourceVersion it ends with; nil when there is no patch.
func patched(t *testing.T, entries ...metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("ConfigMap")
	obj.SetName("demo-config")
	obj.SetResourceVersion("42")
	obj.SetManagedFields(entries)
	patch, err := Patch(obj, "kro-agent")
	if err != nil {
		t.Fatal(err)
	}
	if patch == nil {
		return nil, ""
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("not a JSON patch: %v\n%s", err, patch)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatal(err)
	}
	var after unstructured.Unstructured
	if err := json.Unmarshal(out, &after.Object); err != nil {
		t.Fatal(err)
	}
	return after.GetManagedFields(), after.GetResourceVersion()
}

func TestKrosFieldsBecomeTheAgents(t *testing.T) {
	kro := entry(KroFieldManager, metav1.ManagedFieldsOperationApply, "v1", "",
		`{"f:data":{"f:GREETING":{},"f:OLD":{}},"f:metadata":{"f:labels":{"f:kro.run/instance-kind":{}}}}`)
	agent := entry("kro-agent", metav1.ManagedFieldsOperationApply, "v1", "", `{"f:data":{"f:GREETING":{},"f:NEW":{}}}`)
	editor := entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "v1", "", `{"f:data":{"f:MINE":{}}}`)
	status := entry(KroFieldManager, metav1.ManagedFieldsOperationApply, "v1", "status", `{"f:status":{}}`)

	got, rv := patched(t, kro, agent, editor, status)
	merged := entry("kro-agent", metav1.ManagedFieldsOperationApply, "v1", "",
		`{"f:data":{"f:GREETING":{},"f:NEW":{},"f:OLD":{}},"f:metadata":{"f:labels":{"f:kro.run/instance-kind":{}}}}`)
	if want := []metav1.ManagedFieldsEntry{merged, editor, status}; !reflect.DeepEqual(got, want) {
		t.Errorf("with an entry of the agent's:\n got %+v\nwant %+v", got, want)
	}
	if rv != "42" {
		t.Errorf("resourceVersion %q: the patch must hold the version it was computed from", rv)
	}

	// Before the agent's first apply: kro's entry is renamed.
	got, _ = patched(t, editor, kro)
	renamed := kro
	renamed.Manager = "kro-agent"
	if want := []metav1.ManagedFieldsEntry{editor, renamed}; !reflect.DeepEqual(got, want) {
		t.Errorf("without an entry of the agent's:\n got %+v\nwant %+v", got, want)
	}
}

func TestNothingToTake(t *testing.T) {
	agent := entry("kro-agent", metav1.ManagedFieldsOperationApply, "v1", "", `{"f:data":{}}`)
	for name, entries := range map[string][]metav1.ManagedFieldsEntry{
		"no entry of kro's":   {agent},
		"kro's updates only":  {agent, entry(KroFieldManager, metav1.ManagedFieldsOperationUpdate, "v1", "", `{"f:data":{}}`)},
		"another API version": {entry("kro-agent", metav1.ManagedFieldsOperationApply, "apps/v1", "", `{"f:spec":{}}`), entry(KroFieldManager, metav1.ManagedFieldsOperationApply, "apps/v1beta1", "", `{"f:spec":{}}`)},
	} {
		if got, _ := patched(t, entries...); got != nil {
			t.Errorf("%s: patched to %+v, want no patch", name, got)
		}
	}
}

// Held reads the managers off the object as the API server returns it.
func TestHeld(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{entry("kro-agent", metav1.ManagedFieldsOperationApply, "v1", "", `{"f:data":{}}`)})
	if Held(obj.Object) {
		t.Error("Held without an entry of kro's")
	}
	obj.SetManagedFields(append(obj.GetManagedFields(), entry(KroFieldManager, metav1.ManagedFieldsOperationApply, "v1", "", `{"f:data":{}}`)))
	if !Held(obj.Object) {
		t.Error("not Held with an entry of kro's")
	}
	if Held(map[string]any{"metadata": "not an object"}) {
		t.Error("Held for a malformed object")
	}
}
