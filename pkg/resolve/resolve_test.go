package resolve

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

func compileExample(t testing.TB, name string) *graph.Graph {
	t.Helper()
	raw, err := os.ReadFile("../../examples/" + name + "/rgd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return compileRGD(t, string(raw))
}

// compileRGD compiles an RGD written as YAML against the built-in kinds.
func compileRGD(t testing.TB, doc string) *graph.Graph {
	t.Helper()
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(doc), rgd); err != nil {
		t.Fatal(err)
	}
	r, _ := kinds.Builtin()
	g, err := graph.Compile(rgd, graph.Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func obj(t testing.TB, y string) map[string]any {
	t.Helper()
	// Decoded as client-go decodes objects: integers as int64.
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRenderWebApp(t *testing.T) {
	g := compileExample(t, "webapp")
	s := NewScope(g, obj(t, `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: demo, namespace: default},
  spec: {name: demo, image: "nginx:1.27", replicas: 3, port: 8080, greeting: hi, ingress: {enabled: false, host: x}},
  status: {state: ACTIVE}}`))
	if _, err := Render(g.Node("deployment"), s); !errors.Is(err, ErrPending) || Waiting(err) != "waiting for resource config" {
		t.Fatalf("deployment reads config, which is not observed yet: want ErrPending, waiting for it; got %v", err)
	}
	s.Observe(g.Node("config"), obj(t, `{metadata: {name: demo-config}}`))
	d, err := Render(g.Node("deployment"), s)
	if err != nil {
		t.Fatal(err)
	}
	spec := d["spec"].(map[string]any)
	if spec["replicas"] != int64(3) {
		t.Errorf("replicas = %#v, want int64 3", spec["replicas"])
	}
	container := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if container["image"] != "nginx:1.27" || container["envFrom"].([]any)[0].(map[string]any)["configMapRef"].(map[string]any)["name"] != "demo-config" {
		t.Errorf("container = %v", container)
	}
	// The template in the graph is untouched.
	if name := g.Node("deployment").Template["metadata"].(map[string]any)["name"]; name != "${schema.spec.name}" {
		t.Errorf("template was modified: %v", name)
	}
	if inc, err := Included(g.Node("ingress"), s); err != nil || inc {
		t.Errorf("ingress included = %v, %v; want false", inc, err)
	}
	if why, err := Excluded(g.Node("ingress"), s); err != nil || why != "${schema.spec.ingress.enabled}" {
		t.Errorf("ingress excluded by %q, %v; want its includeWhen named", why, err)
	}
	if why, err := Excluded(g.Node("deployment"), s); err != nil || why != "" {
		t.Errorf("deployment excluded by %q, %v; want included", why, err)
	}
}

func TestReadyExplainsWhy(t *testing.T) {
	g := compileExample(t, "webapp")
	n := g.Node("deployment")
	s := NewScope(g, obj(t, `{spec: {name: demo}}`))
	r := Ready(n, obj(t, `{spec: {replicas: 2}, status: {}}`), s)
	if r.Ready {
		t.Fatal("a Deployment with no available replicas must not be ready")
	}
	for _, want := range []string{"readyWhen ${deployment.status.?availableReplicas.orValue(0) == deployment.spec.replicas} is false",
		"deployment.status.?availableReplicas.orValue(0) = 0", "deployment.spec.replicas = 2"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q does not contain %q", r.Reason, want)
		}
	}
	if r := Ready(n, obj(t, `{spec: {replicas: 2}, status: {availableReplicas: 2}}`), s); !r.Ready {
		t.Errorf("available == replicas must be ready: %s", r.Reason)
	}
	if r := Ready(g.Node("config"), obj(t, `{}`), s); !r.Ready {
		t.Error("no readyWhen: existing means ready")
	}
}

func TestExpandCartesian(t *testing.T) {
	g := compileExample(t, "workers")
	n := g.Node("workers")
	s := NewScope(g, obj(t, `{metadata: {name: jobs}, spec: {image: busybox, queues: [a, b], regions: [eu, us]}}`))
	items, err := Expand(n, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		o, err := Render(n, it.Scope)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, o["metadata"].(map[string]any)["name"].(string))
	}
	want := []string{"jobs-a-eu", "jobs-a-us", "jobs-b-eu", "jobs-b-us"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if _, err := Expand(n, s, 3); err == nil || !strings.Contains(err.Error(), "more than the limit of 3 that kro-agent's --max-collection-size sets") {
		t.Errorf("limit not enforced: %v", err)
	}
	r := Ready(n, obj(t, `{spec: {replicas: 1}, status: {readyReplicas: 1}}`), s)
	if !r.Ready {
		t.Errorf("each-based readyWhen: %s", r.Reason)
	}
}

func TestStatusOmitsPending(t *testing.T) {
	g := compileExample(t, "webapp")
	s := NewScope(g, obj(t, `{spec: {name: demo, port: 80}}`))
	s.Observe(g.Node("deployment"), obj(t, `{spec: {replicas: 2}, status: {availableReplicas: 1}}`))
	st, err := Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	if st["availableReplicas"] != int64(1) {
		t.Errorf("availableReplicas = %#v", st["availableReplicas"])
	}
	if _, ok := st["serviceIP"]; ok {
		t.Error("serviceIP reads the service, which is not observed: it must be omitted")
	}
	s.Observe(g.Node("service"), obj(t, `{metadata: {name: demo, namespace: default}, spec: {clusterIP: 10.0.0.1}}`))
	st, _ = Status(g, s)
	if st["serviceIP"] != "10.0.0.1" || st["url"] != "http://demo.default.svc:80" {
		t.Errorf("status = %v", st)
	}
	// Without the service, what reads it is omitted again, and s keeps it.
	st, _ = Status(g, s.Without("service"))
	if _, ok := st["serviceIP"]; ok || st["availableReplicas"] != int64(1) {
		t.Errorf("status without the service = %v", st)
	}
	if !s.Has("service") {
		t.Error("Without changed the scope it was called on")
	}
}

// A pass that did not get to a resource, waiting for one it depends on,
// keeps what that resource gave the status: its object is as the last
// pass left it. A list is kept whole; a field that had no value stays
// without one, as does one whose value its type no longer takes; a
// resource the pass did get to and did not find (left out by includeWhen)
// gives nothing.
func TestStatusKeepsWhatUnreachedResourcesGave(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: kept}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Kept
    spec: {enabled: "boolean | default=true"}
    status:
      gate: "${gate.data.v}"
      endpoint: {url: "http://${svc.metadata.name}", port: "${int(svc.data.port)}"}
      ports: ["${int(svc.data.port)}", "${int(gate.data.port)}"]
      fresh: "${svc.data.fresh}"
      optional: "${opt.data.v}"
      count: "${size(svc.data)}"
  resources:
  - id: gate
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: gate}, data: {v: "a", port: "1"}}
  - id: svc
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${gate.metadata.name}-svc"}, data: {port: "2"}}
  - id: opt
    includeWhen: ["${schema.spec.enabled}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${gate.metadata.name}-opt"}, data: {v: "b"}}
`)
	s := NewScope(g, obj(t, `{metadata: {name: k}, spec: {enabled: false}}`))
	s.Observe(g.Node("gate"), obj(t, `{metadata: {name: gate}, data: {v: "a2", port: "1"}}`))
	// count was a string before the RGD made it an integer: not kept.
	current := obj(t, `{state: IN_PROGRESS, gate: a, endpoint: {url: "http://gate-svc", port: 2}, ports: [2, 1], optional: b, count: "one"}`)
	unreached := func(id string) bool { return id == "svc" }
	got, err := StatusKeeping(g, s, current, unreached)
	if err != nil {
		t.Fatal(err)
	}
	want := obj(t, `{gate: a2, endpoint: {url: "http://gate-svc", port: 2}, ports: [2, 1]}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status = %v, want %v", got, want)
	}
	// Without a pass that waited, what is not observed goes, as Status does.
	if got, _ := StatusKeeping(g, s, current, nil); !reflect.DeepEqual(got, obj(t, `{gate: a2}`)) {
		t.Errorf("status of a pass that reached everything = %v", got)
	}
}

func TestDescribeCutsBetweenCharacters(t *testing.T) {
	// 79 ASCII bytes then a 3-byte character straddling the 80-byte cut.
	long := strings.Repeat("a", 78) + "€€€"
	got := describe(long, nil)
	if !utf8.ValidString(got) {
		t.Fatalf("describe cut a character in two: %q", got)
	}
	if want := `"` + strings.Repeat("a", 78) + "..."; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got := describe("short", nil); got != `"short"` {
		t.Errorf("describe(short) = %q", got)
	}
}

func TestShortenCutsBetweenCharacters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{in: "short", n: 10, want: "short"},
		{in: "exactly ten", n: 11, want: "exactly ten"},
		{in: "abcdefghijkl", n: 10, want: "abcdefg..."},
		// "é" is two bytes and would be cut in two at byte 7.
		{in: "abcdeféghij", n: 10, want: "abcdef..."},
		{in: strings.Repeat("日", 5), n: 10, want: "日日..."},
	} {
		got := Shorten(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) || len(got) > tc.n {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// RGDs written for upstream kro use its CEL functions (package cellib) in
// templates: they type-check against the fields they fill, and omit()
// leaves its field out of the rendered object.
func TestRenderWithKroFunctions(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: App
    spec:
      name: string
      config: string
      pinTo: string | default=""
      labels: "map[string]string"
  resources:
    - id: deployment
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: ${schema.spec.name}
          labels: '${ {"app": schema.spec.name}.merge(schema.spec.labels) }'
          annotations:
            checksum: ${"%x".format([hash.sha256(schema.spec.config)])}
            settings: ${json.marshal(json.unmarshal(schema.spec.config))}
        spec:
          replicas: ${json.unmarshal(schema.spec.config).replicas}
          selector: {matchLabels: {app: "${schema.spec.name}"}}
          template:
            metadata: {labels: {app: "${schema.spec.name}"}}
            spec:
              nodeSelector: '${schema.spec.pinTo != "" ? {"kubernetes.io/hostname": schema.spec.pinTo} : omit()}'
              containers:
                - name: app
                  image: nginx
                  args: ${lists.insertAtIndex(["--serve"], 0, "--name=" + schema.spec.name)}
`)
	render := func(spec string) map[string]any {
		t.Helper()
		d, err := Render(g.Node("deployment"), NewScope(g, obj(t, `{metadata: {name: x, namespace: default}, spec: `+spec+`}`)))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := render(`{name: web, config: '{"replicas": 3, "mode": "fast"}', labels: {team: a, app: overridden}, pinTo: ""}`)
	meta := d["metadata"].(map[string]any)
	if want := map[string]any{"app": "overridden", "team": "a"}; !reflect.DeepEqual(meta["labels"], want) {
		t.Errorf("labels = %v, want %v", meta["labels"], want)
	}
	annotations := meta["annotations"].(map[string]any)
	if annotations["settings"] != `{"mode":"fast","replicas":3}` || len(annotations["checksum"].(string)) != 64 {
		t.Errorf("annotations = %v", annotations)
	}
	spec := d["spec"].(map[string]any)
	if spec["replicas"] != int64(3) {
		t.Errorf("replicas = %#v, want int64 3", spec["replicas"])
	}
	podSpec := spec["template"].(map[string]any)["spec"].(map[string]any)
	if _, ok := podSpec["nodeSelector"]; ok {
		t.Errorf("omit() left nodeSelector in: %v", podSpec["nodeSelector"])
	}
	if args := podSpec["containers"].([]any)[0].(map[string]any)["args"]; !reflect.DeepEqual(args, []any{"--name=web", "--serve"}) {
		t.Errorf("args = %v", args)
	}
	pinned := render(`{name: web, config: '{"replicas": 1}', labels: {}, pinTo: node-1}`)
	podSpec = pinned["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if want := map[string]any{"kubernetes.io/hostname": "node-1"}; !reflect.DeepEqual(podSpec["nodeSelector"], want) {
		t.Errorf("nodeSelector = %v, want %v", podSpec["nodeSelector"], want)
	}
}

// omit() in a list item removes the item, as in kro, and the items after it
// still get their own values.
func TestOmitRemovesListItems(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Job
    spec:
      arg: string | default=""
      sidecar: boolean | default=false
  resources:
    - id: pod
      template:
        apiVersion: v1
        kind: Pod
        metadata: {name: job}
        spec:
          containers:
            - name: main
              image: busybox
              command: ["echo", '${schema.spec.arg != "" ? schema.spec.arg : omit()}', "${schema.spec.arg + '!'}"]
            - '${schema.spec.sidecar ? {"name": "sidecar", "image": "envoy"} : omit()}'
            - name: last
              image: '${schema.spec.sidecar ? "a" : "b"}'
`)
	containers := func(spec string) []any {
		t.Helper()
		p, err := Render(g.Node("pod"), NewScope(g, obj(t, `{metadata: {name: x, namespace: default}, spec: `+spec+`}`)))
		if err != nil {
			t.Fatal(err)
		}
		return p["spec"].(map[string]any)["containers"].([]any)
	}
	got := containers(`{arg: "", sidecar: false}`)
	want := []any{
		map[string]any{"name": "main", "image": "busybox", "command": []any{"echo", "!"}},
		map[string]any{"name": "last", "image": "b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("omitted items: containers = %v, want %v", got, want)
	}
	got = containers(`{arg: hi, sidecar: true}`)
	want = []any{
		map[string]any{"name": "main", "image": "busybox", "command": []any{"echo", "hi", "hi!"}},
		map[string]any{"name": "sidecar", "image": "envoy"},
		map[string]any{"name": "last", "image": "a"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kept items: containers = %v, want %v", got, want)
	}
}

// Strings the schema gives a format are the values expressions were
// type-checked as: a Secret's data is bytes (string() decodes it), a
// timestamp compares as one; written back out they are the API's text
// again, sub-second digits included.
func TestTypedStringsEvaluateAsTheirTypes(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Client
    spec: {clientId: string}
    status:
      decoded: ${string(secret.data.clientId)}
      encoded: ${base64.encode(secret.data.clientId)}
      data: ${secret.data}
      old: ${secret.metadata.creationTimestamp < timestamp("2030-01-01T00:00:00Z")}
      created: ${secret.metadata.creationTimestamp}
      updated: ${secret.metadata.managedFields[0].time}
      instanceCreated: ${schema.metadata.creationTimestamp > timestamp("2020-01-01T00:00:00Z")}
  resources:
    - id: secret
      readyWhen: ["${string(secret.data.clientId) != ''}"]
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}"}
        stringData: {clientId: "${schema.spec.clientId}"}
    - id: copy
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}-copy"}
        data: ${secret.data}
`)
	s := NewScope(g, obj(t, `{metadata: {name: c, namespace: default, creationTimestamp: "2026-11-24T09:00:00Z"}, spec: {clientId: abc}}`))
	secret := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: c, creationTimestamp: "2026-01-01T00:00:00Z",
  managedFields: [{manager: kro-agent, time: "2026-01-01T00:00:01.5Z"}]}, data: {clientId: YWJj}}`)
	s.Observe(g.Node("secret"), secret)
	status, err := Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"decoded": "abc", "encoded": "YWJj", "data": map[string]any{"clientId": "YWJj"},
		"old": true, "created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:01.5Z", "instanceCreated": true,
	}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("status = %v, want %v", status, want)
	}
	if v := Ready(g.Node("secret"), secret, s); !v.Ready {
		t.Errorf("readyWhen on the Secret's bytes: %s", v.Reason)
	}
	copied, err := Render(g.Node("copy"), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := copied["data"]; !reflect.DeepEqual(got, map[string]any{"clientId": "YWJj"}) {
		t.Errorf("copied data = %v, want the base64 text", got)
	}
	if secret["data"].(map[string]any)["clientId"] != "YWJj" {
		t.Error("the observed object was changed")
	}
}

// A number the instance gives whole, which JSON decoding makes an integer,
// is the double its type checked as: arithmetic with doubles finds its
// overload, and the number written out is the one given.
// A Secret read back has no stringData: a render waiting for it stays
// pending (the RGD is legal, and a change to it resolves it) and says why,
// and what to read instead; a key missing from elsewhere is told as before.
func TestWaitingForStringDataSaysItNeverComes(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: creds}
spec:
  schema: {apiVersion: v1alpha1, kind: Creds, spec: {pw: string}}
  resources:
    - id: secret
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}"}
        stringData: {pw: "${schema.spec.pw}"}
    - id: copy
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-copy"}
        data: {pw: "${secret.stringData.pw}", tagged: "${secret.metadata.annotations.note + secret.stringData.pw}"}
`)
	s := NewScope(g, obj(t, `{metadata: {name: c, namespace: default}, spec: {pw: abc}}`))
	s.Observe(g.Node("secret"), obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: c, annotations: {note: n}}, data: {pw: YWJj}}`))
	_, err := Render(g.Node("copy"), s)
	if !WaitsForValue(err) || !errors.Is(err, ErrNeverComes) {
		t.Fatalf("render: %v, want it pending for good", err)
	}
	want := "waiting for a value it reads: data.pw: ${secret.stringData.pw}: no such key: stringData; no Secret read back has stringData: the API server writes it into data, base64-encoded; read string(secret.data.pw)"
	if got := Waiting(err); got != want {
		t.Errorf("waiting:\n %s\nwant\n %s", got, want)
	}
	s.Observe(g.Node("secret"), obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: c}, stringData: {pw: abc}}`))
	_, err = Render(g.Node("copy"), s)
	if want := "waiting for a value it reads: data.tagged: ${secret.metadata.annotations.note + secret.stringData.pw}: no such key: annotations"; Waiting(err) != want || errors.Is(err, ErrNeverComes) {
		t.Errorf("waiting: %s, want %s", Waiting(err), want)
	}
}

// A template waiting for the load balancer's address of a Service that is
// not of type LoadBalancer, which never gets one, says so.
func TestWaitingForALoadBalancerAddressNoneGetsSaysSo(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: fronts}
spec:
  schema: {apiVersion: v1alpha1, kind: Front, spec: {}}
  resources:
    - id: svc
      template: {apiVersion: v1, kind: Service, metadata: {name: front}, spec: {ports: [{port: 80}]}}
    - id: endpoint
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: endpoint}
        data: {host: "${svc.status.loadBalancer.ingress[0].hostname}"}
`)
	s := NewScope(g, obj(t, `{metadata: {name: f, namespace: default}, spec: {}}`))
	s.Observe(g.Node("svc"), obj(t, `{apiVersion: v1, kind: Service, metadata: {name: front}, spec: {type: ClusterIP, clusterIP: 10.0.0.7}, status: {loadBalancer: {}}}`))
	_, err := Render(g.Node("endpoint"), s)
	want := "waiting for a value it reads: data.host: ${svc.status.loadBalancer.ingress[0].hostname}: no such key: ingress; no load balancer gives an address to a Service of type ClusterIP, the default: only one of type LoadBalancer gets status.loadBalancer.ingress; set spec.type: LoadBalancer, or read svc.spec.clusterIP"
	if !errors.Is(err, ErrNeverComes) || Waiting(err) != want {
		t.Errorf("render: %v\nwant %s", err, want)
	}
}

// A readyWhen or a template waiting for a count the object's controller
// left out of a status written for the object's generation (the API
// server's kinds leave a 0 out) says how to read it as 0; while the status
// is not written, or is of a generation before, it waits as for any other
// value.
func TestWaitingForACountLeftOutSaysHowToReadIt(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: scaled}
spec:
  schema: {apiVersion: v1alpha1, kind: Scaled, spec: {replicas: integer}}
  resources:
    - id: deploy
      readyWhen: ["${deploy.status.availableReplicas == deploy.spec.replicas}"]
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: "${schema.metadata.name}"}
        spec:
          replicas: ${schema.spec.replicas}
          selector: {matchLabels: {app: a}}
          template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: nginx}]}}
    - id: count
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}"}
        data: {ready: "${string(deploy.status.readyReplicas)}"}
`)
	const hint = "; deploy's controller has written its status without status.%s: Kubernetes leaves a count of 0 out, so where 0 is an answer read deploy.status.?%s.orValue(0)"
	const readied = "readyWhen ${deploy.status.availableReplicas == deploy.spec.replicas} cannot be evaluated yet (no such key: %s%s); it read deploy.status.availableReplicas = <absent>, deploy.spec.replicas = 0"
	const rendered = "waiting for a value it reads: data.ready: ${string(deploy.status.readyReplicas)}: no such key: %s%s"
	leftOut := func(f string) string { return fmt.Sprintf(hint, f, f) }
	for _, tc := range []struct {
		name, observed, ready, render string
	}{
		{"written for its generation", `{metadata: {generation: 2}, spec: {replicas: 0}, status: {observedGeneration: 2, conditions: []}}`,
			fmt.Sprintf(readied, "availableReplicas", leftOut("availableReplicas")), fmt.Sprintf(rendered, "readyReplicas", leftOut("readyReplicas"))},
		{"written, saying no generation", `{metadata: {generation: 2}, spec: {replicas: 0}, status: {replicas: 0, conditions: []}}`,
			fmt.Sprintf(readied, "availableReplicas", leftOut("availableReplicas")), fmt.Sprintf(rendered, "readyReplicas", leftOut("readyReplicas"))},
		{"of a generation before", `{metadata: {generation: 2}, spec: {replicas: 0}, status: {observedGeneration: 1, replicas: 3}}`,
			fmt.Sprintf(readied, "availableReplicas", ""), fmt.Sprintf(rendered, "readyReplicas", "")},
		{"not written", `{metadata: {generation: 1}, spec: {replicas: 0}}`,
			fmt.Sprintf(readied, "status", ""), fmt.Sprintf(rendered, "status", "")},
	} {
		s := NewScope(g, obj(t, `{metadata: {name: s, namespace: default}, spec: {replicas: 0}}`))
		deploy := obj(t, tc.observed)
		if r := Ready(g.Node("deploy"), deploy, s); r.Ready || r.Reason != tc.ready {
			t.Errorf("%s: %+v\nwant %s", tc.name, r, tc.ready)
		}
		s.Observe(g.Node("deploy"), deploy)
		if _, err := Render(g.Node("count"), s); !WaitsForValue(err) || Waiting(err) != tc.render {
			t.Errorf("%s: rendering the ConfigMap: %v\nwant %s", tc.name, err, tc.render)
		}
	}
}

// A collection's readyWhen waiting on each item for a count left out says
// so too, of the item.
func TestWaitingForACountLeftOutOfAnItemSaysHowToReadIt(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: fleet}
spec:
  schema: {apiVersion: v1alpha1, kind: Fleet, spec: {regions: "[]string"}}
  resources:
    - id: workers
      forEach: [{region: "${schema.spec.regions}"}]
      readyWhen: ["${each.status.availableReplicas == each.spec.replicas}"]
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: "${region}"}
        spec:
          replicas: 0
          selector: {matchLabels: {app: a}}
          template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: nginx}]}}
`)
	s := NewScope(g, obj(t, `{metadata: {name: f, namespace: default}, spec: {regions: [eu]}}`))
	const want = "readyWhen ${each.status.availableReplicas == each.spec.replicas} cannot be evaluated yet (no such key: availableReplicas; the controller of workers's items has written its status without status.availableReplicas: Kubernetes leaves a count of 0 out, so where 0 is an answer read each.status.?availableReplicas.orValue(0)); it read each.status.availableReplicas = <absent>, each.spec.replicas = 0"
	item := obj(t, `{metadata: {generation: 1}, spec: {replicas: 0}, status: {observedGeneration: 1, conditions: []}}`)
	if r := Ready(g.Node("workers"), item, s); r.Ready || r.Reason != want {
		t.Errorf("%+v\nwant %s", r, want)
	}
}

func TestWholeNumbersAreDoubles(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Scaled
    spec:
      ratio: float
      weights: "[]float"
    status:
      doubled: ${schema.spec.ratio * 2.0}
      ratio: ${schema.spec.ratio}
      total: ${schema.spec.weights.map(w, w * 10.0)}
  resources:
    - id: cm
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}"}
        data:
          big: ${string(schema.spec.ratio > 1.5)}
`)
	s := NewScope(g, obj(t, `{metadata: {name: c, namespace: default}, spec: {ratio: 2, weights: [1, 0.5]}}`))
	cm, err := Render(g.Node("cm"), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := cm["data"].(map[string]any)["big"]; got != "true" {
		t.Errorf("data.big = %v, want true", got)
	}
	s.Observe(g.Node("cm"), cm)
	status, err := Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"doubled": 4.0, "ratio": 2.0, "total": []any{10.0, 5.0}}; !reflect.DeepEqual(status, want) {
		t.Errorf("status = %v, want %v", status, want)
	}
}

// Status may hold lists of expressions, as in kro: a list is projected once
// every item can be, items omit() leaves out are dropped, and its schema
// in the generated CRD is an array of the items' type.
func TestStatusLists(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Pair
    spec: {name: string}
    status:
      endpoints: ["${primary.metadata.name}", "${secondary.metadata.name}"]
      network:
        names: ["${primary.metadata.name}", '${has(primary.data.alias) ? primary.data.alias : omit()}']
        ports: [{name: "${primary.metadata.name}", port: "${size(primary.data)}"}]
  resources:
    - id: primary
      template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}-primary"}}
    - id: secondary
      template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}-secondary"}}
`)
	status := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	if e := status.Properties["endpoints"]; e.Type != "array" || e.Items.Schema.Type != "string" {
		t.Errorf("endpoints schema = %+v", e)
	}
	if p := status.Properties["network"].Properties["ports"]; p.Type != "array" || p.Items.Schema.Properties["port"].Type != "integer" {
		t.Errorf("ports schema = %+v", p)
	}
	if n := status.Properties["network"].Properties["names"]; n.Type != "" || n.XPreserveUnknownFields == nil || !*n.XPreserveUnknownFields {
		t.Errorf("names, with an item of a type known only at run time, schema = %+v, want free-form", n)
	}
	s := NewScope(g, obj(t, `{metadata: {name: p, namespace: default}, spec: {name: p}}`))
	s.Observe(g.Node("primary"), obj(t, `{metadata: {name: p-primary}, data: {a: b}}`))
	got, err := Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"network": map[string]any{
		"names": []any{"p-primary"},
		"ports": []any{map[string]any{"name": "p-primary", "port": int64(1)}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with secondary not observed: status = %v, want %v", got, want)
	}
	s.Observe(g.Node("primary"), obj(t, `{metadata: {name: p-primary}, data: {alias: main}}`))
	s.Observe(g.Node("secondary"), obj(t, `{metadata: {name: p-secondary}}`))
	got, err = Status(g, s)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{
		"endpoints": []any{"p-primary", "p-secondary"},
		"network": map[string]any{
			"names": []any{"p-primary", "main"},
			"ports": []any{map[string]any{"name": "p-primary", "port": int64(1)}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status = %v, want %v", got, want)
	}
}

// Expressions with macros evaluate once the names they read are observed;
// the macros' own variables are never waited for.
func TestMacrosEvaluate(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: App
    spec: {items: "[]string"}
    status:
      images: ${d.spec.template.spec.containers.map(c, c.image)}
  resources:
    - id: d
      readyWhen: ["${d.status.?conditions.orValue([]).exists(x, x.type == 'Available' && x.status == 'True')}"]
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: x}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers: [{name: c, image: nginx, args: "${schema.spec.items.map(i, '--' + i)}"}]
`)
	s := NewScope(g, obj(t, `{metadata: {name: x}, spec: {items: [a, b]}}`))
	d, err := Render(g.Node("d"), s)
	if err != nil {
		t.Fatal(err)
	}
	args := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"]
	if !reflect.DeepEqual(args, []any{"--a", "--b"}) {
		t.Errorf("args = %v", args)
	}
	observed := obj(t, `{spec: {template: {spec: {containers: [{image: nginx}]}}}, status: {conditions: [{type: Available, status: "True"}]}}`)
	if v := Ready(g.Node("d"), observed, s); !v.Ready {
		t.Errorf("not ready: %s", v.Reason)
	}
	s.Observe(g.Node("d"), observed)
	st, err := Status(g, s)
	if err != nil || !reflect.DeepEqual(st["images"], []any{"nginx"}) {
		t.Errorf("status = %v, %v", st, err)
	}
}

// Literals mixing types compile, as in kro's environment, and render as
// written: a container port built from a name and a number.
func TestRenderMixedLiterals(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema:
    apiVersion: v1alpha1
    kind: App
    types:
      Port: {name: string, port: integer}
    spec:
      ports: "[]Port"
  resources:
    - id: deployment
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: app}
        spec:
          selector: {matchLabels: {app: app}}
          template:
            metadata: {labels: {app: app}}
            spec:
              containers:
                - name: app
                  image: nginx
                  ports: '${schema.spec.ports.map(p, {"name": p.name, "containerPort": p.port})}'
                  args: '${["--verbose", 2].map(a, string(a))}'
`)
	d, err := Render(g.Node("deployment"), NewScope(g, obj(t, `{metadata: {name: x, namespace: default}, spec: {ports: [{name: http, port: 8080}]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	c := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if want := []any{map[string]any{"name": "http", "containerPort": int64(8080)}}; !reflect.DeepEqual(c["ports"], want) {
		t.Errorf("ports = %#v, want %#v", c["ports"], want)
	}
	if want := []any{"--verbose", "2"}; !reflect.DeepEqual(c["args"], want) {
		t.Errorf("args = %#v, want %#v", c["args"], want)
	}
}

// A readyWhen on a Secret's data explains itself without quoting the
// Secret: the reason is written into the instance's status, which more
// people may read. Whether a key is there is still said, and what the
// check read elsewhere in the Secret is quoted as for any object.
func TestReadyDoesNotQuoteSecretData(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: creds}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Creds
  resources:
  - id: creds
    readyWhen:
    - ${creds.data.?token.orValue(b"") == b"ready" && creds.type == "Opaque"}
    - ${size(creds.data.password) > 0}
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: creds}
`)
	n := g.Node("creds")
	s := NewScope(g, obj(t, `{metadata: {name: c}}`))
	r := Ready(n, obj(t, `{type: Opaque, data: {token: c2VjcmV0}}`), s)
	if r.Ready || strings.Contains(r.Reason, "c2VjcmV0") {
		t.Fatalf("reason %q quotes the Secret's data", r.Reason)
	}
	for _, want := range []string{`creds.data.?token.orValue(b"") = <secret>`, `creds.type = "Opaque"`} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q does not contain %q", r.Reason, want)
		}
	}
	r = Ready(n, obj(t, `{type: Opaque, data: {token: cmVhZHk=}}`), s)
	if r.Ready || !strings.Contains(r.Reason, "creds.data.password = <absent>") {
		t.Errorf("reason %q does not say the key is absent", r.Reason)
	}
}

// An expression whose cost grows with the instance's values (comprehensions
// nested over a list the instance gives) is stopped at the API server's
// per-expression cost limit, and the error names the field and the
// expression: an instance cannot hold a worker of the agent for as long as
// it likes.
func TestRenderStopsAnExpressionAtTheCostLimit(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: costly}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Costly
    spec:
      items: "[]integer"
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: costly}
      data:
        count: "${string(schema.spec.items.map(a, schema.spec.items.map(b, schema.spec.items.map(c, a + b + c))).size())}"
`)
	items := make([]string, 300)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	s := NewScope(g, obj(t, `{metadata: {name: c}, spec: {items: [`+strings.Join(items, ",")+`]}}`))
	_, err := Render(g.Node("cm"), s)
	if err == nil || errors.Is(err, ErrPending) {
		t.Fatalf("Render = %v, want the cost limit's error", err)
	}
	for _, want := range []string{"data.count: ${string(schema.spec.items.map(", "costs more than the limit of 1000000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// The same expression over a short list is evaluated.
	s = NewScope(g, obj(t, `{metadata: {name: c}, spec: {items: [1, 2, 3]}}`))
	if out, err := Render(g.Node("cm"), s); err != nil || out["data"].(map[string]any)["count"] != "3" {
		t.Errorf("Render = %v, %v; want count 3", out["data"], err)
	}
}

// A value missing from what an expression reads is waited for, unless the
// expression reads nothing but the instance (the instance itself, or the
// iterators of lists computed from it): that value comes only with a change
// to the instance, as a field it does not set does (ErrUnset), and the
// error says so. A status field reading it is left out, as any whose inputs
// are missing.
func TestValuesMissingFromTheInstanceAloneAreTheAuthors(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: short}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Short
    spec:
      names: "[]string"
      zones: "[]string"
      teams: "map[string]string"
    status:
      first: ${schema.spec.names[0]}
  resources:
  - id: first
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.names[0]}"}
  - id: finalized
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-finalized"}
      data: {by: "${first.metadata.finalizers[0]}"}
  - id: perZone
    forEach:
    - zone: ${schema.spec.zones}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${zone}"}
      data: {team: "${schema.spec.teams[zone]}"}
  - id: perFinalizer
    forEach:
    - f: ${first.metadata.finalizers}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${f}"}
      data: {team: "${schema.spec.teams[f]}"}
`)
	s := NewScope(g, obj(t, `{metadata: {name: s}, spec: {names: [], zones: [eu], teams: {}}}`))
	s.Observe(g.Node("first"), obj(t, `{metadata: {name: a, finalizers: [x]}}`))
	instanceValue := func(t *testing.T, err error, want string) {
		t.Helper()
		var iv *InstanceValueError
		if !errors.As(err, &iv) || !errors.Is(err, ErrUnset) || WaitsForValue(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want an InstanceValueError containing %q", err, want)
		}
	}
	_, err := Render(g.Node("first"), s)
	instanceValue(t, err, "metadata.name: ${schema.spec.names[0]}: index out of bounds: 0 (the expression reads only the instance")
	items, err := Expand(g.Node("perZone"), s, 0)
	if err != nil || len(items) != 1 {
		t.Fatalf("Expand(perZone) = %v, %v", items, err)
	}
	_, err = Render(g.Node("perZone"), items[0].Scope)
	instanceValue(t, err, "data.team: ${schema.spec.teams[zone]}: no such key: eu")

	// Read from another resource, the same kind of value is waited for.
	s.Observe(g.Node("first"), obj(t, `{metadata: {name: a}}`))
	if _, err := Render(g.Node("finalized"), s); !WaitsForValue(err) {
		t.Errorf("Render(finalized) = %v, want it waiting for the value", err)
	}
	s.Observe(g.Node("first"), obj(t, `{metadata: {name: a, finalizers: [x]}}`))
	items, err = Expand(g.Node("perFinalizer"), s, 0)
	if err != nil || len(items) != 1 {
		t.Fatalf("Expand(perFinalizer) = %v, %v", items, err)
	}
	if _, err := Render(g.Node("perFinalizer"), items[0].Scope); !WaitsForValue(err) {
		t.Errorf("Render(perFinalizer) = %v, want it waiting for the value", err)
	}

	status, err := Status(g, s)
	if _, ok := status["first"]; ok || err != nil {
		t.Errorf("Status = %v, %v; want status.first left out, no error", status, err)
	}
}

// Maps iterate over their keys in sorted order, however deep: a Go map's
// order changes from one evaluation to the next, and a collection over a
// map's keys, or a string joined from them, would be rendered in another
// order at each reconcile, and applied again.
func TestMapsIterateInTheOrderOfTheirKeys(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: quotas}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Quotas
    spec:
      quotas: "map[string]integer"
      pools: "[]object"
  resources:
  - id: perQuota
    forEach:
    - q: ${schema.spec.quotas.map(k, k)}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-${q}"}
      data:
        over: ${schema.spec.quotas.filter(k, schema.spec.quotas[k] > 2).join(",")}
        pools: ${schema.spec.pools.map(p, p.labels.map(k, k + "=" + string(p.labels[k])).join(";")).join("|")}
`)
	instance := `{metadata: {name: q}, spec: {quotas: {cpu: 1, mem: 2, pods: 3, pvc: 4, svc: 5, zz: 6, aa: 7},
  pools: [{labels: {zone: a, tier: gold, app: x}}, {labels: {b: 1, a: 2}}]}}`
	for range 30 {
		s := NewScope(g, obj(t, instance))
		items, err := Expand(g.Node("perQuota"), s, 0)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, item := range items {
			keys = append(keys, item.Scope.vars["q"].(string))
		}
		if got := strings.Join(keys, ","); got != "aa,cpu,mem,pods,pvc,svc,zz" {
			t.Fatalf("items = %s, want the keys in order", got)
		}
		out, err := Render(g.Node("perQuota"), items[0].Scope)
		if err != nil {
			t.Fatal(err)
		}
		data := out["data"].(map[string]any)
		if data["over"] != "aa,pods,pvc,svc,zz" || data["pools"] != "app=x;tier=gold;zone=a|a=2;b=1" {
			t.Fatalf("data = %v, want the keys in order", data)
		}
	}
}

// What a pending render waits for is said without the words that make it
// pending, naming the expression when what is missing is a value in what it
// reads.
func TestWaitingSaysForWhat(t *testing.T) {
	for _, tc := range []struct {
		err   error
		want  string
		value bool
	}{
		{&NotObservedError{ID: "config"}, "waiting for resource config", false},
		{fieldError(expr.Path{{Key: "data"}, {Key: "first"}}, &graph.Expression{Source: "schema.spec.names[0]"}, classify(errors.New("index out of bounds: 0"))),
			"waiting for a value it reads: data.first: ${schema.spec.names[0]}: index out of bounds: 0", true},
		{&UnsetError{Expression: "schema.spec.team", Field: expr.Path{{Key: "spec"}, {Key: "team"}}}, "the instance does not set spec.team", false},
		{fmt.Errorf("data.first: %w", &InstanceValueError{Expression: "schema.spec.names[0]", Missing: "index out of bounds: 0"}),
			"data.first: ${schema.spec.names[0]}: index out of bounds: 0 (the expression reads only the instance, so only a change to the instance resolves it)", false},
	} {
		if got := Waiting(tc.err); got != tc.want {
			t.Errorf("Waiting(%v) = %q, want %q", tc.err, got, tc.want)
		}
		if got := WaitsForValue(tc.err); got != tc.value {
			t.Errorf("WaitsForValue(%v) = %v, want %v", tc.err, got, tc.value)
		}
	}
}

// An object of a custom kind read from a cache gets the defaults its
// schema has gained since it was written, as the API server would return
// it; one that has them is returned as it is.
func TestTypedFillsInACustomKindsDefaults(t *testing.T) {
	n := &graph.Node{ID: "db", Defaults: graph.DefaultsOf(&extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]extv1.JSONSchemaProps{"size": {Type: "integer", Default: &extv1.JSON{Raw: []byte("3")}}}},
	}})}
	cached := map[string]any{"spec": map[string]any{}}
	got := Typed(n, cached).(map[string]any)
	if size := got["spec"].(map[string]any)["size"]; size != int64(3) {
		t.Errorf("spec.size = %#v, want the default 3", size)
	}
	if len(cached["spec"].(map[string]any)) != 0 {
		t.Error("the cached object was changed")
	}
	if list := Typed(n, []any{cached}).([]any); list[0].(map[string]any)["spec"].(map[string]any)["size"] != int64(3) {
		t.Errorf("an item of a collection: %v", list[0])
	}
	if full := (map[string]any{"spec": map[string]any{"size": int64(5)}}); reflect.ValueOf(Typed(n, full)).Pointer() != reflect.ValueOf(full).Pointer() {
		t.Error("an object with every default set was copied")
	}
}

// A reference by labels never lists the objects of the instance that
// reads it, which carry its labels and may match; one read by name, or by
// an instance not created yet, lists as written.
func TestExternalSelectorLeavesOutTheReadersOwnObjects(t *testing.T) {
	g := compileRGD(t, `
metadata: {name: tenants}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Tenant
    spec: {team: string}
  resources:
    - id: teamConfigs
      externalRef:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          selector: {matchLabels: {team: "${schema.spec.team}"}}
    - id: platform
      externalRef:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: platform}
`)
	const uid = "4f3c2a8e-0d1b-4c9e-9a57-2b6f1e8d0c3a"
	own := map[string]string{"team": "red", v1alpha1.LabelInstanceID: uid}
	others := map[string]string{"team": "red", v1alpha1.LabelInstanceID: "0b7d5c1e-9f2a-4e3b-8c6d-1a2b3c4d5e6f"}
	unmanaged := map[string]string{"team": "red"}

	existing := NewScope(g, obj(t, `{metadata: {name: t1, namespace: default, uid: `+uid+`}, spec: {team: red}}`))
	target, err := ExternalTarget(g.Node("teamConfigs"), existing)
	if err != nil {
		t.Fatal(err)
	}
	if got := target.Selector.String(); got != "team=red" {
		t.Errorf("Selector = %q, want the RGD's team=red", got)
	}
	sel := target.ListSelector()
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{{own, false}, {others, true}, {unmanaged, true}} {
		if got := sel.Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("ListSelector %q matches %v = %v, want %v", sel, tc.labels, got, tc.want)
		}
	}

	created := NewScope(g, obj(t, `{metadata: {name: t1, namespace: default}, spec: {team: red}}`))
	target, err = ExternalTarget(g.Node("teamConfigs"), created)
	if err != nil {
		t.Fatal(err)
	}
	if got := target.ListSelector().String(); got != "team=red" {
		t.Errorf("ListSelector for an instance not created yet = %q, want team=red", got)
	}

	byName, err := ExternalTarget(g.Node("platform"), existing)
	if err != nil {
		t.Fatal(err)
	}
	if byName.ListSelector() != nil || byName.Name != "platform" || byName.Namespace != "default" {
		t.Errorf("reference by name = %+v, want ConfigMap default/platform and no selector", byName)
	}
}

// An expression that fails on the values it reads (not one waiting for a
// value) is reported with them, wherever it is written: a template field,
// a status field, includeWhen, forEach and a custom condition. A Secret's
// data, and an iterator over a list read from it, are not quoted.
func TestFailuresQuoteWhatTheyRead(t *testing.T) {
	g := compileRGD(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: failing}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Failing
    spec:
      size: string
      divisor: integer
    status:
      share: ${12 / schema.spec.divisor}
      token: ${int(string(creds.data.token)) + size(creds.metadata.name)}
      conditions:
      - type: Sized
        status: ${int(schema.spec.size) > 2}
        reason: Computed
  resources:
  - id: creds
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: creds}
  - id: cm
    includeWhen: ["${int(schema.spec.size) > 0}"]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: cm}
      data:
        size: ${string(int(schema.spec.size))}
  - id: perKey
    forEach:
    - key: ${creds.data.map(k, [k][int(string(creds.data[k]))])}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${key}"}
      data:
        n: ${string(int(key))}
`)
	s := NewScope(g, obj(t, `{metadata: {name: f}, spec: {size: large, divisor: 0}}`))
	s.Observe(g.Node("creds"), obj(t, `{metadata: {name: creds}, data: {token: c2VjcmV0}}`))

	_, renderErr := Render(g.Node("cm"), s)
	_, includeErr := Included(g.Node("cm"), s)
	_, statusErr := Status(g, s)
	_, forEachErr := Expand(g.Node("perKey"), s, 100)
	var condMessage string
	for _, c := range Conditions(g, s) {
		condMessage = c.Message
	}
	for _, tc := range []struct {
		what      string
		err       error
		want, not string
	}{
		{"template", renderErr, `${string(int(schema.spec.size))}: type conversion error from 'string' to 'int'; it read schema.spec.size = "large"`, ""},
		{"includeWhen", includeErr, `; it read schema.spec.size = "large"`, ""},
		{"status field", statusErr, `division by zero; it read schema.spec.divisor = 0`, ""},
		{"status field reading a Secret", statusErr, `it read creds.data.token = <secret>, creds.metadata.name = "creds"`, "c2VjcmV0"},
		{"forEach over a Secret", forEachErr, `it read creds.data = <secret>`, "c2VjcmV0"},
		{"custom condition", errors.New(condMessage), `status ${int(schema.spec.size) > 2}: type conversion error from 'string' to 'int'; it read schema.spec.size = "large"`, ""},
	} {
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error", tc.what)
		case !strings.Contains(tc.err.Error(), tc.want):
			t.Errorf("%s: %q\ndoes not say %q", tc.what, tc.err, tc.want)
		case tc.not != "" && strings.Contains(tc.err.Error(), tc.not):
			t.Errorf("%s: %q quotes the Secret", tc.what, tc.err)
		}
	}

	// Waiting for a value is not a failure: nothing is quoted.
	s = NewScope(g, obj(t, `{metadata: {name: f}, spec: {size: "1", divisor: 2}}`))
	if _, _, err := FieldValue(g.Status[1], s); err == nil || !errors.Is(err, ErrPending) || strings.Contains(err.Error(), "it read") {
		t.Errorf("a status field waiting for the Secret: %v", err)
	}
}
