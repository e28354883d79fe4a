package reconcile

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

func managedDeployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
			"labels": map[string]any{
				v1alpha1.LabelInstanceID:        "inst-1",
				v1alpha1.LabelInstanceName:      "store",
				v1alpha1.LabelInstanceNamespace: "shop",
				v1alpha1.LabelRGDName:           "webapp",
				v1alpha1.LabelNodeID:            "deployment",
				"team":                          "payments",
			},
			"managedFields": []any{
				map[string]any{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}}},
				map[string]any{"manager": "kro-agent", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{}}},
			},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"availableReplicas": int64(1)},
	}}
}

// heldDeployment is managedDeployment as an informer holds it.
func heldDeployment(t testing.TB) *heldObject {
	t.Helper()
	return held(t, managedDeployment())
}

// held is u as an informer holds it.
func held(t testing.TB, u *unstructured.Unstructured) *heldObject {
	t.Helper()
	data, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	h, err := holdJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHeldObjectDecodesToTheObjectWithoutManagedFields(t *testing.T) {
	held := heldDeployment(t)
	got, err := held.object()
	if err != nil {
		t.Fatal(err)
	}
	want := managedDeployment()
	unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("decoded\n%v\nwant\n%v", got.Object, want.Object)
	}
	// Every reader gets its own copy: changing one leaves the cache as it was.
	got.SetName("changed")
	again, _ := held.object()
	if again.GetName() != "web" {
		t.Errorf("a reader's change reached the cache: name %q", again.GetName())
	}
}

func TestHeldObjectKeepsWhatTheInformerAndRoutingRead(t *testing.T) {
	held := heldDeployment(t)
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(held); err != nil || key != "shop/web" {
		t.Errorf("store key = %q, %v; want shop/web", key, err)
	}
	if ids, err := byInstanceID(held); err != nil || !reflect.DeepEqual(ids, []string{"inst-1"}) {
		t.Errorf("instance index = %v, %v; want [inst-1]", ids, err)
	}
	m, ok := heldMeta(cache.DeletedFinalStateUnknown{Key: "shop/web", Obj: held})
	if !ok {
		t.Fatal("a tombstone's metadata is not read")
	}
	wantLabels := map[string]string{
		v1alpha1.LabelInstanceID: "inst-1", v1alpha1.LabelInstanceName: "store",
		v1alpha1.LabelInstanceNamespace: "shop", v1alpha1.LabelRGDName: "webapp",
		v1alpha1.LabelNodeID: "deployment",
	}
	if !reflect.DeepEqual(m.Labels, wantLabels) {
		t.Errorf("kept labels = %v, want %v", m.Labels, wantLabels)
	}
	if held.meta.UID != "u-1" || held.meta.ResourceVersion != "42" {
		t.Errorf("uid, resourceVersion = %q, %q; want u-1, 42", held.meta.UID, held.meta.ResourceVersion)
	}
	if held.meta.DeletionTimestamp != nil {
		t.Errorf("deletionTimestamp = %v on an object that is not being deleted", held.meta.DeletionTimestamp)
	}
}

func TestHeldObjectKeepsItsDeletionTimestamp(t *testing.T) {
	u := managedDeployment()
	u.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-22T06:00:00Z"
	want := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	if ts := held(t, u).meta.DeletionTimestamp; ts == nil || !ts.Time.Equal(want) {
		t.Errorf("deletionTimestamp = %v, want %v", ts, want)
	}

	u.Object["metadata"].(map[string]any)["deletionTimestamp"] = "yesterday"
	data, _ := u.MarshalJSON()
	if _, err := holdJSON(data); err == nil || !strings.Contains(err.Error(), "metadata.deletionTimestamp") {
		t.Errorf("a malformed deletionTimestamp gave %v, want an error naming the field", err)
	}
}

// The metrics count instances by the state their held JSON says, read
// without decoding the rest.
func TestHeldObjectState(t *testing.T) {
	for _, tc := range []struct {
		json, want string
	}{
		{`{"metadata":{"name":"a"},"status":{"conditions":[{"type":"Ready"}],"state":"ACTIVE"}}`, "ACTIVE"},
		{`{"status":{"state":"ERROR","state":"IN_PROGRESS"},"metadata":{"name":"a"}}`, "IN_PROGRESS"},
		{`{"metadata":{"name":"a"},"spec":{"state":"ACTIVE"}}`, ""},
		{`{"metadata":{"name":"a"},"status":{"state":3}}`, ""},
		{`{"metadata":{"name":"a"},"status":null}`, ""},
	} {
		h, err := holdJSON([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.state(); got != tc.want {
			t.Errorf("state of %s = %q, want %q", tc.json, got, tc.want)
		}
	}
}

func TestMembersAreReadFromTheCacheByNode(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &heldObject{}, 0, cache.Indexers{indexInstance: byInstanceID})
	// The informer of another version holds the same objects.
	oldDeployments := schema.GroupVersionResource{Group: "apps", Version: "v1beta2", Resource: "deployments"}
	oldInf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &heldObject{}, 0, cache.Indexers{indexInstance: byInstanceID})
	w := &managedInformers{byGVR: map[schema.GroupVersionResource]*watched{deployments: {informer: inf}, oldDeployments: {informer: oldInf}}}

	web := heldDeployment(t)
	u := managedDeployment()
	u.SetName("old")
	u.SetUID("u-2")
	u.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-22T06:00:00Z"
	other := managedDeployment()
	other.SetName("other")
	other.SetLabels(map[string]string{v1alpha1.LabelInstanceID: "inst-2", v1alpha1.LabelNodeID: "deployment"})
	// The instance's labels, copied by the controller that created it
	// (or written by hand): not kro-agent's.
	copied := managedDeployment()
	copied.SetName("copied")
	copied.SetUID("u-3")
	copied.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kro-agent", Operation: metav1.ManagedFieldsOperationUpdate}, {Manager: "operator", Operation: metav1.ManagedFieldsOperationApply}})
	noFields := managedDeployment()
	noFields.SetName("nofields")
	noFields.SetUID("u-4")
	noFields.SetManagedFields(nil)
	for _, h := range []*heldObject{web, held(t, u), held(t, other), held(t, copied), held(t, noFields)} {
		for _, i := range []cache.SharedIndexInformer{inf, oldInf} {
			if err := i.GetIndexer().Add(h); err != nil {
				t.Fatal(err)
			}
		}
	}

	got := w.members("inst-1")
	slices.SortFunc(got["deployment"], func(a, b member) int { return strings.Compare(a.name, b.name) })
	for i := range got["deployment"] {
		// Either informer's version names the object.
		if m := &got["deployment"][i]; m.gvr == oldDeployments {
			m.gvr = deployments
		}
	}
	want := map[string][]member{"deployment": {
		{gvr: deployments, namespace: "shop", name: "old", uid: "u-2", terminating: true},
		{gvr: deployments, namespace: "shop", name: "web", uid: "u-1"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("members = %+v, want %+v", got, want)
	}
}

// An object is kro-agent's when an entry of its managedFields is
// kro-agent's apply, wherever that entry is and in whatever order its
// members come; an update by kro-agent's name, or an apply by another, is
// not.
func TestAppliedByAgent(t *testing.T) {
	for _, tc := range []struct {
		managedFields string
		want          bool
	}{
		{`[{"manager":"kro-agent","operation":"Apply","fieldsV1":{"f:data":{}}}]`, true},
		{`[{"manager":"kubectl","operation":"Update"},{"manager":"kro-agent","operation":"Apply"}]`, true},
		{`[{"operation":"Apply","time":"2026-11-27T10:00:00Z","manager":"kro-agent"}]`, true},
		{`[{"manager":"kro-agent","operation":"Update"},{"manager":"operator","operation":"Apply"}]`, false},
		{`[]`, false},
		{`null`, false},
	} {
		got, err := appliedByAgent([]byte(tc.managedFields))
		if err != nil || got != tc.want {
			t.Errorf("appliedByAgent(%s) = %v, %v; want %v", tc.managedFields, got, err, tc.want)
		}
	}
	if _, err := appliedByAgent([]byte(`[{"manager":1,"operation":"Apply"}]`)); err == nil {
		t.Error("a manager that is not a string was accepted")
	}
}
