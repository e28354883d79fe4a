package cellib_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/cellib"
)

// eval compiles src in the environment RGD expressions are compiled in,
// with `schema` typed as an object holding a map of strings and a free-form
// object, and returns the value as it would be written into an object.
func eval(t *testing.T, src string) (any, error) {
	t.Helper()
	schema := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"labels": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: spec.StringProperty()}}},
		"pod": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"securityContext": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"fsGroup": *spec.Int64Property(),
			}}},
			"hostname": *spec.StringProperty(),
		}}},
	}}}
	out, _, err := program(t, schema, src).Eval(map[string]any{"schema": map[string]any{
		"labels": map[string]any{"team": "a", "tier": "web"},
		"pod":    map[string]any{"securityContext": map[string]any{"fsGroup": int64(2000)}, "hostname": "h"},
	}})
	if err != nil {
		return nil, err
	}
	return cellib.Native(out)
}

// program compiles src in the environment RGD expressions are compiled
// in, with `schema` typed by schema, and plans it.
func program(t *testing.T, schema *spec.Schema, src string) cel.Program {
	t.Helper()
	env, err := celenv.New(celenv.Var{Name: "schema", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	ast, err := env.Compile(src)
	if err != nil {
		t.Fatalf("%s does not compile: %v", src, err)
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

func TestFunctions(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want any
	}{
		// Standard test vectors, so the digests match any other implementation.
		{`"%x".format([hash.sha256("abc")])`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`"%x".format([hash.md5("abc")])`, "900150983cd24fb0d6963f7d28e17f72"},
		{`"%x".format([hash.fnv64a("a")])`, "af63dc4c8601ec8c"},
		{`base64.encode(hash.fnv64a("a"))`, "r2PcTIYB7Iw="},
		// The values kro v0.9.4 gives for the same arguments.
		{`random.seededString(10, "3f1c9a52-7a0e-4c1b-9a55-0d6c2b1e8f42")`, "kf9gribdkf"},
		{`random.seededString(1, "")`, "e"},
		{`random.seededString(8, "a")`, "2q3xwip3"},
		{`random.seededString(40, "demo")`, "ss1qdl02ss1qdl02ss1qdl02ss1qdl02ss1qdl02"},
		{`random.seededInt(30000, 32768, "3f1c9a52-7a0e-4c1b-9a55-0d6c2b1e8f42")`, int64(30431)},
		{`random.seededInt(-5, 5, "demo")`, int64(1)},
		{`random.seededInt(0, 1, "x")`, int64(0)},
		{`random.seededInt(-9223372036854775807 - 1, 9223372036854775807, "wide")`, int64(-8450261383382865265)},

		// In kro's environment too: cel.bind and the latest strings extension.
		{`"héllo".reverse()`, "olléh"},
		{`cel.bind(n, schema.labels.team, n + n)`, "aa"},

		// Whole numbers come back as ints, so they add to ints.
		{`json.unmarshal('{"replicas": 2}').replicas + 1`, int64(3)},
		{`json.unmarshal('{"a": [1.5, "x", null, true]}').a`, []any{1.5, "x", nil, true}},
		{`json.unmarshal('"text"')`, "text"},
		// Keys sorted, no spaces: the same value always gives the same text.
		{`json.marshal({"b": dyn(1), "a": dyn([dyn(true), dyn(null), dyn(1.5), dyn("x")])})`, `{"a":[true,null,1.5,"x"],"b":1}`},
		{`json.marshal(schema.labels)`, `{"team":"a","tier":"web"}`},
		{`json.marshal(json.unmarshal('{"z": {"y": [1, 2]}, "a": 0}'))`, `{"a":0,"z":{"y":[1,2]}}`},
		{`json.marshal({"kept": dyn(1), "dropped": omit()})`, `{"kept":1}`},

		{`{"app": "x", "tier": "db"}.merge(schema.labels)`, map[string]any{"app": "x", "team": "a", "tier": "web"}},
		{`schema.labels.merge({"tier": "api"})`, map[string]any{"team": "a", "tier": "api"}},
		// Maps within maps are merged, everything else replaced; objects
		// typed by a schema merge like maps.
		{`{"securityContext": {"runAsNonRoot": true}}.deepMerge(schema.pod)`,
			map[string]any{"securityContext": map[string]any{"runAsNonRoot": true, "fsGroup": int64(2000)}, "hostname": "h"}},
		{`schema.pod.deepMerge({"securityContext": dyn({"fsGroup": 1}), "extra": dyn([1])})`,
			map[string]any{"securityContext": map[string]any{"fsGroup": int64(1)}, "hostname": "h", "extra": []any{int64(1)}}},

		{`lists.setAtIndex(["a", "b", "c"], 1, "x")`, []any{"a", "x", "c"}},
		{`lists.insertAtIndex(["a", "b"], 0, "x")`, []any{"x", "a", "b"}},
		{`lists.insertAtIndex(["a", "b"], 1, "x")`, []any{"a", "x", "b"}},
		{`lists.insertAtIndex(["a", "b"], 2, "x")`, []any{"a", "b", "x"}},
		{`lists.removeAtIndex(["a", "b", "c"], 1)`, []any{"a", "c"}},
		// The list given is left as it was.
		{`[["a", "b"]].map(l, [lists.setAtIndex(l, 0, "x"), lists.insertAtIndex(l, 0, "y"), lists.removeAtIndex(l, 0), l])[0]`,
			[]any{[]any{"x", "b"}, []any{"y", "a", "b"}, []any{"b"}, []any{"a", "b"}}},

		{`false ? {"a": "b"} : omit()`, cellib.Absent},
		{`{"a": true ? "kept" : omit(), "b": false ? "x" : omit()}`, map[string]any{"a": "kept"}},
		{`["a", "b", "c"].map(x, x == "b" ? omit() : x)`, []any{"a", "c"}},

		// Conditions as upstream kro writes them: bare field names, and
		// every field present when read.
		{`runtime.newCondition({type: 'Up', status: 1 > 0 ? 'True' : 'False', reason: 'Checked', message: 'm'})`,
			map[string]any{"type": "Up", "status": "True", "reason": "Checked", "message": "m"}},
		{`runtime.newCondition({"type": 'Up', status: 'Unknown'}).reason`, ""},
		{`runtime.newCondition({"type": "T"}.merge({"status": "False"})).status`, "False"},
		{`["a", "b"].map(x, runtime.newCondition({type: x + '-Ready', status: 'True'}).type)`, []any{"a-Ready", "b-Ready"}},
		{`runtime.condition(json.unmarshal('{"status": {"conditions": [{"type": "Progressing", "status": "False"}, {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "observedGeneration": 2}]}}'), 'Available')`,
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": ""}},
		{`runtime.condition(schema, 'Available').status == 'True'`, false},
		{`runtime.condition(schema.pod, 'Available')`, map[string]any{"type": "", "status": "", "reason": "", "message": ""}},
	} {
		got, err := eval(t, tc.src)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s\n got %#v, %v\nwant %#v", tc.src, got, err, tc.want)
		}
	}
}

func TestFunctionErrorsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`json.unmarshal("{not json")`, "json.unmarshal: "},
		{`random.seededString(0, "x")`, "random.seededString: length must be between 1 and 1048576, not 0"},
		{`random.seededString(2000000, "x")`, "length must be between 1 and 1048576, not 2000000"},
		{`random.seededInt(5, 5, "x")`, "random.seededInt: min (5) must be less than max (5)"},
		{`lists.setAtIndex(["a"], 1, "x")`, "lists.setAtIndex: index 1 is outside the list (size 1)"},
		{`lists.removeAtIndex([], 0)`, "lists.removeAtIndex: index 0 is outside the list (size 0)"},
		{`lists.insertAtIndex(["a"], -1, "x")`, "lists.insertAtIndex: index -1 is outside the list (size 1)"},
		{`lists.insertAtIndex(["a"], 2, "x")`, "lists.insertAtIndex: index 2 is outside the list (size 1)"},
		{`dyn("text").deepMerge({"a": 1})`, "deepMerge: the receiver is a string, not a map or object"},
		{`{"a": 1}.deepMerge(dyn([1]))`, "deepMerge: the argument is a list, not a map or object"},
		{`runtime.newCondition({type: 'Up', status: ['True', 'Maybe'][1]})`, `runtime.newCondition: status must be 'True', 'False' or 'Unknown', not "Maybe"`},
		{`runtime.newCondition({type: '', status: 'True'})`, "runtime.newCondition: the condition's type is required"},
		{`runtime.newCondition(schema.labels)`, "runtime.newCondition: a condition has no field \"team\""},
	} {
		_, err := eval(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.src, err, tc.want)
		}
	}
}

func TestNewConditionLiteralsAreChecked(t *testing.T) {
	env, err := celenv.New(celenv.Var{Name: "schema"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want string }{
		{`runtime.newCondition({type: 'Up'})`, "the condition's status is required"},
		{`runtime.newCondition({status: 'True'})`, "the condition's type is required"},
		{`runtime.newCondition({type: 'Up', status: 'Yes'})`, "status must be 'True', 'False' or 'Unknown', not Yes"},
		{`runtime.newCondition({type: 'Up', status: 'True', severity: 'Info'})`, `a condition has no field "severity"`},
		{`runtime.newCondition({type: 'Up', status: 'True', type: 'Down'})`, "type is given twice"},
		{`runtime.newCondition({type: 'Up', status: 'True', message: 1})`, "runtime.newCondition: message must be a string, not 1"},
	} {
		if _, err := env.Compile(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.src, err, tc.want)
		}
	}
}
