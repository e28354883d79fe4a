package offline

import (
	"context"
	"slices"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// appCRD serves App: spec.name required, spec.replicas defaulted to 1 and
// at most 5, spec.tier an enum, and a rule across fields.
func appCRD() *extv1.CustomResourceDefinition {
	return appsCRD(&extv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]extv1.JSONSchemaProps{
			"spec": {
				Type:         "object",
				Required:     []string{"name"},
				XValidations: extv1.ValidationRules{{Rule: "self.tier != 'free' || self.replicas == 1", Message: "the free tier runs one replica"}},
				Properties: map[string]extv1.JSONSchemaProps{
					"name":     {Type: "string"},
					"replicas": {Type: "integer", Default: &extv1.JSON{Raw: []byte("1")}, Maximum: ptr(5.0)},
					"tier":     {Type: "string", Default: &extv1.JSON{Raw: []byte(`"free"`)}, Enum: []extv1.JSON{{Raw: []byte(`"free"`)}, {Raw: []byte(`"paid"`)}}},
				},
			},
			"status": {Type: "object", Properties: map[string]extv1.JSONSchemaProps{"state": {Type: "string"}}},
		},
	})
}

func app(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAdmitDefaultsAValidObject(t *testing.T) {
	obj := app(t, `
apiVersion: kro.run/v1alpha1
kind: App
metadata: {name: demo, namespace: default}
spec: {name: web}
status: {state: ACTIVE}
`)
	errs, err := Admit(context.Background(), appCRD(), obj)
	if err != nil || len(errs) > 0 {
		t.Fatalf("a valid object is refused: %v %v", err, errs)
	}
	if got, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); got != 1 {
		t.Errorf("spec.replicas = %d, want the default 1", got)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "tier"); got != "free" {
		t.Errorf("spec.tier = %q, want the default free", got)
	}
	if _, ok := obj.Object["status"]; ok {
		t.Error("status is kept; the status subresource drops it on create")
	}
}

func TestAdmitNamesFromGenerateName(t *testing.T) {
	obj := app(t, `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {generateName: demo-, namespace: default}, spec: {name: web}}`)
	errs, err := Admit(context.Background(), appCRD(), obj)
	if err != nil || len(errs) > 0 {
		t.Fatalf("an object with generateName is refused: %v %v", err, errs)
	}
	if name := obj.GetName(); !strings.HasPrefix(name, "demo-") || len(name) != len("demo-")+5 {
		t.Errorf("name = %q, want demo- and five characters", name)
	}
}

// A cluster-scoped object written with a namespace is taken, without it,
// as the API server takes it (kubectl apply sends the namespace as written).
func TestAdmitDropsTheNamespaceOfAClusterScopedObject(t *testing.T) {
	crd := appCRD()
	crd.Spec.Scope = extv1.ClusterScoped
	obj := app(t, `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: demo, namespace: default}, spec: {name: web}}`)
	errs, err := Admit(context.Background(), crd, obj)
	if err != nil || len(errs) > 0 {
		t.Fatalf("a cluster-scoped object with a namespace is refused: %v %v", err, errs)
	}
	if ns := obj.GetNamespace(); ns != "" {
		t.Errorf("namespace = %q, want none", ns)
	}
}

func TestAdmitSaysWhatTheAPIServerWouldRefuse(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
		not       string
	}{{
		name: "unknown field and missing required one; the rules wait",
		doc:  `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: demo, namespace: default}, spec: {nmae: web}}`,
		want: []string{
			`spec.nmae: Forbidden: field not declared in the schema; did you mean name?`,
			`spec.name: Required value`,
		},
		not: "free tier",
	}, {
		name: "over the maximum, outside the enum",
		doc:  `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: demo, namespace: default}, spec: {name: web, replicas: 9, tier: gold}}`,
		want: []string{`spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5`, `spec.tier: Unsupported value: "gold"`},
	}, {
		name: "a rule",
		doc:  `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: demo, namespace: default}, spec: {name: web, replicas: 3}}`,
		want: []string{`spec: Invalid value: the free tier runs one replica`},
	}, {
		name: "a name the API server does not take",
		doc:  `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: Demo_1, namespace: default}, spec: {name: web}}`,
		want: []string{`metadata.name: Invalid value: "Demo_1"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			errs, err := Admit(context.Background(), appCRD(), app(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			got := errs.ToAggregate().Error()
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("the errors lack %q:\n%s", want, got)
				}
			}
			if tc.not != "" && strings.Contains(got, tc.not) {
				t.Errorf("the errors hold %q:\n%s", tc.not, got)
			}
		})
	}
}

// A field the schema does not declare is answered with the one declared
// beside it that is spelt alike, in a list's items and a map's values
// too; a word like none of them gets no guess.
func TestAdmitNamesTheFieldMeant(t *testing.T) {
	checkAdmitErrors(t, `{resources: [{id: a, readywhen: []}], byName: {x: {id: b, redyWhen: []}}, colour: blue}`,
		`spec.resources[0].readywhen: Forbidden: field not declared in the schema; did you mean readyWhen?`,
		`spec.byName.x.redyWhen: Forbidden: field not declared in the schema; did you mean readyWhen?`,
		`spec.colour: Forbidden: field not declared in the schema`)
}

// One value where a list of such values is wanted is answered with the
// list of it; a value the list does not hold items of is not.
func TestAdmitShowsOneValueWrittenAsAList(t *testing.T) {
	checkAdmitErrors(t, `{resources: [{id: a, readyWhen: "${a.data.x == 'y'}"}, {id: c, readyWhen: 3}], byName: {x: {id: b, readyWhen: "${true}"}}}`,
		`spec.resources[0].readyWhen: Invalid value: "string": spec.resources[0].readyWhen in body must be of type array: "string": a list is wanted; to give this one value, write ["${a.data.x == 'y'}"]`,
		`spec.resources[1].readyWhen: Invalid value: "integer": spec.resources[1].readyWhen in body must be of type array: "integer"`,
		`spec.byName.x.readyWhen: Invalid value: "string": spec.byName.x.readyWhen in body must be of type array: "string": a list is wanted; to give this one value, write ["${true}"]`)
}

// A map where a list of such maps is wanted (forEach: {region: ...}) is
// shown as written, in a list; its keys are not also called undeclared.
func TestAdmitShowsOneMapWrittenAsAList(t *testing.T) {
	got := checkAdmitErrors(t, `{resources: {id: a, readyWhen: ["${true}"]}}`,
		`spec.resources: Invalid value: "object": spec.resources in body must be of type array: "object": a list is wanted; to give this one value, write [{"id":"a","readyWhen":["${true}"]}]`)
	if len(got) != 1 {
		t.Errorf("want the one error, got:\n%s", strings.Join(got, "\n"))
	}
}

// Text written without quotes that YAML reads as a boolean or a number,
// where the schema wants a string, is told so.
func TestAdmitSaysTextWasReadAsAnotherType(t *testing.T) {
	checkAdmitErrors(t, `{resources: [{id: y}, {id: 1.10}, {id: no}]}`,
		`spec.resources[0].id: Invalid value: "boolean": spec.resources[0].id in body must be of type string: "boolean": YAML reads an unquoted y, yes, on or true as the boolean true; quote the text`,
		`spec.resources[1].id: Invalid value: "number": spec.resources[1].id in body must be of type string: "number": YAML reads an unquoted number as a number; quote the text as it was written`,
		`spec.resources[2].id: Invalid value: "boolean": spec.resources[2].id in body must be of type string: "boolean": YAML reads an unquoted n, no, off or false as the boolean false; quote the text`)
}

// checkAdmitErrors admits an App whose spec is spec, under a schema of
// resources (a list of {id, readyWhen}) and byName (a map of them), and
// checks that the errors hold each of want. It returns them all.
func checkAdmitErrors(t *testing.T, spec string, want ...string) []string {
	t.Helper()
	item := extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
		"id": {Type: "string"}, "readyWhen": {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "string"}}},
	}}
	crd := appsCRD(&extv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]extv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]extv1.JSONSchemaProps{
				"resources": {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &item}},
				"byName":    {Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &item}},
			}},
		},
	})
	errs, err := Admit(context.Background(), crd, app(t, `{apiVersion: kro.run/v1alpha1, kind: App, metadata: {name: demo, namespace: default}, spec: `+spec+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the errors lack %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
	return got
}
