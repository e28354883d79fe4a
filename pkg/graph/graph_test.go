package graph

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func builtin(t testing.TB) kinds.Resolver {
	t.Helper()
	r, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func parseRGD(t testing.TB, doc string) *v1alpha1.ResourceGraphDefinition {
	t.Helper()
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := yaml.UnmarshalStrict([]byte(doc), rgd); err != nil {
		t.Fatalf("test RGD does not parse: %v", err)
	}
	return rgd
}

func TestExamplesGolden(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*/rgd.yaml")
	if err != nil || len(dirs) < 4 {
		t.Fatalf("want at least 4 examples, found %v (%v)", dirs, err)
	}
	for _, path := range dirs {
		name := filepath.Base(filepath.Dir(path))
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var outs [2][]byte
			for i := range outs {
				g, err := Compile(parseRGD(t, string(raw)), Options{Resolver: builtin(t)})
				if err != nil {
					t.Fatalf("example does not compile:\n%v", err)
				}
				if outs[i], err = yaml.Marshal(g.CRD); err != nil {
					t.Fatal(err)
				}
			}
			if string(outs[0]) != string(outs[1]) {
				t.Fatal("two compilations of the same RGD gave different CRDs")
			}
			golden := filepath.Join("testdata", "golden", name+".crd.yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, outs[0], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pkg/graph -update to create it)", err)
			}
			if string(want) != string(outs[0]) {
				t.Errorf("generated CRD differs from %s (go test ./pkg/graph -update rewrites it):\n%s", golden, outs[0])
			}
		})
	}
}

func TestTopologicalOrder(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: order}
spec:
  schema: {apiVersion: v1alpha1, kind: Order, spec: {name: string}}
  resources:
  - id: svc
    template: {apiVersion: v1, kind: Service, metadata: {name: "${deploy.metadata.name}"}}
  - id: cfgA
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${cfgB.metadata.name}-${cfgA.metadata.name}"}
  - id: cfgB
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	// cfgA comes before cfgB (authoring order among independent nodes);
	// svc waits for deploy, which waits for both.
	if want := []string{"cfgA", "cfgB", "deploy", "svc"}; !reflect.DeepEqual(g.Order(), want) {
		t.Errorf("order = %v, want %v", g.Order(), want)
	}
	if want := []string{"cfgA", "cfgB"}; !reflect.DeepEqual(g.Node("deploy").Dependencies, want) {
		t.Errorf("deploy depends on %v, want %v", g.Node("deploy").Dependencies, want)
	}
}

func TestCompileInfersStatusTypes(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: st}
spec:
  schema:
    apiVersion: v1alpha1
    kind: St
    spec: {count: integer}
    status:
      replicas: ${d.spec.replicas}
      ready: ${d.status.?readyReplicas.orValue(0) > 0}
      name: ${d.metadata.name}
      ratio: ${double(schema.spec.count) / 2.0}
      labels: ${d.metadata.labels}
      images: ${d.spec.template.spec.containers.map(c, c.image)}
      nested: {url: "http://${d.metadata.name}"}
      whole: ${d.spec}
  resources:
  - id: d
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	props := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties
	for field, want := range map[string]string{
		"replicas": "integer", "ready": "boolean", "name": "string", "ratio": "number",
		"labels": "object", "images": "array", "nested": "object", "whole": "object", "state": "string", "conditions": "array",
	} {
		if got := props[field].Type; got != want {
			t.Errorf("status.%s type = %q, want %q", field, got, want)
		}
	}
	if got := props["images"].Items.Schema.Type; got != "string" {
		t.Errorf("status.images items = %q, want string", got)
	}
	if got := props["nested"].Properties["url"].Type; got != "string" {
		t.Errorf("status.nested.url = %q, want string", got)
	}
}

// kro-agent writes status.observedGeneration, for kstatus, unless the RGD
// projects a field of that name, which then stays the RGD's. Until it
// first does, the API server's defaulting on read gives a new instance 0,
// which kstatus takes for not observed yet rather than Current.
func TestObservedGenerationIsTheAgentsUnlessProjected(t *testing.T) {
	compile := func(status string) *Graph {
		g, err := Compile(parseRGD(t, `
metadata: {name: og}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Og
    status:
      `+status+`
  resources:
  - id: d
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}}
`), Options{Resolver: builtin(t)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := compile("replicas: ${d.spec.replicas}")
	prop := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties[StatusObservedGeneration]
	if !g.ObservedGeneration || !g.AgentWrites(StatusObservedGeneration) || prop.Type != "integer" || prop.Format != "int64" {
		t.Errorf("not projected: written by kro-agent %v, schema %+v; want it written, an int64", g.ObservedGeneration, prop)
	}
	fresh := map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "Og", "metadata": map[string]any{"name": "o", "generation": int64(1)}}
	structuraldefaulting.Default(fresh, structural(t, g))
	if og, found, _ := unstructured.NestedInt64(fresh, "status", StatusObservedGeneration); !found || og != 0 {
		t.Errorf("an instance kro-agent has not written reads with status %v, want observedGeneration 0", fresh["status"])
	}
	health, err := kstatus.Compute(&unstructured.Unstructured{Object: fresh})
	if err != nil || health.Status != kstatus.InProgressStatus {
		t.Errorf("kstatus of an instance kro-agent has not written: %+v, %v; want InProgress", health, err)
	}
	g = compile("observedGeneration: ${d.status.?observedGeneration.orValue(0)}")
	prop = g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties[StatusObservedGeneration]
	if g.ObservedGeneration || g.AgentWrites(StatusObservedGeneration) || !strings.HasPrefix(prop.Description, "Projected by kro-agent from ") {
		t.Errorf("projected: written by kro-agent %v, schema %+v; want the RGD's projection", g.ObservedGeneration, prop)
	}
	if status := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]; prop.Default != nil || status.Default != nil {
		t.Errorf("projected: observedGeneration defaulted to %v, the status to %v; want neither defaulted", prop.Default, status.Default)
	}
	if len(g.Status) != 1 || g.Status[0].Path.String() != StatusObservedGeneration {
		t.Errorf("projected fields %v, want observedGeneration", g.Status)
	}
}

// A container's resources hold maps of quantities, a union of string and
// number: an object of strings may be written into them, and they can be
// read, as kro's examples do.
func TestQuantitiesTypeCheck(t *testing.T) {
	rgd := func(resources string) string {
		return `
metadata: {name: q}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Q
    spec:
      resources: {limits: {cpu: string, memory: string}, requests: {cpu: string}}
      wrong: {limitz: {cpu: string}}
    status:
      cpu: ${p.spec.containers[0].resources.limits.cpu}
  resources:
  - id: p
    template: {apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c, image: i, resources: '` + resources + `'}]}}
`
	}
	g, err := Compile(parseRGD(t, rgd("${schema.spec.resources}")), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	status := g.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties
	if cpu := status["cpu"]; cpu.XPreserveUnknownFields == nil || !*cpu.XPreserveUnknownFields {
		t.Errorf("status.cpu, a quantity, = %+v; want a value of any type", cpu)
	}
	_, err = Compile(parseRGD(t, rgd("${schema.spec.wrong}")), Options{Resolver: builtin(t)})
	if err == nil || !strings.Contains(err.Error(), "expression has type object (schema.spec.wrong)") {
		t.Errorf("an object with a field resources do not have was accepted: %v", err)
	}
}

func TestReadyWhenInputs(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: in}
spec:
  schema: {apiVersion: v1alpha1, kind: In}
  resources:
  - id: deploy
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}}
    readyWhen:
    - ${deploy.status.?availableReplicas.orValue(0) == deploy.spec.replicas && has(deploy.status.conditions)}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range g.Node("deploy").ReadyWhen[0].Inputs() {
		got = append(got, in.Source)
	}
	want := []string{"deploy.status.?availableReplicas.orValue(0)", "deploy.spec.replicas"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs = %q, want %q", got, want)
	}
}

// The variables macros bind (x in list.exists(x, ...)) are not names in
// scope: they make no dependency, and readyWhen may use them.
func TestMacroVariablesAreNotReferences(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: macros}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Macros
    spec: {items: "[]string"}
    status:
      images: ${d.spec.template.spec.containers.map(c, c.image)}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: x}
      data:
        # d is bound by the macro here, not the Deployment below.
        joined: ${schema.spec.items.map(d, d + "!").join(",")}
  - id: d
    includeWhen: ["${schema.spec.items.exists(i, i == 'deploy')}"]
    readyWhen: ["${d.status.?conditions.orValue([]).exists(x, x.type == 'Available' && x.status == 'True')}"]
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${cm.metadata.name + schema.spec.items.filter(cm, cm != '').join('')}"}
      spec:
        selector: {matchLabels: {a: b}}
        template:
          metadata: {labels: {a: b}}
          spec: {containers: [{name: c, image: nginx}]}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	if deps := g.Node("cm").Dependencies; len(deps) != 0 {
		t.Errorf("cm depends on %v; the d in its template is the macro's", deps)
	}
	if deps := g.Node("d").Dependencies; !reflect.DeepEqual(deps, []string{"cm"}) {
		t.Errorf("d depends on %v, want [cm]", deps)
	}
	for name, e := range map[string]*Expression{
		"readyWhen":   g.Node("d").ReadyWhen[0],
		"includeWhen": g.Node("d").IncludeWhen[0],
		"status":      g.Status[0].Exprs[0],
	} {
		for _, ref := range e.References {
			if ref != "d" && ref != "schema" {
				t.Errorf("%s ${%s} references %q", name, e.Source, ref)
			}
		}
	}
}

// One literal name given to two resources is refused only where every
// instance would render both into one object: not when includeWhen may
// keep one of them out, nor for names in different namespaces or of
// different kinds.
func TestLiteralNamesMayRepeatWhereInstancesDecide(t *testing.T) {
	_, err := Compile(parseRGD(t, `
metadata: {name: names}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Names
    spec: {prod: boolean}
  resources:
  - id: prod
    includeWhen: ["${schema.spec.prod}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {env: prod}}
  - id: dev
    includeWhen: ["${!schema.spec.prod}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {env: dev}}
  - id: site
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: site}}
  - id: site2
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: shared}}
  - id: secret
    template: {apiVersion: v1, kind: Secret, metadata: {name: site}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Error(err)
	}
}

// An RGD's name is a label value on its CRD and on every object its
// instances manage, so it must fit in one.
func TestRGDNameFitsItsLabel(t *testing.T) {
	doc := func(name string) string {
		return fmt.Sprintf(`
metadata: {name: %s}
spec:
  schema: {apiVersion: v1alpha1, kind: Names}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}}
`, name)
	}
	if _, err := Compile(parseRGD(t, doc(strings.Repeat("r", 63))), Options{Resolver: builtin(t)}); err != nil {
		t.Errorf("a 63-character name: %v", err)
	}
	_, err := Compile(parseRGD(t, doc(strings.Repeat("r", 64))), Options{Resolver: builtin(t)})
	want := `metadata.name: Invalid value: "` + strings.Repeat("r", 64) + `": must be no more than 63 characters: the CustomResourceDefinition and every object an instance manages carry it in the label kro.run/resource-graph-definition-name`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a 64-character name: want %q, got %v", want, err)
	}
}

// A schema change that would break stored instances is named, with the
// ways past it, only when instances are stored and the RGD does not allow
// it; anything else is no warning.
func TestBreakageWarning(t *testing.T) {
	rgd := func(spec, annotations string) *v1alpha1.ResourceGraphDefinition {
		return parseRGD(t, `
metadata: {name: notes`+annotations+`}
spec:
  schema: {apiVersion: v1alpha1, kind: Note, spec: `+spec+`}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}}
`)
	}
	compile := func(r *v1alpha1.ResourceGraphDefinition) *Graph {
		g, err := Compile(r, Options{Resolver: builtin(t)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	current := compile(rgd("{text: string, count: integer}", "")).CRD
	var asked schema.GroupVersionKind
	stored := func(gvk schema.GroupVersionKind) bool { asked = gvk; return true }
	none := func(schema.GroupVersionKind) bool { return false }
	breaking := rgd("{text: string, count: string}", "")
	want := `the new schema would break the stored instances of Note (spec.count changed type from integer to string): kro-agent does not apply it, and goes on serving them with the graph it has (KindReady says why), until none is left, or at once with the annotation kro.run/allow-breaking-changes: "true" on the RGD`
	if got := compile(breaking).BreakageWarning(breaking, current, stored); got != want {
		t.Errorf("warning = %q\nwant %q", got, want)
	}
	if asked != (schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Note"}) {
		t.Errorf("stored instances looked for as %v", asked)
	}
	allowed := rgd("{text: string, count: string}", ", annotations: {kro.run/allow-breaking-changes: \"true\"}")
	added := rgd("{text: string, count: integer, extra: string}", "")
	for name, tc := range map[string]struct {
		rgd     *v1alpha1.ResourceGraphDefinition
		current *extv1.CustomResourceDefinition
		stored  func(schema.GroupVersionKind) bool
	}{
		"no instance stored":        {breaking, current, none},
		"allowed by the annotation": {allowed, current, stored},
		"a field added breaks none": {added, current, stored},
		"no CRD yet":                {breaking, nil, stored},
	} {
		if got := compile(tc.rgd).BreakageWarning(tc.rgd, tc.current, tc.stored); got != "" {
			t.Errorf("%s: warning %q, want none", name, got)
		}
	}
}

// A condition that reads nothing, a schema field or template key YAML made
// of an unquoted word, and a template's status are legal and warned of;
// quoted words and other keys are not.
// checkWarnings checks that g warns of want, in order.
func checkWarnings(t *testing.T, g *Graph, want []string) {
	t.Helper()
	if got := g.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkWarningsHold checks that g has n warnings and that, together, they
// hold each of want: for warnings that quote the API server's own long
// words, of which a test names the start.
func checkWarningsHold(t *testing.T, g *Graph, n int, want ...string) {
	t.Helper()
	got := strings.Join(g.Warnings(), "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("warnings lack %q:\n%s", w, got)
		}
	}
	if len(g.Warnings()) != n {
		t.Errorf("%d warnings, want %d:\n%s", len(g.Warnings()), n, got)
	}
}

func TestWarnings(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: warned}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Warned
    spec: {name: string, x: integer, y: integer, "n": integer, at: {"off": Point}}
    types: {Point: {x: integer, y: integer}}
    status: {name: "${cm.metadata.name}", yes: "${cm.metadata.name}"}
  resources:
  - id: cm
    readyWhen: ["${1 > 0}"]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}", labels: {on: "x"}}
      data: {"no": a, n: b, other: c}
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.spec.name}"}
      spec:
        selector: {matchLabels: {app: a}}
        template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: nginx}]}}
      status: {replicas: 1}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"spec.schema.spec.true: YAML reads an unquoted y, yes or on as the boolean true, which is the key here: quote the key if you meant the word",
		"spec.schema.types.Point.true: YAML reads an unquoted y, yes or on as the boolean true, which is the key here: quote the key if you meant the word",
		"spec.schema.status.true: YAML reads an unquoted y, yes or on as the boolean true, which is the key here: quote the key if you meant the word",
		"spec.resources[cm].template.data.false: YAML reads an unquoted n, no or off as the boolean false, which is the key here: quote the key if you meant the word",
		"spec.resources[cm].template.metadata.labels.true: YAML reads an unquoted y, yes or on as the boolean true, which is the key here: quote the key if you meant the word",
		"spec.resources[cm].readyWhen[0]: ${1 > 0} reads nothing, so it is always the same",
		"spec.resources[deploy].template.status: the API server drops status from kro-agent's apply of a Deployment where status is a subresource, as it is for every built-in kind and most custom ones: its controller writes it; leave it out of the template",
	}
	checkWarnings(t, g, want)
}

// An object put in the namespace another resource makes, written the
// same way, without reading that resource is hinted at: nothing orders
// the two. One that reads it, directly or through another, is not, nor one
// that comes after it in the RGD, and so in the order applied.
func TestObjectsInANamespaceTheGraphMakesShouldReadIt(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: tenants}
spec:
  schema: {apiVersion: v1alpha1, kind: Tenant, scope: Cluster}
  resources:
  - id: settings
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: '${"tenant-" + schema.metadata.name}'}}
  - id: fixed
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: fixed, namespace: shared}}
  - id: ordered
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: ordered, namespace: '${ns.metadata.name}'}}
  - id: through
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: '${ordered.metadata.name}-2', namespace: '${"tenant-" + schema.metadata.name}'}}
  - id: elsewhere
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: elsewhere, namespace: default}}
  - id: earlyNs
    template: {apiVersion: v1, kind: Namespace, metadata: {name: early}}
  - id: afterIt
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: after, namespace: early}}
  - id: ns
    template: {apiVersion: v1, kind: Namespace, metadata: {name: '${"tenant-" + schema.metadata.name}'}}
  - id: sharedNs
    template: {apiVersion: v1, kind: Namespace, metadata: {name: shared}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`spec.resources[settings].template.metadata.namespace: ${"tenant-" + schema.metadata.name} is the name of the Namespace resource ns makes, but settings does not read ns, so nothing orders them: settings is applied before its namespace exists (and waits for it), and deleted after it; write the namespace as ${ns.metadata.name}`,
		`spec.resources[fixed].template.metadata.namespace: shared is the name of the Namespace resource sharedNs makes, but fixed does not read sharedNs, so nothing orders them: fixed is applied before its namespace exists (and waits for it), and deleted after it; write the namespace as ${sharedNs.metadata.name}`,
	}
	checkWarnings(t, g, want)
}

// An expression reading a Secret's stringData, which the API server
// writes into data and never returns, is legal (the schema has the field,
// and upstream kro takes it) but waits for good: each one is warned of,
// wherever it is, with what to read instead. Reading data is not, nor a
// collection's items, whose reads are not plain paths.
func TestReadsOfAStringDataAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: secrets}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Secrets
    spec: {pw: string}
    status:
      has: ${has(pass.stringData)}
      whole: ${pass.stringData}
      dotted: ${pass.?stringData["my.key"].orValue("")}
      word: ${pass.stringData["in"]}
      fine: ${string(pass.data.pw)}
      items: ${many.map(s, s.stringData)}
      conditions:
      - "${runtime.newCondition({'type': 'Got', 'status': pass.stringData.pw == '' ? 'False' : 'True', 'reason': 'R', 'message': 'm'})}"
  resources:
  - id: pass
    readyWhen: ["${pass.stringData.pw != ''}"]
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: "${schema.metadata.name}"}
      stringData: {pw: "${schema.spec.pw}"}
  - id: many
    forEach: [{i: "${['a']}"}]
    template: {apiVersion: v1, kind: Secret, metadata: {name: "${i}"}}
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
      data: {pw: "${pass.stringData.pw}", both: "${pass.stringData.pw + string(pass.data.pw)}"}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const but = "but no Secret read back has stringData: the API server writes it into data, base64-encoded; read "
	want := []string{
		"spec.resources[pass].readyWhen[0]: ${pass.stringData.pw != ''} reads pass.stringData, " + but + "string(pass.data.pw)",
		"spec.resources[cm].template.data.both: ${pass.stringData.pw + string(pass.data.pw)} reads pass.stringData, " + but + "string(pass.data.pw)",
		"spec.resources[cm].template.data.pw: ${pass.stringData.pw} reads pass.stringData, " + but + "string(pass.data.pw)",
		`spec.schema.status.dotted: ${pass.?stringData["my.key"].orValue("")} reads pass.stringData, ` + but + `string(pass.data["my.key"])`,
		`spec.schema.status.has: ${has(pass.stringData)} reads pass.stringData, ` + but + `pass.data, whose values are bytes (string(pass.data["key"]))`,
		`spec.schema.status.whole: ${pass.stringData} reads pass.stringData, ` + but + `pass.data, whose values are bytes (string(pass.data["key"]))`,
		`spec.schema.status.word: ${pass.stringData["in"]} reads pass.stringData, ` + but + `string(pass.data["in"])`,
		"spec.schema.status.conditions[0]: ${runtime.newCondition({'type': 'Got', 'status': pass.stringData.pw == '' ? 'False' : 'True', 'reason': 'R', 'message': 'm'})} reads pass.stringData, " + but + "string(pass.data.pw)",
	}
	checkWarnings(t, g, want)
	for _, f := range g.Node("cm").Fields {
		w := f.Exprs[0].AbsentRead
		if reads := f.Path.String() != "metadata.name"; reads != (w != nil && w.Key == "stringData") {
			t.Errorf("%s: the expression keeps %+v of what it reads that never comes", f.Path, w)
		}
	}
}

// Only a Service of type LoadBalancer gets status.loadBalancer.ingress: a
// read of it from a Service templated as another type is warned of; one
// whose type is LoadBalancer, an expression, or not known (an
// externalRef) is not, nor a read of status.loadBalancer as a whole.
func TestReadsOfALoadBalancerAddressNoneGetsAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: services}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Services
    spec: {type: string}
    status:
      plain: ${plain.status.loadBalancer.ingress[0].hostname}
      whole: ${plain.status.loadBalancer}
      nodePort: ${has(nodePort.status.loadBalancer.ingress)}
      balanced: ${balanced.status.loadBalancer.ingress[0].hostname}
      chosen: ${chosen.status.loadBalancer.ingress[0].ip}
      found: ${found.status.loadBalancer.ingress[0].ip}
  resources:
  - id: plain
    template: {apiVersion: v1, kind: Service, metadata: {name: plain}, spec: {ports: [{port: 80}]}}
  - id: nodePort
    template: {apiVersion: v1, kind: Service, metadata: {name: np}, spec: {type: NodePort, ports: [{port: 80}]}}
  - id: balanced
    template: {apiVersion: v1, kind: Service, metadata: {name: lb}, spec: {type: LoadBalancer, ports: [{port: 80}]}}
  - id: chosen
    template: {apiVersion: v1, kind: Service, metadata: {name: ch}, spec: {type: "${schema.spec.type}", ports: [{port: 80}]}}
  - id: found
    externalRef: {apiVersion: v1, kind: Service, metadata: {name: ext}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"spec.schema.status.nodePort: ${has(nodePort.status.loadBalancer.ingress)} reads nodePort.status.loadBalancer.ingress, but no load balancer gives an address to a Service of type NodePort: only one of type LoadBalancer gets status.loadBalancer.ingress; set spec.type: LoadBalancer, or read nodePort.spec.clusterIP",
		"spec.schema.status.plain: ${plain.status.loadBalancer.ingress[0].hostname} reads plain.status.loadBalancer.ingress, but no load balancer gives an address to a Service of type ClusterIP, the default: only one of type LoadBalancer gets status.loadBalancer.ingress; set spec.type: LoadBalancer, or read plain.spec.clusterIP",
	}
	checkWarnings(t, g, want)
}

// Nothing fills a ServiceAccount's secrets since Kubernetes 1.24: a read of
// them is warned of, unless the template lists them.
func TestReadsOfServiceAccountSecretsNothingFillsAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: accounts}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Accounts
    status:
      token: ${bare.secrets[0].name}
      listed: ${listed.secrets[0].name}
  resources:
  - id: bare
    template: {apiVersion: v1, kind: ServiceAccount, metadata: {name: bare}}
  - id: listed
    template: {apiVersion: v1, kind: ServiceAccount, metadata: {name: listed}, secrets: [{name: listed-token}]}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec.schema.status.token: ${bare.secrets[0].name} reads bare.secrets, but nothing fills a ServiceAccount's secrets since Kubernetes 1.24, and the template lists none: make a Secret of type kubernetes.io/service-account-token with the annotation kubernetes.io/service-account.name: ${bare.metadata.name}, and read its data.token"}
	checkWarnings(t, g, want)
}

// A resource that reads one includeWhen may leave out only on one side of
// a conditional is warned of, once per resource read: it is left out with
// the other whatever the guard. Reads on both sides, or in the condition
// alone, or of a resource always there, are not, nor those of a resource
// whose own includeWhen leaves it out whenever the other is.
func TestGuardedReadsOfAResourceLeftOutAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: guarded}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Guarded
    spec: {cache: boolean}
  resources:
  - id: app
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: app}
      data:
        host: '${schema.spec.cache ? cache.spec.clusterIP : ""}'
        port: '${schema.spec.cache ? string(cache.spec.ports[0].port) : "0"}'
        always: '${string(always.spec.ports[0].port)}'
        macro: '${schema.spec.cache ? [1].map(cache, string(cache)).join("") : ""}'
  - id: both
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: both}
      data:
        host: '${has(cache.spec.clusterIP) ? cache.spec.clusterIP : cache.metadata.name}'
        name: '${schema.spec.cache ? always.metadata.name : ""}'
  - id: cautious
    includeWhen: ["${schema.spec.cache}"]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: cautious}
      data:
        host: '${schema.spec.cache ? cache.spec.clusterIP : ""}'
  - id: cache
    includeWhen: ["${schema.spec.cache}"]
    template: {apiVersion: v1, kind: Service, metadata: {name: cache}, spec: {ports: [{port: 6379}]}}
  - id: always
    template: {apiVersion: v1, kind: Service, metadata: {name: always}, spec: {ports: [{port: 80}]}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`spec.resources[app].template.data.host: ${schema.spec.cache ? cache.spec.clusterIP : ""} reads cache only on one side of ? :, as if app could be made without it; but includeWhen may leave cache out, and then app, which reads it, is left out too: to make app without cache, read what it needs from schema (the name cache is given, say), not from cache`}
	checkWarnings(t, g, want)
}

// ${...} inside a string literal of an expression is text, which the
// author meant as an expression: warned of, with the CEL that computes it;
// a literal ${ with no expression in it, a $ alone, or a ${ } holding
// what is no expression here (a shell's ${PATH}) is not.
func TestTemplatesInsideExpressionsAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: texts}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Texts
    spec: {flag: boolean, name: string, port: integer}
    status:
      url: '${"http://${schema.spec.name}:${string(schema.spec.port)}/"}'
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: x}
      data:
        name: '${schema.spec.flag ? "${schema.spec.name}-x" : "none"}'
        price: '${schema.spec.flag ? "$5" : "${ not closed"}'
        pair: '${"${schema.spec.port + 1}"}'
        script: '${"export PATH=${PATH}:/opt/" + schema.spec.name}'
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[cm].template.data.name: ${schema.spec.flag ? "${schema.spec.name}-x" : "none"}: the text "${schema.spec.name}-x" stays as written, since ${ } inside an expression is text, not an expression: write schema.spec.name + "-x" in its place`,
		`spec.resources[cm].template.data.pair: ${"${schema.spec.port + 1}"}: the text "${schema.spec.port + 1}" stays as written, since ${ } inside an expression is text, not an expression: write schema.spec.port + 1 in its place`,
		`spec.schema.status.url: ${"http://${schema.spec.name}:${string(schema.spec.port)}/"}: the text "http://${schema.spec.name}:${string(schema.spec.port)}/" stays as written, since ${ } inside an expression is text, not an expression: write "http://" + schema.spec.name + ":" + string(schema.spec.port) + "/" in its place`,
	})
}

// A workload whose selector its pod template's labels do not match, as
// written, is refused by the API server for every instance: warned of,
// naming the label; a match, or labels given whole by an expression, is
// not.
func TestSelectorsTheirPodsDoNotMatchAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: selectors}
spec:
  schema: {apiVersion: v1alpha1, kind: Selectors, spec: {name: string, labels: "map[string]string"}}
  resources:
  - id: web
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: "${schema.spec.name}", tier: web, team: a}}
        template:
          metadata: {labels: {app: web, tier: web}}
          spec: {containers: [{name: c, image: nginx}]}
  - id: db
    template:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db}
      spec:
        serviceName: db
        selector: {matchLabels: {app: "${schema.spec.name}-db"}}
        template:
          metadata: {labels: {app: "${schema.spec.name}-db"}}
          spec: {containers: [{name: c, image: postgres}]}
  - id: given
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: given}
      spec:
        selector: {matchLabels: {app: x}}
        template:
          metadata: {labels: "${schema.spec.labels}"}
          spec: {containers: [{name: c, image: nginx}]}
  - id: whole
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: whole}
      spec:
        selector: {matchLabels: {app: x}}
        template: "${{'metadata': {'labels': schema.spec.labels}, 'spec': {'containers': [{'name': 'c', 'image': 'nginx'}]}}}"
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[web].template.spec.selector.matchLabels.app: ${schema.spec.name}: the pod template gives app the value web, so the API server refuses every Deployment so written unless the two always render alike: its selector must match its pods' labels`,
		`spec.resources[web].template.spec.selector.matchLabels.team: a: the pod template's labels (spec.template.metadata.labels) do not hold team, so the API server refuses every Deployment so written: its selector must match its pods' labels`,
	})
}

// A label key or value, as written outside expressions, that no label may
// hold is refused by the API server for every instance: warned of, with
// the value as it may be written.
func TestLabelTextNoLabelMayHoldIsWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: labels}
spec:
  schema: {apiVersion: v1alpha1, kind: Labels, spec: {name: string}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, labels: {"team name": a, owner: "platform team", tier: "${schema.spec.name} app", app: "${schema.spec.name}-x"}}
      spec:
        selector: {matchLabels: {app: web/1}}
        template:
          metadata: {labels: {app: web/1}}
          spec: {containers: [{name: c, image: nginx}]}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarningsHold(t, g, 5,
		`spec.resources[deploy].template.metadata.labels.owner: the label value "platform team" is refused by the API server for every object so written: a valid label must be`,
		`; write "platform-team"`,
		`spec.resources[deploy].template.metadata.labels[team name]: the label key "team name" is refused by the API server for every object so written: name part must consist of`,
		`spec.resources[deploy].template.metadata.labels.tier: ${schema.spec.name} app: its text holds " ", which no label value may`,
		`spec.resources[deploy].template.spec.selector.matchLabels.app: the label value "web/1" is refused`,
		`spec.resources[deploy].template.spec.template.metadata.labels.app: the label value "web/1" is refused`)
}

// A container's name or a container port's, written without expressions,
// that the API server refuses is warned of, in any pod spec: a
// Deployment's, a CronJob's.
func TestPodNamesTheAPIServerRefusesAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: pods}
spec:
  schema: {apiVersion: v1alpha1, kind: Pods, spec: {name: string}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            initContainers: [{name: "${schema.spec.name}", image: busybox}]
            containers: [{name: Web_Server, image: nginx, ports: [{name: http-metrics-port, containerPort: 9090}, {name: http, containerPort: 80}],
              livenessProbe: {httpGet: {path: /, port: http-metrics-port}}, readinessProbe: {tcpSocket: {port: "80"}}}]
  - id: nightly
    template:
      apiVersion: batch/v1
      kind: CronJob
      metadata: {name: nightly}
      spec:
        schedule: "0 0 * * *"
        jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: run.now, image: busybox}]}}}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarningsHold(t, g, 4,
		`spec.resources[deploy].template.spec.template.spec.containers[0].livenessProbe.httpGet.port: the probe's port name "http-metrics-port" is refused by the API server for every object so written: must be no more than 15 characters`,
		`spec.resources[deploy].template.spec.template.spec.containers[0].name: the container name "Web_Server" is refused by the API server for every object so written: a lowercase RFC 1123 label must consist of`,
		`spec.resources[deploy].template.spec.template.spec.containers[0].ports[0].name: the port name "http-metrics-port" is refused by the API server for every object so written: must be no more than 15 characters`,
		`spec.resources[nightly].template.spec.jobTemplate.spec.template.spec.containers[0].name: the container name "run.now" is refused`)
}

// A container's resource quantity, written without expressions, that is
// none is refused by the API server for every instance, and memory in
// milli-units is taken as thousandths of a byte: both warned of, with the
// quantity meant.
func TestResourceQuantitiesWrittenWrongAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: quantities}
spec:
  schema: {apiVersion: v1alpha1, kind: Quantities, spec: {memory: string}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
            - name: web
              image: nginx
              resources:
                requests: {memory: 512m, cpu: 500m, ephemeral-storage: 1 GiB}
                limits: {memory: 1Gb, cpu: 2 cores, example.com/gpu: "${schema.spec.memory}"}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const at = "spec.resources[deploy].template.spec.template.spec.containers[0].resources."
	checkWarnings(t, g, []string{
		at + `limits.cpu: the quantity "2 cores" is refused by the API server for every object so written: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1`,
		at + `limits.memory: the quantity "1Gb" is refused by the API server for every object so written: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1: write 1Gi (or 1G, in powers of 1000)`,
		at + `requests.ephemeral-storage: the quantity "1 GiB" is refused by the API server for every object so written: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1: write 1Gi`,
		at + `requests.memory: 512m is 512 thousandths of a byte, as m means milli: write 512Mi (or 512M, in powers of 1000)`,
	})
}

// Two items of a keyed list (containers by name, env by name) whose keys,
// as written, are the same are refused by server-side apply for every
// instance: warned of. Keys written as expressions, or left out (a key the
// API server defaults), are not compared.
func TestDuplicateKeysAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: duplicates}
spec:
  schema: {apiVersion: v1alpha1, kind: Duplicates, spec: {name: string}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
            - name: web
              image: nginx
              env: [{name: A, value: "1"}, {name: "${schema.spec.name}", value: "2"}, {name: A, value: "3"}]
              ports: [{containerPort: 80}, {containerPort: 80, protocol: TCP}]
            - name: web
              image: nginx
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[deploy].template.spec.template.spec.containers[0].env[2]: repeats item 0's key (name=A), and server-side apply, as kro-agent writes, refuses a list with two items of one key for every object so written`,
		`spec.resources[deploy].template.spec.template.spec.containers[1]: repeats item 0's key (name=web), and server-side apply, as kro-agent writes, refuses a list with two items of one key for every object so written`,
	})
}

// A Job's or CronJob's pods must not restart Always, which a pod spec
// that leaves restartPolicy out defaults to: warned of; OnFailure, Never
// or an expression is not.
func TestJobsRestartingAlwaysAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: jobs}
spec:
  schema: {apiVersion: v1alpha1, kind: Jobs, spec: {policy: string}}
  resources:
  - id: migrate
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: migrate}
      spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}
  - id: nightly
    template:
      apiVersion: batch/v1
      kind: CronJob
      metadata: {name: nightly}
      spec:
        schedule: "0 0 * * *"
        jobTemplate: {spec: {template: {spec: {restartPolicy: Always, containers: [{name: c, image: busybox}]}}}}
  - id: fine
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: fine}
      spec: {template: {spec: {restartPolicy: "${schema.spec.policy}", containers: [{name: c, image: busybox}]}}}
  - id: never
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: never}
      spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[migrate].template.spec.template.spec.restartPolicy: leaves restartPolicy out, which a pod defaults to Always, and the API server refuses every Job so written: its pods run to completion, with restartPolicy OnFailure or Never`,
		`spec.resources[nightly].template.spec.jobTemplate.spec.template.spec.restartPolicy: sets restartPolicy: Always, and the API server refuses every CronJob so written: its pods run to completion, with restartPolicy OnFailure or Never`,
	})
}

// A CronJob's schedule is parsed as the API server parses it, and its time
// zone looked up as it does: a schedule in words or with seconds, one that
// names a time zone in it, and a time zone that is none are warned of;
// descriptors, ranges and steps, a known zone and expressions are not.
func TestCronJobSchedulesAreChecked(t *testing.T) {
	cronJob := func(id, schedule string, zone ...string) string {
		s := fmt.Sprintf(`
  - id: %s
    template:
      apiVersion: batch/v1
      kind: CronJob
      metadata: {name: %s}
      spec:
        schedule: %q`, id, strings.ToLower(id), schedule)
		for _, zone := range zone {
			s += fmt.Sprintf(`
        timeZone: %q`, zone)
		}
		return s + `
        jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure, containers: [{name: c, image: busybox}]}}}}`
	}
	g, err := Compile(parseRGD(t, `
metadata: {name: crons}
spec:
  schema: {apiVersion: v1alpha1, kind: Crons, spec: {schedule: string, zone: string}}
  resources:`+
		cronJob("words", "every 5 minutes")+
		cronJob("seconds", "0 0 12 * * ?")+
		cronJob("range", "0 9-17/2 * * 1-5")+
		cronJob("minute", "61 * * * *")+
		cronJob("zoned", "CRON_TZ=UTC 0 0 * * *")+
		cronJob("hourly", "@hourly", "Europe/Berlin")+
		cronJob("every", "@every 5m", "UTC")+
		cronJob("local", "0 0 * * *", "Local")+
		cronJob("nowhere", "0 0 * * *", "Europe/Atlantis")+
		cronJob("empty", "0 0 * * *", "")+
		cronJob("given", "${schema.spec.schedule}", "${schema.spec.zone}"),
	), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const refused = " is refused by the API server for every object so written: "
	checkWarnings(t, g, []string{
		`spec.resources[words].template.spec.schedule: the schedule "every 5 minutes"` + refused + `expected exactly 5 fields, found 3: [every 5 minutes]; ` + cronSchedule,
		`spec.resources[seconds].template.spec.schedule: the schedule "0 0 12 * * ?"` + refused + `expected exactly 5 fields, found 6: [0 0 12 * * ?]; ` + cronSchedule,
		`spec.resources[minute].template.spec.schedule: the schedule "61 * * * *"` + refused + `end of range (61) above maximum (59): 61; ` + cronSchedule,
		`spec.resources[zoned].template.spec.schedule: the schedule "CRON_TZ=UTC 0 0 * * *"` + refused + `a time zone is given in timeZone (timeZone: Europe/Berlin), not in the schedule`,
		`spec.resources[local].template.spec.timeZone: the time zone "Local"` + refused + `name a time zone such as UTC or Europe/Berlin: the controller manager's own is what leaving timeZone out gives`,
		`spec.resources[nowhere].template.spec.timeZone: the time zone "Europe/Atlantis"` + refused + `no time zone of that name is known: name one of the IANA database, such as UTC or Europe/Berlin`,
		`spec.resources[empty].template.spec.timeZone: the time zone ""` + refused + `leave timeZone out for the controller manager's time zone, or name one such as UTC or Europe/Berlin`,
	})
}

// Text written where bytes go (a Secret's data, a caBundle) is base64 or
// refused by the API server: a literal that is not is warned of with the
// text in base64, and so is text with expressions in it whose own
// characters never are; base64 and expressions alone are not.
func TestTextWhereBytesGoIsWarnedOfUnlessBase64(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: creds}
spec:
  schema: {apiVersion: v1alpha1, kind: Creds, spec: {user: string, password: string}}
  resources:
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: creds}
      data:
        password: hunter2!
        encoded: aHVudGVyMiE=
        auth: "${schema.spec.user}:${schema.spec.password}"
        joined: "${schema.spec.user}${schema.spec.password}"
        given: ${schema.spec.password}
  - id: webhook
    template:
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: creds}
      webhooks:
      - name: creds.example.com
        sideEffects: None
        admissionReviewVersions: [v1]
        clientConfig: {url: "https://creds.example.com", caBundle: "-----BEGIN CERTIFICATE-----"}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[secret].template.data.auth: "${schema.spec.user}:${schema.spec.password}" can never be base64, as ":" is not, and the API server refuses every object so written: the field holds bytes, written in base64; write ${bytes(...)} of the text, or give it under stringData, which takes text as it is`,
		`spec.resources[secret].template.data.password: "hunter2!" is not base64, and the API server refuses every object so written: the field holds bytes, written in base64 (write aHVudGVyMiE= for this text), or give it under stringData, which takes text as it is`,
		`spec.resources[webhook].template.webhooks[0].clientConfig.caBundle: "-----BEGIN CERTIFICATE-----" is not base64, and the API server refuses every object so written: the field holds bytes, written in base64 (write LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t for this text)`,
	})
}

// A container's request is at most its limit, and a container of a kind of
// Kubernetes' own has an image: the API server refuses every object that
// breaks either, so it is warned of; a request under its limit, one with
// no limit, and quantities given by expressions are not.
func TestContainersOverTheirLimitsOrWithoutImagesAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: containers}
spec:
  schema: {apiVersion: v1alpha1, kind: Containers, spec: {cpu: string}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: deploy}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            initContainers:
            - {name: init, image: busybox, resources: {requests: {cpu: 2, memory: 1Gi}, limits: {cpu: 1500m, memory: 1Gi}}}
            containers:
            - {name: web, image: nginx, resources: {requests: {memory: 1Gi, cpu: 100m}, limits: {memory: 512Mi}}}
            - {name: sidecar, resources: {requests: {cpu: "${schema.spec.cpu}"}, limits: {cpu: 1}}}
            - {name: small, image: busybox, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m}}}
  - id: job
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: job}
      spec: {template: {spec: {restartPolicy: Never, containers: [{name: run}]}}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[deploy].template.spec.template.spec.containers[0].resources.requests.memory: the request 1Gi is more than the limit 512Mi, and the API server refuses every object so written: a container's request is at most its limit`,
		`spec.resources[deploy].template.spec.template.spec.containers[1].image: left out, and the API server refuses every Deployment so written: a container of its pods needs an image`,
		`spec.resources[deploy].template.spec.template.spec.initContainers[0].resources.requests.cpu: the request 2 is more than the limit 1500m, and the API server refuses every object so written: a container's request is at most its limit`,
		`spec.resources[job].template.spec.template.spec.containers[0].image: left out, and the API server refuses every Job so written: a container of its pods needs an image`,
	})
}

// What a pod's validation refuses in its containers beyond their schema
// is warned of, in a kind of Kubernetes' own: a port out of range or two
// of one name, an env var given both ways, a probe naming nothing to do,
// a mount of no volume of the pod (a StatefulSet's claim templates are
// its volumes too). What expressions give is not judged.
func TestContainersAreCheckedAsPodsAre(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: pods}
spec:
  schema: {apiVersion: v1alpha1, kind: Pods, spec: {port: integer, volume: string}}
  resources:
  - id: db
    template:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db}
      spec:
        serviceName: db
        selector: {matchLabels: {app: db}}
        template:
          metadata: {labels: {app: db}}
          spec:
            volumes: [{name: config, configMap: {name: db}}]
            containers:
            - name: db
              image: postgres
              ports:
              - {name: sql, containerPort: 70000}
              - {name: sql, containerPort: 5433, hostPort: 0}
              - {name: metrics, containerPort: "${schema.spec.port}"}
              env:
              - {name: A, value: a, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
              - {name: B, value: "", valueFrom: {fieldRef: {fieldPath: metadata.name}}}
              livenessProbe: {initialDelaySeconds: 5}
              readinessProbe: {grpc: {port: 5432}}
              startupProbe: {tcpSocket: {port: 5432}, exec: {command: [pg_isready]}}
              volumeMounts:
              - {name: data, mountPath: /data}
              - {name: confg, mountPath: /config}
              - {name: "${schema.spec.volume}", mountPath: /other}
        volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - id: given
    template:
      apiVersion: v1
      kind: Pod
      metadata: {name: given}
      spec:
        volumes: "${schema.spec.volume == '' ? [] : [{'name': schema.spec.volume, 'emptyDir': {}}]}"
        containers: [{name: c, image: busybox, volumeMounts: [{name: data, mountPath: /data}]}]
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const at = "spec.resources[db].template.spec.template.spec.containers[0]."
	const refused = ", and the API server refuses every object so written: "
	checkWarnings(t, g, []string{
		at + `ports[0].containerPort: 70000 is no port` + refused + `a port is between 1 and 65535`,
		at + `ports[1].name: "sql" is the name of ` + at + `ports[0] too` + refused + `a container's ports have names of their own`,
		at + `env[0].valueFrom: given with a value too` + refused + `an env var has a value or valueFrom, not both`,
		at + `livenessProbe: names nothing to do` + refused + `a probe has one of exec, grpc, httpGet, tcpSocket`,
		at + `startupProbe: names exec and tcpSocket` + refused + `a probe does one of them`,
		at + `volumeMounts[1].name: "confg" is no volume of the pod` + refused[:len(refused)-2] + `: did you mean config?`,
	})
}

// A Service has a port, unless it is headless or an ExternalName, and its
// ports and target ports are in range; a ConfigMap's and a Secret's keys
// are file names. Breaking either is warned of.
func TestServicePortsAndConfigKeysAreChecked(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: services}
spec:
  schema: {apiVersion: v1alpha1, kind: Services, spec: {clusterIP: string}}
  resources:
  - id: none
    template: {apiVersion: v1, kind: Service, metadata: {name: none}, spec: {selector: {app: web}}}
  - id: headless
    template: {apiVersion: v1, kind: Service, metadata: {name: headless}, spec: {clusterIP: None, selector: {app: web}}}
  - id: external
    template: {apiVersion: v1, kind: Service, metadata: {name: external}, spec: {type: ExternalName, externalName: example.com}}
  - id: given
    template: {apiVersion: v1, kind: Service, metadata: {name: given}, spec: {clusterIP: "${schema.spec.clusterIP}"}}
  - id: ranges
    template: {apiVersion: v1, kind: Service, metadata: {name: ranges}, spec: {ports: [{name: a, port: 70000, targetPort: 0}, {name: b, port: 80, targetPort: 65536}]}}
  - id: config
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: config}, data: {"config/app.yaml": "x", app.yaml: "y", "..": "z"}}
  - id: secret
    template: {apiVersion: v1, kind: Secret, metadata: {name: secret}, stringData: {"my key": "x"}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const refused = " is refused by the API server for every object so written: "
	const chars = `a key holds letters, digits, '-', '_' and '.' alone, as it becomes a file's name where the object is mounted`
	checkWarnings(t, g, []string{
		`spec.resources[none].template.spec.ports: left out, and the API server refuses every Service so written: a Service has at least one port, unless it is headless (clusterIP: None) or an ExternalName`,
		`spec.resources[ranges].template.spec.ports[0].port: 70000 is no port, and the API server refuses every object so written: a port is between 1 and 65535`,
		`spec.resources[ranges].template.spec.ports[1].targetPort: 65536 is no port, and the API server refuses every object so written: a port is between 1 and 65535`,
		`spec.resources[config].template.data[..]: the key ".."` + refused + `must not be '..'`,
		`spec.resources[config].template.data[config/app.yaml]: the key "config/app.yaml"` + refused + chars,
		`spec.resources[secret].template.stringData[my key]: the key "my key"` + refused + chars,
	})
}

// A binding binds roles of rbac.authorization.k8s.io (a ClusterRoleBinding
// ClusterRoles alone) to subjects of the kinds and groups the API server
// takes; what breaks either is warned of, and expressions are not judged.
func TestRoleBindingsAreChecked(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: bindings}
spec:
  schema: {apiVersion: v1alpha1, kind: Bindings, spec: {role: string}}
  resources:
  - id: local
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: local}
      roleRef: {apiGroup: rbac.authorization.k8s.io/v1, kind: Role, name: reader}
      subjects:
      - {kind: ServiceAccount, name: app, apiGroup: rbac.authorization.k8s.io}
      - {kind: ServiceAccount, name: app}
      - {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
      - {kind: Group, name: team}
      - {kind: Team, name: team}
  - id: cluster
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: cluster}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
      subjects:
      - {kind: ServiceAccount, name: app}
      - {kind: User, name: bob, apiGroup: ""}
      - {kind: Group, name: admins, apiGroup: rbac}
  - id: given
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: given}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: "${schema.spec.role}", name: reader}
      subjects: [{kind: ServiceAccount, name: app, namespace: default}]
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[local].template.roleRef.apiGroup: "rbac.authorization.k8s.io/v1" is no group of roles, and the API server refuses every RoleBinding so written: write rbac.authorization.k8s.io`,
		`spec.resources[local].template.subjects[0].apiGroup: "rbac.authorization.k8s.io" given to a ServiceAccount, and the API server refuses every RoleBinding so written: a ServiceAccount has no apiGroup: leave it out`,
		`spec.resources[local].template.subjects[4].kind: "Team" is no kind of subject, and the API server refuses every RoleBinding so written: a subject is a ServiceAccount, a User or a Group`,
		`spec.resources[cluster].template.roleRef.kind: Role, and the API server refuses every ClusterRoleBinding so written: a ClusterRoleBinding binds a ClusterRole`,
		`spec.resources[cluster].template.subjects[0].namespace: left out, and the API server refuses every ClusterRoleBinding so written: a ServiceAccount bound cluster-wide is named with its namespace`,
		`spec.resources[cluster].template.subjects[2].apiGroup: "rbac" given to a Group, and the API server refuses every ClusterRoleBinding so written: a Group is of apiGroup rbac.authorization.k8s.io`,
	})
}

// How a workload updates, scales and is disrupted has rules its schema
// does not say: a Deployment's Recreate strategy and a StatefulSet's
// OnDelete take no rollingUpdate (a DaemonSet's OnDelete does),
// an autoscaler's maxReplicas is at least its minReplicas and a resource
// target gives one of averageUtilization and averageValue, and a
// disruption budget one of minAvailable and maxUnavailable, and a
// workload's pods restart Always. What breaks one is warned of.
func TestScalingRulesAreChecked(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: scaling}
spec:
  schema: {apiVersion: v1alpha1, kind: Scaling}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}
        selector: {matchLabels: {app: web}}
        template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
  - id: daemons
    template:
      apiVersion: apps/v1
      kind: DaemonSet
      metadata: {name: agent}
      spec:
        updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}
        selector: {matchLabels: {app: agent}}
        template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: agent, image: busybox}]}}
  - id: hpa
    template:
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        minReplicas: 5
        maxReplicas: 2
        metrics:
        - {type: Resource, resource: {name: cpu, target: {type: Utilization}}}
        - {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi, averageUtilization: 80}}}
        - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}
  - id: copied
    template:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: copied}
      spec:
        serviceName: copied
        selector: {matchLabels: {app: copied}}
        template: {metadata: {labels: {app: copied}}, spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
  - id: pdb
    template:
      apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: web}
      spec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {app: web}}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[deploy].template.spec.strategy.rollingUpdate: given with type Recreate, and the API server refuses every Deployment so written: rollingUpdate goes with type RollingUpdate alone`,
		`spec.resources[hpa].template.spec.maxReplicas: 2 is fewer than minReplicas (5), and the API server refuses every HorizontalPodAutoscaler so written`,
		`spec.resources[hpa].template.spec.metrics[0].resource.target: gives neither averageUtilization nor averageValue, and the API server refuses every HorizontalPodAutoscaler so written: a resource's target is one of them (averageUtilization: 80)`,
		`spec.resources[hpa].template.spec.metrics[1].resource.target: gives both averageUtilization and averageValue, and the API server refuses every HorizontalPodAutoscaler so written: a resource's target is one of them`,
		`spec.resources[copied].template.spec.template.spec.restartPolicy: Never, and the API server refuses every StatefulSet so written: its pods run for good, with restartPolicy Always (or left out)`,
		`spec.resources[pdb].template.spec.maxUnavailable: given with minAvailable too, and the API server refuses every PodDisruptionBudget so written: a budget gives one of them`,
	})
}

// A Secret of a type of Kubernetes' own holds the keys of its type, in
// data or stringData: one that leaves them out is warned of, with the key
// meant where one is misspelt; keys given by an expression are not judged.
func TestSecretsOfATypeHoldItsKeys(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: secrets}
spec:
  schema: {apiVersion: v1alpha1, kind: Secrets, spec: {data: "map[string]string", cert: string}}
  resources:
  - id: tls
    template: {apiVersion: v1, kind: Secret, metadata: {name: tls}, type: kubernetes.io/tls, data: {tls.cert: "${schema.spec.cert}", tls.key: "${schema.spec.cert}"}}
  - id: both
    template: {apiVersion: v1, kind: Secret, metadata: {name: both}, type: kubernetes.io/tls, data: {tls.crt: "${schema.spec.cert}"}, stringData: {tls.key: "${schema.spec.cert}"}}
  - id: login
    template: {apiVersion: v1, kind: Secret, metadata: {name: login}, type: kubernetes.io/basic-auth, stringData: {user: admin}}
  - id: user
    template: {apiVersion: v1, kind: Secret, metadata: {name: user}, type: kubernetes.io/basic-auth, stringData: {username: admin}}
  - id: pull
    template: {apiVersion: v1, kind: Secret, metadata: {name: pull}, type: kubernetes.io/dockerconfigjson, stringData: {config.json: "{}"}}
  - id: given
    template: {apiVersion: v1, kind: Secret, metadata: {name: given}, type: kubernetes.io/tls, data: "${schema.spec.data}"}
  - id: opaque
    template: {apiVersion: v1, kind: Secret, metadata: {name: opaque}, stringData: {anything: x}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[tls].template.data: holds no tls.crt, and the API server refuses every Secret of type kubernetes.io/tls so written: did you mean tls.crt (not tls.cert)?`,
		`spec.resources[login].template.data: holds no username or password, and the API server refuses every Secret of type kubernetes.io/basic-auth so written`,
		`spec.resources[pull].template.data: holds no .dockerconfigjson, and the API server refuses every Secret of type kubernetes.io/dockerconfigjson so written`,
	})
}

// A claim, written out, has an access mode and requests its storage,
// though its kind's schema requires neither: a PersistentVolumeClaim, a
// StatefulSet's claim templates and an ephemeral volume's that leave out
// either are warned of; values given by expressions are not.
func TestClaimsWithoutAccessModesOrStorageAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: claims}
spec:
  schema: {apiVersion: v1alpha1, kind: Claims, spec: {size: string, modes: "[]string"}}
  resources:
  - id: claim
    template:
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: claim}
      spec: {accessModes: [], resources: {requests: {storage: 1Gi}}}
  - id: given
    template:
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: given}
      spec: {accessModes: "${schema.spec.modes}", resources: {requests: {storage: "${schema.spec.size}"}}}
  - id: db
    template:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db}
      spec:
        serviceName: db
        selector: {matchLabels: {app: db}}
        template:
          metadata: {labels: {app: db}}
          spec:
            containers: [{name: db, image: postgres}]
            volumes:
            - name: scratch
              ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {limits: {storage: 1Gi}}}}}
        volumeClaimTemplates:
        - metadata: {name: data}
          spec: {resources: {requests: {storage: 1Gi}}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[claim].template.spec.accessModes: empty, and the API server refuses every PersistentVolumeClaim so written: a claim needs at least one access mode, such as ReadWriteOnce`,
		`spec.resources[db].template.spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests.storage: left out, and the API server refuses every StatefulSet so written: a claim requests its storage, such as 1Gi`,
		`spec.resources[db].template.spec.volumeClaimTemplates[0].spec.accessModes: left out, and the API server refuses every StatefulSet so written: a claim needs at least one access mode, such as ReadWriteOnce`,
	})
}

// An Ingress's path starts with a slash, and one of pathType Exact or
// Prefix holds no // or dot segment; its host is a DNS name (a wildcard
// one too), not a URL or an address: one that breaks either is warned of;
// an ImplementationSpecific path may be empty, and holds what its
// controller reads.
func TestIngressPathsAreChecked(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: paths}
spec:
  schema: {apiVersion: v1alpha1, kind: Paths, spec: {path: string}}
  resources:
  - id: ingress
    template:
      apiVersion: networking.k8s.io/v1
      kind: Ingress
      metadata: {name: web}
      spec:
        rules:
        - http:
            paths:
            - {path: api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
            - {path: /a//b, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}
            - {path: /a/., pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
            - {path: v1, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
            - {path: "", pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
            - {path: "/a//(.*)", pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
            - {path: "${schema.spec.path}", pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
            - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
        - host: https://Shop.example.com/
        - host: 10.0.0.1
        - host: "*.example.com"
        - host: shop.example.com
        - host: "${schema.spec.path}.example.com"
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	const refused = " is refused by the API server for every object so written: "
	checkWarnings(t, g, []string{
		`spec.resources[ingress].template.spec.rules[0].http.paths[0].path: the path "api"` + refused + `a path starts with a slash: write /api`,
		`spec.resources[ingress].template.spec.rules[0].http.paths[1].path: the path "/a//b"` + refused + `a path of pathType Exact holds no //`,
		`spec.resources[ingress].template.spec.rules[0].http.paths[2].path: the path "/a/."` + refused + `a path of pathType Prefix does not end with /.`,
		`spec.resources[ingress].template.spec.rules[0].http.paths[3].path: the path "v1"` + refused + `a path starts with a slash: write /v1`,
		`spec.resources[ingress].template.spec.rules[1].host: the host "https://Shop.example.com/"` + refused + `a host is a DNS name alone, without scheme, port, path or capitals: write shop.example.com`,
		`spec.resources[ingress].template.spec.rules[2].host: the host "10.0.0.1"` + refused + `a host is a DNS name, not an IP address: leave host out to match every host`,
	})
}

// A Service of several ports needs a name for each, a DNS label: one left
// out, or one the API server refuses, is warned of, and so is a target
// port named as no container port may be; a single port may go without a
// name, and a target port may be a number.
func TestServicePortNamesAreChecked(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: services}
spec:
  schema: {apiVersion: v1alpha1, kind: Services, spec: {name: string}}
  resources:
  - id: web
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: web}
      spec: {ports: [{port: 80, targetPort: http}, {name: Metrics_Port, port: 9090, targetPort: prometheus-metrics}, {name: "${schema.spec.name}", port: 81, targetPort: "8081"}]}
  - id: single
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: single}
      spec: {ports: [{port: 80}]}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarningsHold(t, g, 3,
		"spec.resources[web].template.spec.ports[0].name: left out, and the API server refuses every Service of several ports so written: each needs a name\n",
		`spec.resources[web].template.spec.ports[1].name: the port name "Metrics_Port" is refused by the API server for every object so written: a lowercase RFC 1123 label must consist of`,
		`spec.resources[web].template.spec.ports[1].targetPort: the target port name "prometheus-metrics" is refused by the API server for every object so written: must be no more than 15 characters`)
}

// A text written without expressions that the field's enum does not hold
// is refused by the API server for every instance: warned of, with the
// value meant; one written as an expression is not.
func TestValuesNotInTheirEnumAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: enums}
spec:
  schema: {apiVersion: v1alpha1, kind: Enums, spec: {type: string}}
  resources:
  - id: svc
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: web}
      spec:
        type: Loadbalancer
        ports: [{name: a, port: 80, protocol: tcp}, {name: b, port: 81, protocol: TCP}, {name: c, port: 82, protocol: "${schema.spec.type}"}]
        externalTrafficPolicy: Lokal
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[svc].template.spec.externalTrafficPolicy: "Lokal" is not one of the values the field takes (Cluster, Local), so the API server refuses every object so written: did you mean Local?`,
		`spec.resources[svc].template.spec.ports[0].protocol: "tcp" is not one of the values the field takes (SCTP, TCP, UDP), so the API server refuses every object so written: write TCP`,
		`spec.resources[svc].template.spec.type: "Loadbalancer" is not one of the values the field takes (ClusterIP, ExternalName, LoadBalancer, NodePort), so the API server refuses every object so written: write LoadBalancer`,
	})
}

// A field the kind requires that the template leaves out is refused by
// the API server for every instance: warned of. A built-in kind's
// published default ("" for a container's name) gives no value; a field
// written, even as an expression, or a map given whole by one, is not.
func TestRequiredFieldsLeftOutAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: required}
spec:
  schema: {apiVersion: v1alpha1, kind: Required, spec: {name: string, selector: "map[string]string"}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{image: nginx, ports: [{name: http}]}, {name: "${schema.spec.name}", image: nginx}]
  - id: given
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: given}
      spec:
        selector: {matchLabels: "${schema.spec.selector}"}
        template: "${{'metadata': {'labels': schema.spec.selector}, 'spec': {'containers': [{'name': 'c', 'image': 'nginx'}]}}}"
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[deploy].template.spec.template.spec.containers[0].ports[0].containerPort: required, and the template leaves it out, so the API server refuses every object so written`,
		`spec.resources[deploy].template.spec.template.spec.containers[0].name: required, and the template leaves it out, so the API server refuses every object so written`,
		`spec.resources[deploy].template.spec.selector: required, and the template leaves it out, so the API server refuses every object so written`,
	})
}

// A field written as an OpenAPI schema that SimpleSchema reads all the
// same, as an object with fields named type and properties, is warned of; a
// type alone is as likely a field named type, and is not.
func TestFieldsWrittenAsOpenAPIAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: openapi}
spec:
  schema:
    apiVersion: v1alpha1
    kind: OpenAPI
    spec: {name: {type: string}, db: {type: object, properties: {size: integer}}, size: integer}
    types: {Port: {type: object, properties: {port: integer}}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.schema.spec.db reads as an OpenAPI schema, which SimpleSchema takes for an object with fields named type and properties: declare its fields directly, each by its name, its type as its value (db: {name: string, replicas: integer})`,
		`spec.schema.types.Port reads as an OpenAPI schema, which SimpleSchema takes for fields named type and properties: declare each field by its name, its type as its value (Port: {name: string, replicas: integer})`,
	})
}

// A printer column whose path names no field of the schema is empty for
// every instance: warned of, with the field meant or the fields there
// are; one reading metadata, a condition by a filter, or the fields an
// object type keeps unknown is not.
func TestPrinterColumnsNamingNoFieldAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: columns}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Columns
    spec: {name: string, extra: object, tags: "[]string"}
    status: {ip: "${cm.metadata.name}"}
    additionalPrinterColumns:
    - {name: IP, type: string, jsonPath: .status.ipp}
    - {name: Image, type: string, jsonPath: .spec.image}
    - {name: Top, type: string, jsonPath: .sepc}
    - {name: Name, type: string, jsonPath: .spec.name}
    - {name: Extra, type: string, jsonPath: .spec.extra.anything}
    - {name: Tags, type: string, jsonPath: .spec.tags.first}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.schema.additionalPrinterColumns[0].jsonPath: .status.ipp names no field of the schema of Columns, so kubectl get shows the column IP empty: did you mean .status.ip?`,
		`spec.schema.additionalPrinterColumns[1].jsonPath: .spec.image names no field of the schema of Columns, so kubectl get shows the column Image empty: spec has extra, name, tags`,
		`spec.schema.additionalPrinterColumns[2].jsonPath: .sepc names no field of the schema of Columns, so kubectl get shows the column Top empty: did you mean .spec?`,
	})
}

// A placeholder of another templating language naming what an expression
// may read is text, where a value was meant: warned of, with the ${...}
// to write; within text, a number made a string. One naming anything else
// is text for another tool ({{ .Values.name }}, a Prometheus rule's
// {{ $labels.pod }}, a container's $(POD_NAME)), and is not.
func TestPlaceholdersOfOtherTemplatesAreWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: placeholders}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Placeholders
    spec: {name: string, port: integer}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: x}
      data:
        go: '{{ .schema.spec.name }}'
        port: 'port {{schema.spec.port}} of ${schema.spec.name}'
        shell: 'echo $schema.spec.name $(schema.spec.name)'
        helm: '{{ .Values.name }}'
        rule: '{{ $labels.pod }} is down'
        env: '$(POD_NAME)'
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[cm].template.data.go: {{ .schema.spec.name }}: the text "{{ .schema.spec.name }}" stays as written, since kro-agent evaluates only ${...}: write ${schema.spec.name} in its place`,
		`spec.resources[cm].template.data.port: port {{schema.spec.port}} of ${schema.spec.name}: the text "{{schema.spec.port}}" stays as written, since kro-agent evaluates only ${...}: write ${string(schema.spec.port)} in its place`,
		`spec.resources[cm].template.data.shell: echo $schema.spec.name $(schema.spec.name): the text "$schema.spec.name" stays as written, since kro-agent evaluates only ${...}: write ${schema.spec.name} in its place`,
		`spec.resources[cm].template.data.shell: echo $schema.spec.name $(schema.spec.name): the text "$(schema.spec.name)" stays as written, since kro-agent evaluates only ${...}: write ${schema.spec.name} in its place`,
	})
}

// A field the API server refuses is traced to the template string that
// gave it, or to the one that gave a value above it.
func TestRenderedFrom(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: sources}
spec:
  schema: {apiVersion: v1alpha1, kind: Sources, spec: {name: string, image: string, labels: "map[string]string"}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.spec.name}-app", labels: "${schema.spec.labels}"}
      spec:
        selector: {matchLabels: {app: x}}
        template:
          metadata: {labels: {app: x}}
          spec: {containers: [{name: app, image: "${schema.spec.image}"}]}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	n := g.Node("deploy")
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{"metadata.name"}, "metadata.name is rendered from ${schema.spec.name}-app"},
		{[]string{"metadata.labels"}, "metadata.labels is rendered from ${schema.spec.labels}"},
		{[]string{"metadata.labels[bad key!]"}, "metadata.labels[bad key!] is in metadata.labels, rendered from ${schema.spec.labels}"},
		{[]string{"spec.template.spec.containers[0].image", "metadata.name"},
			"spec.template.spec.containers[0].image is rendered from ${schema.spec.image}; metadata.name is rendered from ${schema.spec.name}-app"},
		{[]string{"spec.selector"}, ""},
		{[]string{"metadata.namespace", "spec.template.spec.containers[1].image"}, ""},
		{nil, ""},
	} {
		if got := n.RenderedFrom(tc.fields); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.fields, got, tc.want)
		}
	}
}

// Text of a template's name that no name of its kind may hold (a stray
// quote and brace after an expression, an upper-case letter) is warned of,
// with the text written in lowercase where that is all that is wrong; a
// kind whose names take more (RBAC's) and names made of allowed text are
// not.
func TestNameTextNoObjectMayHaveIsWarned(t *testing.T) {
	g, err := Compile(parseRGD(t, `
metadata: {name: names}
spec:
  schema: {apiVersion: v1alpha1, kind: Names, spec: {q: string}}
  resources:
  - id: stray
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name + '-' + schema.spec.q}'}"}}
  - id: upper
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: "${schema.metadata.name}-Web_App"}, spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}}
  - id: twice
    template: {apiVersion: v1, kind: Secret, metadata: {name: "${schema.metadata.name}_x-${schema.spec.q}_Y"}}
  - id: fine
    template: {apiVersion: v1, kind: Service, metadata: {name: "svc-${schema.metadata.name}.v1"}}
  - id: role
    template: {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: "system:${schema.metadata.name}"}}
`), Options{Resolver: builtin(t)})
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, g, []string{
		`spec.resources[stray].template.metadata.name: ${schema.metadata.name + '-' + schema.spec.q}'}: its text "'}" holds "'" and "}", which no ConfigMap's name may: names are lowercase letters, digits, '-' and '.', and the API server refuses every object so named`,
		`spec.resources[upper].template.metadata.name: ${schema.metadata.name}-Web_App: its text "-Web_App" holds "W", "_" and "A", which no Deployment's name may: names are lowercase letters, digits, '-' and '.', and the API server refuses every object so named: write "-web-app"`,
		`spec.resources[twice].template.metadata.name: ${schema.metadata.name}_x-${schema.spec.q}_Y: its text "_x-" and "_Y" holds "_" and "Y", which no Secret's name may: names are lowercase letters, digits, '-' and '.', and the API server refuses every object so named`,
	})
}
