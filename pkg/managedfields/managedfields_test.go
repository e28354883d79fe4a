package managedfields

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

func object(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The fields kro-agent's apply held are found in a configuration by their
// keys, a key field the API server defaults (a port's protocol) left out
// as kro-agent sends it; what the configuration no longer sets is dropped,
// highest field first, and removed from the object.
func TestDropped(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{{
		Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},` +
			`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}},"k:{\"containerPort\":9090,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`),
	}}
	live := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: web, image: nginx, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 9090, protocol: TCP}]}]}}}}`)

	same := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: web, image: nginx, ports: [{containerPort: 80}, {containerPort: 9090}]}]}}}}`)
	if dropped, ok := Dropped(same, entries); !ok || len(dropped) != 0 {
		t.Errorf("the configuration kro-agent applied drops %v (ok %v), want nothing", dropped, ok)
	}

	fewer := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: web, ports: [{containerPort: 80}]}]}}}}`)
	dropped, ok := Dropped(fewer, entries)
	var got []string
	for _, p := range dropped {
		got = append(got, p.String())
	}
	want := []string{
		`.spec.template.spec.containers[name="web"].image`,
		`.spec.template.spec.containers[name="web"].ports[containerPort=9090,protocol="TCP"]`,
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Dropped = %q (ok %v), want %q", got, ok, want)
	}
	left := Remove(live, dropped)
	if want := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: web, ports: [{containerPort: 80, protocol: TCP}]}]}}}}`); !reflect.DeepEqual(left, want) {
		t.Errorf("Remove = %v, want %v", left, want)
	}
}

// A list whose items managedFields key merges item by item, whatever its
// length: the container and port kro-agent applied keep what the API
// server defaulted, what the template adds comes after them, and a
// container another manager added stays.
func TestMerged(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{{
		Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},` +
			`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`),
	}, {
		Manager: "injector", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`),
	}}
	live := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [
		{name: web, image: "nginx:1", imagePullPolicy: IfNotPresent, ports: [{containerPort: 80, protocol: TCP}]},
		{name: proxy, image: envoy, imagePullPolicy: IfNotPresent}]}}}}`)
	config := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [
		{name: web, image: "nginx:2", ports: [{containerPort: 80}, {containerPort: 9090}]},
		{name: metrics, image: exporter}]}}}}`)
	want := object(t, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [
		{name: web, image: "nginx:2", imagePullPolicy: IfNotPresent, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 9090}]},
		{name: metrics, image: exporter},
		{name: proxy, image: envoy, imagePullPolicy: IfNotPresent}]}}}}`)
	if got := Merged(live, config, entries); !reflect.DeepEqual(got, want) {
		t.Errorf("Merged =\n%v\nwant\n%v", got, want)
	}
}

// LaidOver is a first apply by a manager of its own: what kro-agent's
// apply held and config does not set stays, where Merged takes it out;
// lists merge by the keys managedFields name all the same.
func TestLaidOver(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{{
		Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}}}}`),
	}}
	live := object(t, `{apiVersion: example.com/v1, kind: Widget, spec: {size: 3, ports: [{name: http, port: 80, protocol: TCP}]}}`)
	config := object(t, `{apiVersion: example.com/v1, kind: Widget, spec: {ports: [{name: http, port: 8080}]}}`)
	want := object(t, `{apiVersion: example.com/v1, kind: Widget, spec: {size: 3, ports: [{name: http, port: 8080, protocol: TCP}]}}`)
	if got := LaidOver(live, config, entries); !reflect.DeepEqual(got, want) {
		t.Errorf("LaidOver =\n%v\nwant\n%v", got, want)
	}
	live = object(t, `{apiVersion: example.com/v1, kind: Widget, spec: {size: 3, ports: [{name: http, port: 80, protocol: TCP}]}}`)
	if got := Merged(live, config, entries); got["spec"].(map[string]any)["size"] != nil {
		t.Errorf("Merged keeps the size kro-agent's apply set and config does not: %v", got)
	}
}

// Another manager's entry of another version of the kind still holds its
// fields, named as in the configuration's version: what it holds is not
// dropped, and the rest still is. kro-agent's own entry of another version
// cannot tell what its apply set.
func TestDroppedBesideAnotherVersion(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{
		Manager: ownership.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v2", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{},"f:color":{},"f:shape":{}}}`),
	}
	theirs := metav1.ManagedFieldsEntry{
		Manager: "sizer", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{}}}`),
	}
	config := object(t, `{apiVersion: example.com/v2, kind: Widget, spec: {shape: round}}`)

	dropped, ok := Dropped(config, []metav1.ManagedFieldsEntry{ours, theirs})
	var got []string
	for _, p := range dropped {
		got = append(got, p.String())
	}
	if want := []string{".spec.color"}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Dropped beside another version's manager = %q (ok %v), want %q", got, ok, want)
	}

	ours.APIVersion = "example.com/v1"
	if dropped, ok := Dropped(config, []metav1.ManagedFieldsEntry{ours, theirs}); ok {
		t.Errorf("Dropped with kro-agent's own entry of another version = %v, want it unable to tell", dropped)
	}
}
