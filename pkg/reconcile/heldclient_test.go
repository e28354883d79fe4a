package reconcile

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restwatch "k8s.io/client-go/rest/watch"
)

func TestHeldCodecDecodesAListPage(t *testing.T) {
	item, _ := managedDeployment().MarshalJSON()
	page := `{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{"resourceVersion":"77","continue":"next"},"items":[` +
		string(item) + `,{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","namespace":"shop","resourceVersion":"43"}}]}`
	obj, err := runtime.Decode(heldCodec{}, []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	// What the reflector and its pager read of a list.
	la, err := meta.ListAccessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if la.GetResourceVersion() != "77" || la.GetContinue() != "next" {
		t.Errorf("list resourceVersion, continue = %q, %q; want 77, next", la.GetResourceVersion(), la.GetContinue())
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		h := it.(*heldObject)
		names = append(names, h.meta.Namespace+"/"+h.meta.Name+"@"+h.meta.ResourceVersion)
	}
	if want := []string{"shop/web@42", "shop/api@43"}; !reflect.DeepEqual(names, want) {
		t.Errorf("items = %v, want %v", names, want)
	}
	got, err := items[0].(*heldObject).object()
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "metadata", "managedFields"); found {
		t.Error("a listed object kept its managedFields")
	}
}

func TestHeldCodecDecodesAnEmptyListPage(t *testing.T) {
	for _, items := range []string{`[]`, `null`} {
		obj, err := runtime.Decode(heldCodec{}, []byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":`+items+`}`))
		if err != nil {
			t.Fatalf("items %s: %v", items, err)
		}
		if got, err := meta.ExtractList(obj); err != nil || len(got) != 0 {
			t.Errorf("items %s: ExtractList = %v, %v; want no items", items, got, err)
		}
	}
	if _, err := runtime.Decode(heldCodec{}, []byte(`{"apiVersion":"v1","kind":"ConfigMapList","items":{}}`)); err == nil {
		t.Error("a list whose items are not an array was decoded")
	}
}

func TestHeldCodecDecodesStatusAsAnAPIError(t *testing.T) {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps is forbidden: User \"kro-agent\" cannot list resource","reason":"Forbidden","code":403}`
	obj, err := runtime.Decode(heldCodec{}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	status, ok := obj.(*metav1.Status)
	if !ok {
		t.Fatalf("decoded a Status into %T", obj)
	}
	if err := apierrors.FromObject(status); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot list") {
		t.Errorf("error from the Status = %v; want the Forbidden error with its message", err)
	}
}

// A watch stream decoded the way client-go's REST client decodes it, with
// the codec as both the frame and the object decoder.
func TestHeldCodecDecodesAWatchStream(t *testing.T) {
	added, _ := managedDeployment().MarshalJSON()
	stream := `{"type":"ADDED","object":` + string(added) + `}
{"type":"BOOKMARK","object":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"resourceVersion":"50","annotations":{"k8s.io/initial-events-end":"true"}}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (50)","reason":"Expired","code":410}}
`
	frames := serializerjson.Framer.NewFrameReader(io.NopCloser(strings.NewReader(stream)))
	d := restwatch.NewDecoder(streaming.NewDecoder(frames, heldCodec{}), heldCodec{})

	typ, obj, err := d.Decode()
	if err != nil || typ != watch.Added {
		t.Fatalf("first event: %v, %v; want ADDED", typ, err)
	}
	if h := obj.(*heldObject); h.meta.Name != "web" || h.meta.Labels[heldLabels[0]] != "inst-1" {
		t.Errorf("added object = %+v", h.meta)
	}

	typ, obj, err = d.Decode()
	if err != nil || typ != watch.Bookmark {
		t.Fatalf("second event: %v, %v; want BOOKMARK", typ, err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetResourceVersion() != "50" || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Errorf("bookmark = rv %q annotations %v; want rv 50 and the end of the initial events", m.GetResourceVersion(), m.GetAnnotations())
	}

	typ, obj, err = d.Decode()
	if err != nil || typ != watch.Error {
		t.Fatalf("third event: %v, %v; want ERROR", typ, err)
	}
	if err := apierrors.FromObject(obj); !apierrors.IsResourceExpired(err) {
		t.Errorf("error event = %v; want Expired", err)
	}
}

func TestHeldObjectWithoutManagedFieldsKeepsItsBytes(t *testing.T) {
	data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b","labels":{"team":"x"}},"data":{"k":"v"}}`)
	h, err := holdJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h.raw, data) {
		t.Errorf("raw = %s, want the object as sent", h.raw)
	}
	if h.meta.Labels != nil {
		t.Errorf("labels kept = %v; want only the routing labels, here none", h.meta.Labels)
	}
	data[2] = 'X' // the caller's buffer is its own
	if h.raw[2] == 'X' {
		t.Error("the held object shares the caller's buffer")
	}
}

func TestHeldCodecNamesWhatItCannotDecode(t *testing.T) {
	_, err := runtime.Decode(heldCodec{}, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":7}}`))
	if err == nil || !strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("error = %v; want one naming metadata.name", err)
	}
}

func TestResourcePath(t *testing.T) {
	for gvr, want := range map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}:                   "/api/v1/configmaps",
		{Group: "apps", Version: "v1", Resource: "deployments"}:   "/apis/apps/v1/deployments",
		{Group: "kro.run", Version: "v1alpha1", Resource: "webs"}: "/apis/kro.run/v1alpha1/webs",
	} {
		if got := resourcePath(gvr); got != want {
			t.Errorf("resourcePath(%v) = %q, want %q", gvr, got, want)
		}
	}
}

// BenchmarkHoldDeploymentEvent is the agent's cost of one watch event of a
// Deployment: decoded straight into a held object, and (for comparison) as
// a dynamic informer decodes it before it could be held.
func BenchmarkHoldDeploymentEvent(b *testing.B) {
	data := deploymentJSON(b)
	b.Run("held", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.Decode(heldCodec{}, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unstructured-then-held", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
			u.SetManagedFields(nil)
			if _, err := u.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// deploymentJSON is a Deployment as the API server sends it mid-rollout:
// defaulted spec, managedFields of three managers, status with conditions.
func deploymentJSON(b *testing.B) []byte {
	b.Helper()
	return []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bench-0042","namespace":"bench-3","uid":"7d4f9a52-2b1e-4c55-9a49-5f0c3a1b2c3d","resourceVersion":"123456","generation":1,"creationTimestamp":"2026-11-21T10:00:00Z","labels":{"kro.run/owned":"true","kro.run/instance-id":"0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f","kro.run/instance-name":"bench-0042","kro.run/instance-namespace":"bench-3","kro.run/resource-graph-definition-name":"podbench","kro.run/node-id":"deploy","applyset.kubernetes.io/part-of":"applyset-abc"},"annotations":{"deployment.kubernetes.io/revision":"1"},"managedFields":[{"manager":"kro-agent","operation":"Apply","apiVersion":"apps/v1","time":"2026-11-21T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:kro.run/owned":{},"f:kro.run/instance-id":{},"f:kro.run/instance-name":{},"f:kro.run/instance-namespace":{},"f:kro.run/resource-graph-definition-name":{},"f:kro.run/node-id":{},"f:applyset.kubernetes.io/part-of":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{"k:{\"name\":\"CONFIG\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{}}}}}}}},{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2026-11-21T10:00:20Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}},"subresource":"status"}]},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"bench-0042"}},"template":{"metadata":{"labels":{"app":"bench-0042"}},"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"CONFIG","value":"bench-0042"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2026-11-21T10:00:20Z","lastTransitionTime":"2026-11-21T10:00:20Z","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},{"type":"Progressing","status":"True","lastUpdateTime":"2026-11-21T10:00:20Z","lastTransitionTime":"2026-11-21T10:00:05Z","reason":"NewReplicaSetAvailable","message":"ReplicaSet \"bench-0042-5d4c\" has successfully progressed."}]}}`)
}

func TestHeldClientNeedsAConnection(t *testing.T) {
	if _, err := newHeldClient(nil); err == nil || !strings.Contains(err.Error(), "no connection") {
		t.Errorf("newHeldClient(nil) = %v; want an error saying no connection was configured", err)
	}
}
