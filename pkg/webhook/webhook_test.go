package webhook

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

func testServer(t testing.TB) http.Handler {
	t.Helper()
	r, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		RGDs: &RGDValidator{Resolver: r},
		Instance: &InstanceLabeler{AgentUser: testAgent, Lookup: func(_ context.Context, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, bool) {
			rgd := &v1alpha1.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "webapp", UID: "rgd-uid"}}
			rgd.Spec.Resources = []*v1alpha1.Resource{
				{ID: "deploy", Template: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`)}},
				{ID: "config", Template: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)}},
			}
			return rgd, gvk.Kind == "WebApp"
		}},
	}
	return s.Handler()
}

// review posts the AdmissionReview of a create and returns the response.
func review(t testing.TB, h http.Handler, path string, kind metav1.GroupVersionKind, obj any) *admissionv1.AdmissionResponse {
	t.Helper()
	return reviewUpdate(t, h, path, kind, nil, obj)
}

// testAgent is the agent's username in testServer.
const testAgent = "system:serviceaccount:kro-system:kro-agent"

// reviewUpdate posts the AdmissionReview of an update from old to obj, or of
// a create when old is nil, and returns the response.
func reviewUpdate(t testing.TB, h http.Handler, path string, kind metav1.GroupVersionKind, old, obj any) *admissionv1.AdmissionResponse {
	t.Helper()
	return reviewUpdateBy(t, h, path, kind, "alice", old, obj)
}

// reviewUpdateBy is reviewUpdate of a request made by user.
func reviewUpdateBy(t testing.TB, h http.Handler, path string, kind metav1.GroupVersionKind, user string, old, obj any) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, _ := json.Marshal(obj)
	ar := &admissionv1.AdmissionRequest{UID: types.UID("1"), Kind: kind, Operation: admissionv1.Create,
		Name: "x", Namespace: "default", Object: runtime.RawExtension{Raw: raw}, UserInfo: authnv1.UserInfo{Username: user}}
	// The API server names an object created with generateName after
	// admission: the request has no name.
	var named struct {
		Metadata struct{ Name, GenerateName string }
	}
	if json.Unmarshal(raw, &named) == nil && named.Metadata.Name == "" && named.Metadata.GenerateName != "" {
		ar.Name = ""
	}
	if old != nil {
		oldRaw, _ := json.Marshal(old)
		ar.Operation, ar.OldObject = admissionv1.Update, runtime.RawExtension{Raw: oldRaw}
	}
	body, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  ar,
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	out := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("bad response %d: %s", rec.Code, rec.Body.String())
	}
	return out.Response
}

var rgdKind = metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "ResourceGraphDefinition"}

func rgdObject(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRGDValidation(t *testing.T) {
	h := testServer(t)
	bad := rgdObject(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: bad}
spec:
  schema: {apiVersion: v1alpha1, kind: Bad, spec: {size: "string | bogus=1"}}
  resources:
  - id: a
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${b.metadata.name}"}}
  - id: b
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${a.metadata.name}"}}
`)
	resp := review(t, h, PathValidateRGD, rgdKind, bad)
	if resp.Allowed {
		t.Fatal("an invalid RGD was allowed")
	}
	for _, want := range []string{"(2 error(s))", `spec.schema.spec.size: Invalid value: "string | bogus=1": unknown marker "bogus"`, "dependency cycle: a -> b -> a"} {
		if !strings.Contains(resp.Result.Message, want) {
			t.Errorf("denial lacks %q:\n%s", want, resp.Result.Message)
		}
	}
	good := rgdObject(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: good}
spec:
  schema: {apiVersion: v1alpha1, kind: Good}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    readyWhen: ["${true}"]
`)
	resp = review(t, h, PathValidateRGD, rgdKind, good)
	if !resp.Allowed {
		t.Fatalf("a valid RGD was denied: %s", resp.Result.Message)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "spec.resources[cm].readyWhen[0]: ${true} reads nothing, so it is always the same") {
		t.Errorf("warnings = %q", resp.Warnings)
	}
}

// A read of a field that never comes holds every instance up for good, so
// it is told whole however many hints crowd the response.
func TestReadsThatNeverComeAreNotCrowdedOut(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: crowded}
spec:
  schema: {apiVersion: v1alpha1, kind: Crowded}
  resources:
  - id: secret
    template: {apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {pw: x}}
  - id: copy
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {pw: "${secret.stringData.pw}"}}
`)
	for i := range 60 {
		fmt.Fprintf(&doc, "  - id: slip%d\n    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: s%d}, data: {on: x}}\n", i, i)
	}
	resp := review(t, testServer(t), PathValidateRGD, rgdKind, rgdObject(t, doc.String()))
	if !resp.Allowed {
		t.Fatalf("denied: %s", resp.Result.Message)
	}
	const read = "spec.resources[copy].template.data.pw: ${secret.stringData.pw} reads secret.stringData, but no Secret read back has stringData"
	if !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.HasPrefix(w, read) }) ||
		!slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.Contains(w, "more warnings like those above are left out") }) {
		t.Errorf("warnings %q\nwant the read of stringData whole, and the hints cut short", resp.Warnings)
	}
}

// An update is checked for what it changes in the spec: a stored spec that
// no longer compiles does not block changes to metadata.
func TestRGDUpdates(t *testing.T) {
	h := testServer(t)
	const doc = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: stored}
spec:
  schema: {apiVersion: v1alpha1, kind: Stored, spec: {size: integer}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {size: "${string(schema.spec.%s)}"}}
`
	stale := rgdObject(t, fmt.Sprintf(doc, "gone"))
	labelled := rgdObject(t, fmt.Sprintf(doc, "gone"))
	labelled["metadata"] = map[string]any{"name": "stored", "labels": map[string]any{"team": "payments"}, "finalizers": []any{"example.org/hold"}}
	if resp := reviewUpdate(t, h, PathValidateRGD, rgdKind, stale, labelled); !resp.Allowed {
		t.Errorf("a metadata change to a stored spec that no longer compiles was denied: %s", resp.Result.Message)
	}
	edited := rgdObject(t, fmt.Sprintf(doc, "gone"))
	edited["spec"].(map[string]any)["schema"].(map[string]any)["spec"] = map[string]any{"size": "integer", "color": "string"}
	resp := reviewUpdate(t, h, PathValidateRGD, rgdKind, stale, edited)
	if resp.Allowed || !strings.Contains(resp.Result.Message, "undefined field 'gone'") {
		t.Errorf("a spec change that does not compile: allowed %v, %v", resp.Allowed, resp.Result)
	}

	valid := rgdObject(t, fmt.Sprintf(doc, "size"))
	renamed := rgdObject(t, strings.Replace(fmt.Sprintf(doc, "size"), "kind: Stored", "kind: Renamed", 1))
	resp = reviewUpdate(t, h, PathValidateRGD, rgdKind, valid, renamed)
	if resp.Allowed || !strings.Contains(resp.Result.Message, `spec.schema.kind: Forbidden: kind is immutable (was "Stored")`) {
		t.Errorf("renaming the kind: allowed %v, %v", resp.Allowed, resp.Result)
	}
}

func TestInstanceLabels(t *testing.T) {
	h := testServer(t)
	resp := review(t, h, PathMutateInstance, metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"},
		map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp", "metadata": map[string]any{"name": "x", "namespace": "default", "labels": map[string]any{"team": "a"}}})
	if !resp.Allowed || resp.PatchType == nil {
		t.Fatalf("no patch: %+v", resp)
	}
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(resp.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, op := range ops {
		b, _ := json.Marshal(op.Value)
		got[op.Path] = string(b)
	}
	for path, want := range map[string]string{
		"/metadata/labels/kro.run~1owned":                          `"true"`,
		"/metadata/labels/kro.run~1resource-graph-definition-name": `"webapp"`,
		"/metadata/labels/kro.run~1resource-graph-definition-id":   `"rgd-uid"`,
		"/metadata/labels/applyset.kubernetes.io~1id":              `"` + ownership.ApplySetID(ownership.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Name: "x", Namespace: "default"}) + `"`,
		"/metadata/finalizers":                                     `["kro.run/finalizer"]`,
	} {
		if got[path] != want {
			t.Errorf("patch sets %s to %s, want %s (patch: %s)", path, got[path], want, resp.Patch)
		}
	}
	if _, touched := got["/metadata/labels/team"]; touched {
		t.Error("the author's own label must be left alone")
	}
	// The ApplySet annotations come with the create, so the agent has no
	// metadata of its own to write.
	var annotations map[string]string
	_ = json.Unmarshal([]byte(got["/metadata/annotations"]), &annotations)
	if annotations["applyset.kubernetes.io/contains-group-kinds"] != "ConfigMap,Deployment.apps" || annotations["applyset.kubernetes.io/tooling"] == "" {
		t.Errorf("ApplySet annotations = %v (patch: %s)", annotations, resp.Patch)
	}
	// Named by the API server after admission (generateName), an
	// instance's ApplySet ID is not known yet: no label rather than a
	// wrong one.
	generated := review(t, h, PathMutateInstance, metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"},
		map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp", "metadata": map[string]any{"generateName": "x-", "namespace": "default"}})
	if !generated.Allowed || strings.Contains(string(generated.Patch), "applyset.kubernetes.io/id") || !strings.Contains(string(generated.Patch), "kro.run/owned") {
		t.Errorf("patch of an instance named from generateName = %s, want the labels but the ApplySet ID", generated.Patch)
	}
	other := review(t, h, PathMutateInstance, metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}})
	if !other.Allowed || len(other.Patch) != 0 {
		t.Errorf("a kind no RGD serves must pass untouched: %+v", other)
	}
}

// TestInstancePatchApplied applies the instance webhook's patch with the
// JSON patch library the API server applies it with (evanphx v4), to
// instances whose metadata has every shape it can have, and checks what
// comes out: the agent's labels (its values win), the ApplySet
// annotations where absent, the finalizer once, and nothing else touched.
func TestInstancePatchApplied(t *testing.T) {
	h := testServer(t)
	kind := metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	setID := ownership.ApplySetID(ownership.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Name: "x", Namespace: "default"})
	// A spec value a float64 cannot hold: only an untouched spec keeps it.
	const spec = `"spec":{"replicas":9007199254740993,"note":"a/b~c"}`
	for _, tc := range []struct {
		name, metadata  string
		wantFinalizers  []string
		wantAnnotations map[string]string
		// wantManagedBy is app.kubernetes.io/managed-by: "kro" unless
		// the author's tool set it.
		wantManagedBy string
	}{
		{name: "bare", metadata: `{"name":"x","namespace":"default"}`,
			wantFinalizers: []string{v1alpha1.Finalizer}},
		{name: "no metadata", metadata: ``,
			wantFinalizers: []string{v1alpha1.Finalizer}},
		{name: "null maps", metadata: `{"name":"x","namespace":"default","labels":null,"annotations":null,"finalizers":null}`,
			wantFinalizers: []string{v1alpha1.Finalizer}},
		{name: "empty maps", metadata: `{"name":"x","namespace":"default","labels":{},"annotations":{},"finalizers":[]}`,
			wantFinalizers: []string{v1alpha1.Finalizer}},
		{name: "the author's own", metadata: `{"name":"x","namespace":"default","labels":{"team":"a","a/b~c":"d","kro.run/owned":"false"},` +
			`"annotations":{"note":"n","applyset.kubernetes.io/tooling":"kro/v0.0.1"},"finalizers":["example.com/keep"]}`,
			wantFinalizers:  []string{"example.com/keep", v1alpha1.Finalizer},
			wantAnnotations: map[string]string{"note": "n", "applyset.kubernetes.io/tooling": "kro/v0.0.1"}},
		{name: "finalizer there", metadata: `{"name":"x","namespace":"default","finalizers":["kro.run/finalizer","example.com/keep"]}`,
			wantFinalizers: []string{v1alpha1.Finalizer, "example.com/keep"}},
		{name: "rendered by Helm", metadata: `{"name":"x","namespace":"default","labels":{"app.kubernetes.io/managed-by":"Helm"}}`,
			wantFinalizers: []string{v1alpha1.Finalizer}, wantManagedBy: "Helm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp",` + spec + `}`
			if tc.metadata != "" {
				doc = `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":` + tc.metadata + `,` + spec + `}`
			}
			resp := review(t, h, PathMutateInstance, kind, json.RawMessage(doc))
			if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
				t.Fatalf("no JSON patch: %+v", resp)
			}
			patch, err := jsonpatch.DecodePatch(resp.Patch)
			if err != nil {
				t.Fatalf("patch %s: %v", resp.Patch, err)
			}
			patched, err := patch.Apply([]byte(doc))
			if err != nil {
				t.Fatalf("applying %s to %s: %v", resp.Patch, doc, err)
			}
			if !strings.Contains(string(patched), spec) {
				t.Errorf("the spec changed: %s", patched)
			}
			var got struct {
				Metadata struct {
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
					Finalizers  []string          `json:"finalizers"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(patched, &got); err != nil {
				t.Fatal(err)
			}
			m := got.Metadata
			for k, v := range map[string]string{"kro.run/owned": "true", "kro.run/resource-graph-definition-name": "webapp",
				"kro.run/resource-graph-definition-id": "rgd-uid", "applyset.kubernetes.io/id": setID} {
				if m.Labels[k] != v {
					t.Errorf("label %s = %q, want %q (patch: %s)", k, m.Labels[k], v, resp.Patch)
				}
			}
			if want := cmp.Or(tc.wantManagedBy, "kro"); m.Labels["app.kubernetes.io/managed-by"] != want {
				t.Errorf("label app.kubernetes.io/managed-by = %q, want %q (patch: %s)", m.Labels["app.kubernetes.io/managed-by"], want, resp.Patch)
			}
			if strings.Contains(tc.metadata, `"team":"a"`) && (m.Labels["team"] != "a" || m.Labels["a/b~c"] != "d") {
				t.Errorf("the author's labels changed: %v", m.Labels)
			}
			if !slices.Equal(m.Finalizers, tc.wantFinalizers) {
				t.Errorf("finalizers = %v, want %v", m.Finalizers, tc.wantFinalizers)
			}
			if m.Annotations["applyset.kubernetes.io/contains-group-kinds"] != "ConfigMap,Deployment.apps" {
				t.Errorf("annotations = %v (patch: %s)", m.Annotations, resp.Patch)
			}
			for k, v := range tc.wantAnnotations {
				if m.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q: a value there is left alone", k, m.Annotations[k], v)
				}
			}
			// Admitting the result again changes nothing.
			again := review(t, h, PathMutateInstance, kind, json.RawMessage(patched))
			if len(again.Patch) != 0 {
				t.Errorf("a labelled instance got a patch again: %s", again.Patch)
			}
		})
	}
}

// FuzzAdmissionDecoding posts arbitrary bodies: a malformed AdmissionReview
// gets a 400-class answer (or a denial), never a panic or a 5xx.
func FuzzAdmissionDecoding(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","object":{"spec":{"schema":null}}}}`), true)
	f.Add([]byte(`{"request":{"object":"not an object"}}`), false)
	f.Add([]byte(`not json`), true)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","object":{"spec":{"resources":[null,{"id":"x"}]}}}}`), true)
	h := testServer(f)
	f.Fuzz(func(t *testing.T, body []byte, rgd bool) {
		path := PathMutateInstance
		if rgd {
			path = PathValidateRGD
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}

// BenchmarkValidate20 reports the latency of validating a 20-resource RGD
// through the webhook handler, with p50 and p99.
func BenchmarkValidate20(b *testing.B) {
	h := testServer(b)
	var sb strings.Builder
	sb.WriteString("apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\nmetadata: {name: big}\nspec:\n  schema: {apiVersion: v1alpha1, kind: Big, spec: {name: string, replicas: \"integer | default=1\"}}\n  resources:\n")
	for i := 0; i < 20; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&sb, "  - id: cm%d\n    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: \"${schema.spec.name}-%d\"}, data: {k: \"${schema.spec.name}\"}}\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "  - id: d%d\n    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: \"${cm%d.metadata.name}\"}, spec: {replicas: \"${schema.spec.replicas}\", selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: nginx}]}}}}\n    readyWhen: [\"${d%d.status.?availableReplicas.orValue(0) == d%d.spec.replicas}\"]\n", i, i-1, i, i)
		default:
			fmt.Fprintf(&sb, "  - id: s%d\n    template: {apiVersion: v1, kind: Service, metadata: {name: \"${d%d.metadata.name}\"}, spec: {selector: \"${d%d.spec.selector.matchLabels}\", ports: [{port: 80}]}}\n", i, i-1, i-1)
		}
	}
	obj := rgdObject(b, sb.String())
	if resp := review(b, h, PathValidateRGD, rgdKind, obj); !resp.Allowed {
		b.Fatalf("benchmark RGD is invalid: %s", resp.Result.Message)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		review(b, h, PathValidateRGD, rgdKind, obj)
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
}

func TestInstanceKindsReadBackAndMerged(t *testing.T) {
	r := &Registrar{URL: "https://127.0.0.1:9443"}
	a := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	b := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "queues"}
	c := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "databases"}
	cur := r.mutatingConfig([]byte("ca"), instanceRules([]schema.GroupVersionResource{a, b}))
	if got := registeredKinds(cur); !slices.Equal(got, []schema.GroupVersionResource{a, b}) {
		t.Errorf("registered kinds = %v", got)
	}
	if got := registeredKinds(r.mutatingConfig([]byte("ca"), nil)); got != nil {
		t.Errorf("a configuration without the webhook has kinds %v", got)
	}
	if got := registeredKinds(nil); got != nil {
		t.Errorf("no configuration has kinds %v", got)
	}
	want := []schema.GroupVersionResource{b, c, a} // sorted by group first
	if got := union(registeredKinds(cur), []schema.GroupVersionResource{c, a}); !slices.Equal(got, want) {
		t.Errorf("union = %v, want %v", got, want)
	}
}

// rgdList reads as the agent's cache of RGDs would.
type rgdList []v1alpha1.ResourceGraphDefinition

// Get finds an RGD of the list by name; anything else is not found.
func (l rgdList) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if rgd, ok := obj.(*v1alpha1.ResourceGraphDefinition); ok {
		for _, r := range l {
			if r.Name == key.Name {
				r.DeepCopyInto(rgd)
				return nil
			}
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: "kro.run", Resource: "resourcegraphdefinitions"}, key.Name)
}

func (l rgdList) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	if rgds, ok := list.(*v1alpha1.ResourceGraphDefinitionList); ok {
		rgds.Items = l
	}
	return nil
}

// A kind another RGD generates is coming, and worth a longer wait for its
// CRD, only while that RGD exists and is not being deleted: the cache can
// hold one deleted a moment ago, which the API server no longer has, even
// beside the RGD of the kind that replaced it.
func TestGeneratedKindsComeFromRGDsThatExist(t *testing.T) {
	memo := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Memo"}
	memos := v1alpha1.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "memos"}, Spec: v1alpha1.ResourceGraphDefinitionSpec{Schema: &v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "Memo"}}}
	deleting := *memos.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	gone := *memos.DeepCopy()
	gone.Name = "old-memos"
	for _, tc := range []struct {
		name   string
		cached rgdList
		stored client.Reader
		want   bool
	}{
		{name: "cached and stored", cached: rgdList{memos}, stored: rgdList{memos}, want: true},
		{name: "cached, no uncached reader", cached: rgdList{memos}, want: true},
		{name: "cached, gone from the API server", cached: rgdList{memos}, stored: rgdList{}},
		{name: "cached, being deleted", cached: rgdList{memos}, stored: rgdList{deleting}},
		{name: "not cached", cached: rgdList{}, stored: rgdList{memos}},
		{name: "cached beside another of the kind, gone", cached: rgdList{gone, memos}, stored: rgdList{memos}, want: true},
	} {
		v := &RGDValidator{RGDs: tc.cached, Stored: tc.stored}
		if got := v.generated(context.Background(), memo); got != tc.want {
			t.Errorf("%s: generated = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A kind is one RGD's: another RGD of it, or a CRD of its name that no RGD
// generated, denies it at spec.schema.kind; a CRD left by a deleted RGD
// is taken over (its instances are adopted).
func TestRGDsMayNotTakeAnothersKind(t *testing.T) {
	builtin, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	memos := func(name string) map[string]any {
		return rgdObject(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: `+name+`}
spec:
  schema: {apiVersion: v1alpha1, kind: Memo}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
`)
	}
	existing := rgdList{{ObjectMeta: metav1.ObjectMeta{Name: "memos"}, Spec: v1alpha1.ResourceGraphDefinitionSpec{Schema: &v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "Memo"}}}}
	crd := graph.CRDName("Memo", "kro.run") // memoes, as flect has it
	crds := map[string]map[string]string{}
	crdLabels := func(name string) (map[string]string, bool) {
		l, ok := crds[name]
		return l, ok
	}
	h := (&Server{RGDs: &RGDValidator{Resolver: builtin, RGDs: existing, CRDLabels: crdLabels}}).Handler()
	for _, tc := range []struct {
		name, rgd string
		crd       map[string]string
		want      string
	}{
		{name: "its own kind, no CRD yet", rgd: "memos"},
		{name: "its own kind and CRD", rgd: "memos", crd: map[string]string{v1alpha1.LabelOwned: "true", v1alpha1.LabelRGDName: "memos"}},
		{name: "another RGD's kind", rgd: "memo-notes",
			want: "spec.schema.kind: Forbidden: the kind Memo of kro.run is defined by ResourceGraphDefinition memos already; a kind is defined by one RGD"},
		{name: "a CRD no RGD generated", rgd: "memos", crd: map[string]string{"app": "memo"},
			want: "spec.schema.kind: Forbidden: CustomResourceDefinition memoes.kro.run exists and was not generated from a ResourceGraphDefinition"},
	} {
		delete(crds, crd)
		if tc.crd != nil {
			crds[crd] = tc.crd
		}
		resp := review(t, h, PathValidateRGD, rgdKind, memos(tc.rgd))
		switch {
		case tc.want == "" && !resp.Allowed:
			t.Errorf("%s: denied: %s", tc.name, resp.Result.Message)
		case tc.want != "" && (resp.Allowed || !strings.Contains(resp.Result.Message, tc.want)):
			t.Errorf("%s: allowed %v (%v), want denied saying %q", tc.name, resp.Allowed, resp.Result, tc.want)
		}
	}
	// Once memos is deleted, its CRD goes to the RGD created for the kind.
	crds[crd] = map[string]string{v1alpha1.LabelOwned: "true", v1alpha1.LabelRGDName: "memos"}
	h = (&Server{RGDs: &RGDValidator{Resolver: builtin, RGDs: rgdList{}, CRDLabels: crdLabels}}).Handler()
	if resp := review(t, h, PathValidateRGD, rgdKind, memos("memo-notes")); !resp.Allowed {
		t.Errorf("the kind of a deleted RGD: denied: %s", resp.Result.Message)
	}
	// So it is while the agent's cache still holds memos: the API server
	// says it is gone.
	h = (&Server{RGDs: &RGDValidator{Resolver: builtin, RGDs: existing, Stored: rgdList{}, CRDLabels: crdLabels}}).Handler()
	if resp := review(t, h, PathValidateRGD, rgdKind, memos("memo-notes")); !resp.Allowed {
		t.Errorf("the kind of an RGD deleted but still cached: denied: %s", resp.Result.Message)
	}
	// And a CRD no RGD generated is still refused, not the cached RGD.
	crds[crd] = map[string]string{"app": "memo"}
	if resp := review(t, h, PathValidateRGD, rgdKind, memos("memo-notes")); resp.Allowed ||
		!strings.Contains(resp.Result.Message, "was not generated from a ResourceGraphDefinition") {
		t.Errorf("a CRD no RGD generated, its kind's RGD deleted but cached: allowed %v (%v)", resp.Allowed, resp.Result)
	}
	// While memos is still there, the API server confirms the cache.
	crds[crd] = map[string]string{v1alpha1.LabelOwned: "true", v1alpha1.LabelRGDName: "memos"}
	h = (&Server{RGDs: &RGDValidator{Resolver: builtin, RGDs: existing, Stored: existing, CRDLabels: crdLabels}}).Handler()
	if resp := review(t, h, PathValidateRGD, rgdKind, memos("memo-notes")); resp.Allowed ||
		!strings.Contains(resp.Result.Message, "is defined by ResourceGraphDefinition memos already") {
		t.Errorf("another RGD's kind, confirmed: allowed %v (%v)", resp.Allowed, resp.Result)
	}
}

// BenchmarkInstanceAdmission is the agent's share of every instance create:
// the mutating webhook's handler, from the AdmissionReview to its answer.
func BenchmarkInstanceAdmission(b *testing.B) {
	h := testServer(b)
	kind := metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	obj := map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
		"metadata": map[string]any{"name": "x", "namespace": "default", "labels": map[string]any{"team": "a"}},
		"spec":     map[string]any{"name": "web", "image": "nginx:1.27", "replicas": 3, "env": map[string]any{"A": "1", "B": "2"}}}
	b.ReportAllocs()
	for b.Loop() {
		if resp := review(b, h, PathMutateInstance, kind, obj); !resp.Allowed {
			b.Fatal(resp.Result)
		}
	}
}

// An update changing the region label of a placed instance, or giving one
// to an instance reconciled in the local cluster, is admitted with a
// warning that it stays where it is; other updates carry none.
func TestRegionChangeOfAPlacedInstanceIsWarned(t *testing.T) {
	h := testServer(t)
	kind := metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	instance := func(region, placed string) map[string]any {
		u := map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp", "metadata": map[string]any{"name": "x", "namespace": "default"}}
		if region != "" {
			u["metadata"].(map[string]any)["labels"] = map[string]any{agentv1.LabelRegion: region}
		}
		if placed != "" {
			u["status"] = map[string]any{"placement": map[string]any{"cluster": placed, "region": "eu-west"}}
		}
		return u
	}
	// withStatus gives an instance the status kro-agent wrote, with a
	// Placed condition of reason placed unless it is "".
	withStatus := func(u map[string]any, state, placed string, placement map[string]any) map[string]any {
		status := map[string]any{"state": state, "conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready"}}}
		if placed != "" {
			status["conditions"] = append(status["conditions"].([]any), map[string]any{"type": "Placed", "status": "True", "reason": placed})
		}
		if placement != nil {
			status["placement"] = placement
		}
		u["status"] = status
		return u
	}
	// withManaged adds the InstanceManaged condition: Unknown until
	// kro-agent first took the instance in hand.
	withManaged := func(u map[string]any, managed string) map[string]any {
		status := u["status"].(map[string]any)
		reason := map[string]string{"Unknown": "Pending", "True": "Managed"}[managed]
		status["conditions"] = append(status["conditions"].([]any), map[string]any{"type": "InstanceManaged", "status": managed, "reason": reason})
		return u
	}
	stays := func(region string) []string {
		return []string{`the label agent.kro.run/region asks for region "` + region + `", but the instance stays in the local cluster, where kro-agent reconciled it: an instance is placed by region when it is first reconciled and does not move afterwards; delete it and create it again to place it`}
	}
	for _, tc := range []struct {
		name     string
		old, obj map[string]any
		want     []string
	}{
		{"moved", instance("eu-west", "eu-west-1"), instance("us-east", "eu-west-1"),
			[]string{`the label agent.kro.run/region asks for region "us-east", but the instance stays on cluster eu-west-1 (region eu-west), where its resources are: a placed instance does not move; delete it and create it again to move it`}},
		{"label removed", instance("eu-west", "eu-west-1"), instance("", "eu-west-1"),
			[]string{`the label agent.kro.run/region was removed, but the instance stays on cluster eu-west-1 (region eu-west), where its resources are: a placed instance does not move; delete it and create it again to move it`}},
		{"label unchanged", instance("eu-west", "eu-west-1"), instance("eu-west", "eu-west-1"), nil},
		{"not placed yet", instance("eu-west", ""), instance("us-east", ""), nil},
		{"reconciled locally", withStatus(instance("", ""), "ACTIVE", "", nil), withStatus(instance("eu-west", ""), "ACTIVE", "", nil), stays("eu-west")},
		{"staying locally, relabelled", withStatus(instance("eu-west", ""), "ACTIVE", "StaysLocal", nil), withStatus(instance("us-east", ""), "ACTIVE", "StaysLocal", nil), stays("us-east")},
		{"labelled before its first reconcile", instance("", ""), instance("eu-west", ""), nil},
		{"labelled while suspended since its creation", withManaged(withStatus(instance("", ""), "IN_PROGRESS", "", nil), "Unknown"),
			withManaged(withStatus(instance("eu-west", ""), "IN_PROGRESS", "", nil), "Unknown"), nil},
		{"labelled while suspended after its first reconcile", withManaged(withStatus(instance("", ""), "IN_PROGRESS", "", nil), "True"),
			withManaged(withStatus(instance("eu-west", ""), "IN_PROGRESS", "", nil), "True"), stays("eu-west")},
		{"waiting for a cluster of its region", withStatus(instance("us-east", ""), "IN_PROGRESS", "NoClusterInRegion", nil), withStatus(instance("eu-west", ""), "IN_PROGRESS", "NoClusterInRegion", nil), nil},
		{"waiting to be placed again, its cluster gone", withStatus(instance("", ""), "IN_PROGRESS", "NoClusterInRegion", map[string]any{"region": "eu-west"}),
			withStatus(instance("us-east", ""), "IN_PROGRESS", "NoClusterInRegion", map[string]any{"region": "eu-west"}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := reviewUpdate(t, h, PathMutateInstance, kind, tc.old, tc.obj)
			if !resp.Allowed || !slices.Equal(resp.Warnings, tc.want) {
				t.Errorf("allowed %v, warnings %q; want allowed with %q", resp.Allowed, resp.Warnings, tc.want)
			}
		})
	}
}

// A request that sets kro-agent's labels on an instance to other values,
// or removes them, is admitted with them kept, and warned; one that leaves
// them as they were is not, even where they are not kro-agent's values
// (its version, after an upgrade).
func TestKeptLabelsAreWarned(t *testing.T) {
	h := testServer(t)
	kind := metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	id := ownership.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Name: "x", Namespace: "default"}
	instance := func(labels map[string]any) map[string]any {
		return map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp", "metadata": map[string]any{"name": "x", "namespace": "default", "labels": labels}}
	}
	// The labels the webhook sets, changed by extra (nil removes one).
	agents := func(extra map[string]any) map[string]any {
		l := map[string]any{}
		for k, v := range ownership.InstanceLabels(ownership.RGD{Name: "webapp", UID: "rgd-uid"}, id) {
			l[k] = v
		}
		for k, v := range extra {
			if v == nil {
				delete(l, k)
			} else {
				l[k] = v
			}
		}
		return l
	}
	const prefix = "kro-agent sets these labels on its instances, and they keep its values: "
	for _, tc := range []struct {
		name     string
		old, obj map[string]any
		want     []string
	}{
		{"created with none of them", nil, instance(map[string]any{"team": "a"}), nil},
		{"created with another value", nil, instance(map[string]any{"kro.run/owned": "false"}), []string{prefix + "kro.run/owned=true"}},
		{"one removed, one changed", instance(agents(nil)), instance(agents(map[string]any{"kro.run/owned": nil, "kro.run/resource-graph-definition-name": "me"})),
			[]string{prefix + "kro.run/owned=true, kro.run/resource-graph-definition-name=webapp"}},
		// The tool that writes the instance may name itself; removed,
		// the label is kro-agent's again.
		{"created by Helm", nil, instance(map[string]any{"app.kubernetes.io/managed-by": "Helm"}), nil},
		{"managed-by changed", instance(agents(nil)), instance(agents(map[string]any{"app.kubernetes.io/managed-by": "Helm"})), nil},
		{"managed-by removed", instance(agents(nil)), instance(agents(map[string]any{"app.kubernetes.io/managed-by": nil})),
			[]string{prefix + "app.kubernetes.io/managed-by=kro"}},
		{"another label changed", instance(agents(nil)), instance(agents(map[string]any{"team": "b"})), nil},
		{"an older agent's version left as it was", instance(agents(map[string]any{"kro.run/kro-version": "v0.0.9"})), instance(agents(map[string]any{"kro.run/kro-version": "v0.0.9", "team": "b"})), nil},
		{"an instance from before the webhook", instance(map[string]any{"team": "a"}), instance(map[string]any{"team": "b"}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp *admissionv1.AdmissionResponse
			if tc.old == nil {
				resp = review(t, h, PathMutateInstance, kind, tc.obj)
			} else {
				resp = reviewUpdate(t, h, PathMutateInstance, kind, tc.old, tc.obj)
			}
			if !resp.Allowed || !slices.Equal(resp.Warnings, tc.want) {
				t.Errorf("allowed %v, warnings %q; want allowed with %q", resp.Allowed, resp.Warnings, tc.want)
			}
		})
	}
}

// TestUpdatesKeepOwnershipLabels: an update by anyone but the agent leaves
// the labels the guard policy protects as the instance had them (the
// policy would deny moving them, a change the update's author never
// made), and one by the agent moves them to its values.
func TestUpdatesKeepOwnershipLabels(t *testing.T) {
	h := testServer(t)
	kind := metav1.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	id := ownership.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Name: "x", Namespace: "default"}
	current := ownership.InstanceLabels(ownership.RGD{Name: "webapp", UID: "rgd-uid"}, id)
	with := func(base map[string]string, extra map[string]string) map[string]string {
		l := maps.Clone(base)
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, extra)
		return l
	}
	stale := with(current, map[string]string{v1alpha1.LabelKroVersion: "v0.0.9", v1alpha1.LabelRGDID: "deleted-rgd-uid"})
	const unsetWarning = "kro-agent sets these labels on its instances and has not set them on this one yet, so the update leaves them out: "
	for _, tc := range []struct {
		name, user string
		old, obj   map[string]string
		want       map[string]string
		warnings   []string
	}{
		{name: "an older agent's labels, left as they were", user: "alice",
			old: stale, obj: with(stale, map[string]string{"team": "b"}), want: with(stale, map[string]string{"team": "b"})},
		{name: "an older agent's labels, moved by the agent", user: testAgent,
			old: stale, obj: stale, want: current},
		{name: "an instance created while the webhook was down", user: "alice",
			old: nil, obj: map[string]string{"team": "b"},
			want: map[string]string{"team": "b", v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}},
		{name: "an instance created while the webhook was down, labelled by the agent", user: testAgent,
			old: nil, obj: nil, want: current},
		{name: "an ownership label the instance does not have yet, added", user: "alice",
			old: nil, obj: map[string]string{v1alpha1.LabelOwned: "true", v1alpha1.LabelRGDName: "webapp"},
			want:     map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue},
			warnings: []string{unsetWarning + "kro.run/owned, kro.run/resource-graph-definition-name"}},
		{name: "an older agent's label changed", user: "alice",
			old: stale, obj: with(stale, map[string]string{v1alpha1.LabelKroVersion: "v9"}), want: stale,
			warnings: []string{"kro-agent sets these labels on its instances, and they keep its values: kro.run/kro-version=v0.0.9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			instance := func(labels map[string]string) map[string]any {
				meta := map[string]any{"name": "x", "namespace": "default"}
				if labels != nil {
					meta["labels"] = labels
				}
				return map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp", "metadata": meta}
			}
			obj := instance(tc.obj)
			resp := reviewUpdateBy(t, h, PathMutateInstance, kind, tc.user, instance(tc.old), obj)
			if !resp.Allowed || !slices.Equal(resp.Warnings, tc.warnings) {
				t.Errorf("allowed %v, warnings %q; want allowed with %q", resp.Allowed, resp.Warnings, tc.warnings)
			}
			doc, _ := json.Marshal(obj)
			if len(resp.Patch) > 0 {
				patch, err := jsonpatch.DecodePatch(resp.Patch)
				if err != nil {
					t.Fatalf("patch %s: %v", resp.Patch, err)
				}
				if doc, err = patch.Apply(doc); err != nil {
					t.Fatalf("applying %s: %v", resp.Patch, err)
				}
			}
			var got struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(doc, &got); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Metadata.Labels, tc.want) {
				t.Errorf("labels after the update = %v, want %v (patch: %s)", got.Metadata.Labels, tc.want, resp.Patch)
			}
			// What the guard policy checks of an update by anyone else:
			// no protected label changed, added or removed.
			if tc.user != testAgent {
				for k := range with(tc.old, got.Metadata.Labels) {
					was, had := tc.old[k]
					is, has := got.Metadata.Labels[k]
					if guard.Guarded(k) && (had != has || was != is) {
						t.Errorf("the guard policy would deny the update: label %s was %q (%v), is %q (%v)", k, was, had, is, has)
					}
				}
			}
		})
	}
}

// Warnings that fit the budget pass as they are; past it, the hints give
// way, never the consequential warnings, and a note counts what is left out.
func TestFitWarnings(t *testing.T) {
	hint := func(n int) string { return strings.Repeat("h", n) }
	grant := strings.Repeat("g", 300)
	note := omittedNote(2)
	for _, tc := range []struct {
		name          string
		hints         []string
		consequential []string
		want          []string
	}{
		{"nothing", nil, nil, []string{}},
		{"all fit", []string{"a", "b"}, []string{grant}, []string{"a", "b", grant}},
		{"the last hint fits without room for a note",
			[]string{hint(1000), hint(warningBudget - 1300)}, []string{grant},
			[]string{hint(1000), hint(warningBudget - 1300), grant}},
		{"one character too many",
			[]string{hint(1000), hint(warningBudget - 1300 + 1)}, []string{grant},
			[]string{hint(1000), omittedNote(1), grant}},
		{"room kept for a note",
			[]string{hint(1000), hint(warningBudget - 1300 - len(note)), hint(1)}, []string{grant},
			[]string{hint(1000), hint(warningBudget - 1300 - len(note)), hint(1), grant}},
		{"no room for a note",
			[]string{hint(1000), hint(warningBudget - 1300 - len(note) + 1), hint(1)}, []string{grant},
			[]string{hint(1000), omittedNote(2), grant}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitWarnings(tc.hints, tc.consequential)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %d warnings of %v characters; want %d of %v", len(got), lengths(got), len(tc.want), lengths(tc.want))
			}
			if total := len(strings.Join(got, "")); total > warningBudget && len(tc.consequential) > 0 {
				t.Errorf("%d characters, over the budget of %d", total, warningBudget)
			}
		})
	}
}

func lengths(ws []string) []int {
	out := make([]int, len(ws))
	for i, w := range ws {
		out[i] = len(w)
	}
	return out
}
