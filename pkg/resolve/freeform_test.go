package resolve

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// allowUnknownCRD has free-form fields: an object that preserves unknown
// fields, and maps of such values (kro's unknown-fields scenario).
const allowUnknownCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: allowunknowns.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: allowunknowns, kind: AllowUnknown}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
              anyMap: {type: object, additionalProperties: {x-kubernetes-preserve-unknown-fields: true}}
              size: {type: string}
          status:
            type: object
            properties:
              additional: {type: object, additionalProperties: {x-kubernetes-preserve-unknown-fields: true}}
`

// Fields whose content the schema leaves open are dyn in expressions, as
// in kro: their keys are read, optionally or not, and they are written
// whole into other free-form fields; typed fields stay checked.
func TestFreeFormFieldsAreDyn(t *testing.T) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(allowUnknownCRD), crd); err != nil {
		t.Fatal(err)
	}
	builtin, _ := kinds.Builtin()
	declared := kinds.NewDeclared(builtin)
	declared.Add(crd)
	compile := func(doc string) (*graph.Graph, error) {
		rgd := &v1alpha1.ResourceGraphDefinition{}
		if err := yaml.Unmarshal([]byte(doc), rgd); err != nil {
			t.Fatal(err)
		}
		return graph.Compile(rgd, graph.Options{Resolver: declared})
	}
	g, err := compile(`
spec:
  schema:
    apiVersion: v1alpha1
    kind: Reader
    spec: {name: string, nested: object}
  resources:
  - id: external
    externalRef: {apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing}}
  - id: copy
    template:
      apiVersion: example.com/v1
      kind: AllowUnknown
      metadata: {name: "${schema.spec.name}"}
      spec:
        config: ${external.spec.config}
        anyMap: {key: "${external.status.additional.?key.orValue('none')}"}
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}"}
      data:
        foo: ${external.spec.config.foo}
        nested: ${schema.spec.nested.field}
        missing: ${external.status.additional.?abc.orValue("default")}
`)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScope(g, obj(t, `{metadata: {name: r, namespace: default}, spec: {name: r, nested: {field: value}}}`))
	s.Observe(g.Node("external"), obj(t, `{apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing},
  spec: {config: {foo: bar, deep: {a: 1}}}, status: {additional: {key: value}}}`))
	copied, err := Render(g.Node("copy"), s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"config": map[string]any{"foo": "bar", "deep": map[string]any{"a": int64(1)}}, "anyMap": map[string]any{"key": "value"}}; !reflect.DeepEqual(copied["spec"], want) {
		t.Errorf("copy spec = %v, want %v", copied["spec"], want)
	}
	cm, err := Render(g.Node("cm"), s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"foo": "bar", "nested": "value", "missing": "default"}; !reflect.DeepEqual(cm["data"], want) {
		t.Errorf("data = %v, want %v", cm["data"], want)
	}

	// A typed field of the same kind is still checked.
	_, err = compile(`
spec:
  schema: {apiVersion: v1alpha1, kind: Reader, spec: {name: string}}
  resources:
  - id: external
    externalRef: {apiVersion: example.com/v1, kind: AllowUnknown, metadata: {name: existing}}
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {size: "${external.spec.size.foo}"}}
`)
	if err == nil {
		t.Error("a field of a string was read without error")
	}
}

// freeFormIntoTypedRGD writes values of a free-form field of the instance
// into typed fields of built-in kinds: scalars, lists of objects, maps.
const freeFormIntoTypedRGD = `
spec:
  schema: {apiVersion: v1alpha1, kind: Values, spec: {cfg: object}}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: x}
      data: {count: "${schema.spec.cfg.count}"}
  - id: svc
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: x}
      spec:
        ports: ${schema.spec.cfg.ports}
        selector: ${schema.spec.cfg.labels}
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        replicas: ${schema.spec.cfg.replicas}
        selector: {matchLabels: {app: x}}
        template:
          metadata: {labels: {app: x}}
          spec:
            containers:
            - name: c
              image: "${schema.spec.cfg.image}:1"
              resources: {limits: {cpu: "${schema.spec.cfg.cpu}"}}
              ports: [{containerPort: 80, protocol: "${schema.spec.cfg.protocol}"}]
            activeDeadlineSeconds: ${schema.spec.cfg.deadline}
`

// A free-form value written into a typed field is checked when it is
// computed: the error names the field, the expression, the value and the
// type the field takes, where the API server would say only "expected
// string, got &value.valueUnstructured{Value:5}".
func TestFreeFormValuesAreCheckedAgainstTheirFields(t *testing.T) {
	g := compileRGD(t, freeFormIntoTypedRGD)
	render := func(id, cfg string) error {
		s := NewScope(g, obj(t, `{metadata: {name: v, namespace: default}, spec: {cfg: `+cfg+`}}`))
		_, err := Render(g.Node(id), s)
		return err
	}
	for _, tc := range []struct {
		id, cfg, want string
	}{
		{"cm", `{count: "5"}`, ""},
		{"cm", `{count: 5}`, `data.count: ${schema.spec.cfg.count} is 5 (an int), but the field expects string`},
		{"deploy", `{replicas: 3, image: nginx, cpu: 1, protocol: TCP, deadline: 30}`, ""},
		// A quantity is a number or a string, as the API server takes it.
		{"deploy", `{replicas: 3, image: nginx, cpu: 500m, protocol: TCP, deadline: 30}`, ""},
		{"deploy", `{replicas: 3, image: nginx, cpu: 1, protocol: TCP, deadline: "30"}`, `is "30" (a string), but the field expects int`},
		{"deploy", `{replicas: 3, image: nginx, cpu: 1, protocol: 6, deadline: 30}`, `is 6 (an int), but the field expects string`},
		// A double is a number; the API server judges fractions.
		{"deploy", `{replicas: 3.0, image: nginx, cpu: 1, protocol: TCP, deadline: 30}`, ""},
		{"deploy", `{replicas: "3", image: nginx, cpu: 1, protocol: TCP, deadline: 30}`, `spec.replicas: ${schema.spec.cfg.replicas} is "3" (a string), but the field expects int`},
		// Embedded in text, a value must be a string, as before.
		{"deploy", `{replicas: 1, image: 1, cpu: 1, protocol: TCP, deadline: 30}`, "gave int64, not a string"},
		// targetPort is an int or a string; null unsets a field.
		{"svc", `{ports: [{port: 80, targetPort: http}, {port: 81, targetPort: 8081}], labels: null}`, ""},
		{"svc", `{ports: [{port: 80}, {port: "81"}]}`, `spec.ports: ${schema.spec.cfg.ports} holds "81" (a string) at [1].port, where int is expected`},
		{"svc", `{ports: {port: 80}}`, `spec.ports: ${schema.spec.cfg.ports} is an object, but the field expects list(`},
		{"svc", `{ports: [], labels: {app: true}}`, `spec.selector: ${schema.spec.cfg.labels} holds true (a bool) at app, where string is expected`},
		{"svc", `{ports: [80]}`, `holds 80 (an int) at [0], where an object is expected`},
	} {
		err := render(tc.id, tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s with cfg %s: %v", tc.id, tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s with cfg %s: error %v, want it to contain %q", tc.id, tc.cfg, err, tc.want)
		}
	}
}

// Text written where bytes go (a Secret's data) must be base64, which the
// API server refuses otherwise in its decoder's words alone: the value is
// checked when it is rendered, the error names the field and says how to
// write the text, and does not show it, as it is most often a secret.
// Bytes, and text that is base64, are written.
func TestTextWhereBytesGoIsCheckedToBeBase64(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema: {apiVersion: v1alpha1, kind: Creds, spec: {password: string, user: string, caBundle: string, cfg: object}}
  resources:
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: x}
      data:
        password: ${schema.spec.password}
        encoded: ${bytes(schema.spec.password)}
  - id: pair
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: pair}
      data: {auth: "${schema.spec.user}${schema.spec.password}"}
  - id: free
    template:
      apiVersion: v1
      kind: Secret
      metadata: {name: free}
      data: {count: "${schema.spec.cfg.count}"}
  - id: webhook
    template:
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: x}
      webhooks:
      - name: x.example.com
        sideEffects: None
        admissionReviewVersions: [v1]
        clientConfig: {url: "https://x.example.com", caBundle: "${schema.spec.caBundle}"}
`)
	render := func(id, spec string) (map[string]any, error) {
		s := NewScope(g, obj(t, `{metadata: {name: v, namespace: default}, spec: `+spec+`}`))
		return Render(g.Node(id), s)
	}
	_, err := render("secret", `{password: "hunter2!", user: "YWRt"}`)
	const password = `data.password: ${schema.spec.password} is text that is not base64 (not shown: it may be a secret), but the field expects base64 text (bytes); write ${bytes(schema.spec.password)} to have the text written in base64, or give it under stringData, which takes text as it is`
	if err == nil || err.Error() != password {
		t.Errorf("a password as text: %v\nwant %s", err, password)
	}
	_, err = render("pair", `{password: "aGk=", user: "admin"}`)
	const auth = `data.auth: ${schema.spec.user}${schema.spec.password} is text that is not base64 (not shown: it may be a secret), but the field expects base64 text (bytes); write ${bytes(schema.spec.user + schema.spec.password)} to have the text written in base64, or give it under stringData, which takes text as it is`
	if err == nil || err.Error() != auth {
		t.Errorf("text with expressions in it: %v\nwant %s", err, auth)
	}
	if strings.Contains(fmt.Sprint(err), "admin") {
		t.Errorf("the error shows the text: %v", err)
	}
	out, err := render("secret", `{password: "aGk=", user: "YWRt"}`)
	if err != nil {
		t.Fatalf("base64 text: %v", err)
	}
	if data := out["data"].(map[string]any); data["password"] != "aGk=" || data["encoded"] != "YUdrPQ==" {
		t.Errorf("data = %v, want the base64 text as it is and bytes written in base64", data)
	}
	if _, err := render("pair", `{password: "aGk=", user: "YWRt"}`); err != nil {
		t.Errorf("base64 text made of two: %v", err)
	}
	// A value of another type than text is told as such, with no advice
	// of bytes(...), which takes text.
	_, err = render("free", `{cfg: {count: 5}}`)
	const count = `data.count: ${schema.spec.cfg.count} is 5 (an int), but the field expects bytes`
	if err == nil || err.Error() != count {
		t.Errorf("a number where bytes go: %v\nwant %s", err, count)
	}
	_, err = render("webhook", `{caBundle: "-----BEGIN CERTIFICATE-----"}`)
	const caBundle = `webhooks[0].clientConfig.caBundle: ${schema.spec.caBundle} is text that is not base64 (not shown: it may be a secret), but the field expects base64 text (bytes); write ${bytes(schema.spec.caBundle)} to have the text written in base64`
	if err == nil || err.Error() != caBundle {
		t.Errorf("a caBundle in PEM: %v\nwant %s", err, caBundle)
	}
}

// Text rendered where a quantity goes (a container's memory limit, a
// claim's storage) is checked to be one: the API server refuses it
// otherwise in words that name no field. The error names the field and
// the expression and says what to write; quantities and numbers pass.
func TestTextWhereQuantitiesGoIsCheckedToBeOne(t *testing.T) {
	g := compileRGD(t, `
spec:
  schema: {apiVersion: v1alpha1, kind: Sized, spec: {memory: string, size: string, cpu: integer}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        selector: {matchLabels: {app: x}}
        template:
          metadata: {labels: {app: x}}
          spec:
            containers:
            - name: c
              image: nginx
              resources: {limits: {memory: "${schema.spec.memory}", cpu: "${schema.spec.cpu}"}}
  - id: claim
    template:
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: x}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: "${schema.spec.size}Gb"}}}
`)
	render := func(id, spec string) error {
		s := NewScope(g, obj(t, `{metadata: {name: v, namespace: default}, spec: `+spec+`}`))
		_, err := Render(g.Node(id), s)
		return err
	}
	for _, tc := range []struct{ id, spec, want string }{
		{"deploy", `{memory: 512Mi, cpu: 2}`, ""},
		{"deploy", `{memory: 1Gb, cpu: 2}`, `spec.template.spec.containers[0].resources.limits.memory: ${schema.spec.memory} is "1Gb", which is no quantity: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1: write 1Gi (or 1G, in powers of 1000)`},
		{"deploy", `{memory: lots, cpu: 2}`, `limits.memory: ${schema.spec.memory} is "lots", which is no quantity: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1`},
		{"claim", `{size: "10"}`, `spec.resources.requests.storage: ${schema.spec.size}Gb is "10Gb", which is no quantity: quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1: write 10Gi (or 10G, in powers of 1000)`},
	} {
		err := render(tc.id, tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s with %s: %v", tc.id, tc.spec, err)
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%s with %s: error %v, want it to end %q", tc.id, tc.spec, err, tc.want)
		}
	}
}
