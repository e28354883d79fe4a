package simpleschema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

var (
	specPath  = field.NewPath("spec", "schema", "spec")
	typesPath = field.NewPath("spec", "schema", "types")
)

func build(t *testing.T, specYAML, typesYAML string) (string, field.ErrorList) {
	t.Helper()
	var spec, types map[string]any
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(typesYAML), &types); err != nil {
		t.Fatal(err)
	}
	s, errs := Build(spec, types, specPath, typesPath)
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), errs
}

func TestBuildValid(t *testing.T) {
	cases := []struct {
		name, spec, types, want string
	}{
		{"scalars", `{a: string, b: integer, c: boolean, d: float}`, ``,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},"d":{"type":"number"}}}`},
		{"free-form object", `{o: object}`, ``,
			`{"type":"object","properties":{"o":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`},
		{"required and default", `{name: "string | required=true", replicas: "integer | default=3 minimum=1 maximum=10"}`, ``,
			`{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"replicas":{"type":"integer","default":3,"maximum":10,"minimum":1}}}`},
		{"defaults make the struct default to {}", `{ingress: {enabled: "boolean | default=false"}}`, ``,
			`{"type":"object","default":{},"properties":{"ingress":{"type":"object","default":{},"properties":{"enabled":{"type":"boolean","default":false}}}}}`},
		{"lists and maps", `{tags: "[]string | minItems=1 maxItems=3 uniqueItems=true", env: "map[string]string", m: "map[string][]integer"}`, ``,
			`{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"}},"m":{"type":"object","additionalProperties":{"type":"array","items":{"type":"integer"}}},"tags":{"type":"array","maxItems":3,"minItems":1,"items":{"type":"string"},"x-kubernetes-list-type":"set"}}}`},
		{"quoted pattern with an escaped bracket", `{a: "string | pattern=\"[\\\\]]\""}`, ``, `{"type":"object","properties":{"a":{"type":"string","pattern":"[\\]]"}}}`},
		{"enum, pattern, lengths, description with spaces", `{mode: "string | enum=fast,slow default=fast", id: "string | pattern=\"^[a-z]+$\" minLength=1 maxLength=8 description=\"the id, lower case\""}`, ``,
			`{"type":"object","default":{},"properties":{"id":{"description":"the id, lower case","type":"string","maxLength":8,"minLength":1,"pattern":"^[a-z]+$"},"mode":{"type":"string","default":"fast","enum":["fast","slow"]}}}`},
		{"validation and immutable", `{port: "integer | validation=\"self > 0 && self < 65536\" immutable=true"}`, ``,
			`{"type":"object","properties":{"port":{"type":"integer","x-kubernetes-validations":[{"rule":"self \u003e 0 \u0026\u0026 self \u003c 65536"},{"rule":"self == oldSelf","message":"field is immutable"}]}}}`},
		{"custom types", `{ports: "[]Port", main: "Port | required=true"}`, `{Port: {port: "integer | required=true", name: string}}`,
			`{"type":"object","required":["main"],"properties":{"main":{"type":"object","required":["port"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}},"ports":{"type":"array","items":{"type":"object","required":["port"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}}}`},
		{"a required custom type makes its fields required, through aliases, not lists", `{a: Name, b: Alias, c: "[]Name", d: "Name | required=false", e: {f: Name}}`, `{Name: "string | required=true minLength=1", Alias: Name}`,
			`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","minLength":1},"b":{"type":"string","minLength":1},"c":{"type":"array","items":{"type":"string","minLength":1}},"d":{"type":"string","minLength":1},"e":{"type":"object","required":["f"],"properties":{"f":{"type":"string","minLength":1}}}}}`},
		{"a struct with a required field gets no default {}, one whose fields all default does", `{db: DB, retry: Retry}`, `{DB: {host: "string | required=true", port: "integer | default=5432"}, Retry: {max: "integer | default=3"}}`,
			`{"type":"object","default":{},"properties":{"db":{"type":"object","required":["host"],"properties":{"host":{"type":"string"},"port":{"type":"integer","default":5432}}},"retry":{"type":"object","default":{},"properties":{"max":{"type":"integer","default":3}}}}}`},
		{"custom type alias", `{size: Size}`, `{Size: "string | enum=S,M,L"}`,
			`{"type":"object","properties":{"size":{"type":"string","enum":["S","M","L"]}}}`},
		{"list default", `{l: "[]string | default=[\"a\"]"}`, ``,
			`{"type":"object","default":{},"properties":{"l":{"type":"array","default":["a"],"items":{"type":"string"}}}}`},
		{"JSON defaults with spaces, as kro examples write them", `{labels: "map[string]string | default={\"k8s-app\": \"kube-dns\", \"tier\": \"a b\"} description=labels", ips: "[]string | default=[\"10.0.0.1\", \"10.0.0.2\"]"}`, ``,
			`{"type":"object","default":{},"properties":{"ips":{"type":"array","default":["10.0.0.1","10.0.0.2"],"items":{"type":"string"}},"labels":{"description":"labels","type":"object","default":{"k8s-app":"kube-dns","tier":"a b"},"additionalProperties":{"type":"string"}}}}`},
		{"map-typed list", `{ports: "[]Port | listType=map listMapKey=name listMapKey=protocol"}`, `{Port: {name: "string | required=true", protocol: "string | default=TCP"}}`,
			`{"type":"object","properties":{"ports":{"type":"array","items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"protocol":{"type":"string","default":"TCP"}}},"x-kubernetes-list-map-keys":["name","protocol"],"x-kubernetes-list-type":"map"}}}`},
		{"set and map list defaults with unique items", `{tags: "[]string | uniqueItems=true default=[\"a\",\"b\"]", ports: "[]Port | listType=map listMapKey=name default=[{\"name\":\"a\"},{\"name\":\"b\"}]"}`, `{Port: {name: "string | required=true"}}`,
			`{"type":"object","default":{},"properties":{"ports":{"type":"array","default":[{"name":"a"},{"name":"b"}],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}},"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map"},"tags":{"type":"array","default":["a","b"],"items":{"type":"string"},"x-kubernetes-list-type":"set"}}}`},
		{"atomic list", `{args: "[]string | listType=atomic"}`, ``,
			`{"type":"object","properties":{"args":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"atomic"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := build(t, tc.spec, tc.types)
			if len(errs) > 0 {
				t.Fatalf("unexpected errors: %v", errs)
			}
			if got != tc.want {
				t.Errorf("schema\n got: %s\nwant: %s", got, tc.want)
			}
			again, _ := build(t, tc.spec, tc.types)
			if again != got {
				t.Errorf("output is not deterministic:\n%s\n%s", got, again)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name, spec, types string
		path, msg         string
	}{
		{"unknown marker", `{a: "string | color=red"}`, ``, "spec.schema.spec.a", `unknown marker "color"`},
		{"markers each after a |", `{a: "integer | minimum=5 | default=7"}`, ``, "spec.schema.spec.a", `a second "|": the markers all follow the first, separated by spaces, as in integer | minimum=1 default=2`},
		{"markers each after a | without spaces", `{a: "integer | minimum=5 |default=7"}`, ``, "spec.schema.spec.a", `a second "|"`},
		{"marker twice", `{a: "string | default=x default=y"}`, ``, "spec.schema.spec.a", `given twice`},
		// A value with spaces, unquoted: the rest is quoted in the advice,
		// up to the next marker.
		{"unquoted value with spaces", `{a: "string | description=The name of the app required"}`, ``, "spec.schema.spec.a",
			`unknown marker "name": a value written without quotes ends at the first space, so "name" is not part of description's value; to keep the spaces, quote it: description="The name of the app"`},
		{"unquoted default with spaces", `{a: "string | default=IRSA role \"x\" for ACK"}`, ``, "spec.schema.spec.a",
			`quote it: default="IRSA role \"x\" for ACK"`},
		{"unquoted rule", `{a: "integer | validation=self > 0"}`, ``, "spec.schema.spec.a", `quote it: validation="self > 0"`},
		// A space around "=" ends the marker, as in kro: the advice writes
		// it without.
		{"spaces around =", `{a: "string | default = \"default\" required=true"}`, ``, "spec.schema.spec.a",
			`marker "default" is written with a space around its "=", which ends it there: write default="default"`},
		{"space before =", `{a: "string | required =true"}`, ``, "spec.schema.spec.a", `write required=true`},
		{"space after =", `{a: "string | required= true"}`, ``, "spec.schema.spec.a", `marker "required" is written with a space around its "=", which ends it there: write required=true`},
		{"space after = of a quoted value", `{a: "string | description= \"a \\\"b\\\" c\" required"}`, ``, "spec.schema.spec.a", `write description="a \"b\" c"`},
		{"space after = of words", `{a: "string | description= The name of it required"}`, ``, "spec.schema.spec.a", `write description="The name of it"`},
		// An empty value before another marker stays one.
		{"empty value", `{a: "string | default= required=true pattern=[a-"}`, ``, "spec.schema.spec.a", `marker "pattern": unclosed`},
		// A regular expression's escaped bracket is one alone to the bare
		// value's scan: the advice quotes the value, as the next case reads it.
		{"escaped bracket in a bare pattern", `{a: "string | pattern=[\\]] required"}`, ``, "spec.schema.spec.a",
			`marker "pattern": ']' closes a bracket that was not opened; a value written without quotes must close each [ and { it opens, a backslash before one included: to write one alone, quote the value: pattern="[\\]]"`},
		{"escaped bracket opening a bare pattern", `{a: "string | pattern=\\[x"}`, ``, "spec.schema.spec.a", `quote the value: pattern="\\[x"`},
		// An enum's values with spaces between them: the list ends at the
		// first space; the advice joins them with commas.
		{"enum with spaces", `{a: "string | enum=gold, silver, bronze required"}`, ``, "spec.schema.spec.a",
			`unknown marker "silver,": enum's values are separated by commas alone, and a space ends the list, so "silver" is not one of them; write enum=gold,silver,bronze`},
		{"enum separated by spaces", `{a: "string | enum=gold silver"}`, ``, "spec.schema.spec.a", `write enum=gold,silver, or enum="gold silver" for one value holding spaces`},
		// Not a value that can hold spaces: no advice to quote it.
		{"word after a number", `{a: "integer | minimum=1 most"}`, ``, "spec.schema.spec.a", `unknown marker "most" (known markers:`},
		{"unterminated quote", `{a: "string | description=\"oops"}`, ``, "spec.schema.spec.a", `unterminated`},
		// A marker as another schema language names it.
		// A field, or the whole spec, written as an OpenAPI schema, which
		// SimpleSchema reads as fields named type and minimum: one error,
		// with the field as SimpleSchema writes it.
		{"field written as OpenAPI", `{port: {type: integer, minimum: 1, maximum: 65535}}`, ``, "spec.schema.spec.port",
			`reads as an OpenAPI schema, which SimpleSchema does not take: a field's type and markers are its value: write port: integer | minimum=1 maximum=65535`},
		{"list written as OpenAPI", `{tags: {type: array, items: {type: number}, description: "the tags"}}`, ``, "spec.schema.spec.tags", `: write tags: []float | description="the tags"`},
		{"enum written as OpenAPI", `{mode: {type: string, enum: [fast, slow], default: fast}}`, ``, "spec.schema.spec.mode", `: write mode: string | enum=fast,slow default=fast`},
		{"spec written as OpenAPI", `{type: object, properties: {name: {type: string, description: "a b"}}}`, ``, "spec.schema.spec",
			`spec reads as an OpenAPI schema, which SimpleSchema does not take: declare each field by its name`},
		{"marker named as elsewhere", `{a: "integer | min=1 max=5"}`, ``, "spec.schema.spec.a", `unknown marker "min": SimpleSchema calls it minimum (known markers: `},
		{"marker named as elsewhere, capitalised", `{a: "string | Regex=^a"}`, ``, "spec.schema.spec.a", `unknown marker "Regex": SimpleSchema calls it pattern`},
		{"optional marker", `{a: "string | optional"}`, ``, "spec.schema.spec.a", `unknown marker "optional": a field is optional unless it is required=true, so leave it out`},
		{"unknown type", `{a: strin}`, ``, "spec.schema.spec.a", `unknown type "strin": did you mean string? (built-in types:`},
		{"unknown element type", `{a: "[]Widget"}`, `{Port: integer}`, "spec.schema.spec.a", `unknown type "Widget" (built-in types:`},
		{"misspelt custom type", `{a: "[]Prot"}`, `{Port: integer}`, "spec.schema.spec.a", `unknown type "Prot": did you mean Port?`},
		{"another language's type", `{a: "map[string]int"}`, ``, "spec.schema.spec.a", `unknown type "int": SimpleSchema calls it integer (built-in types:`},
		{"misspelt marker", `{a: "integer | minimun=1"}`, ``, "spec.schema.spec.a", `unknown marker "minimun": did you mean minimum? (known markers:`},
		{"map with int keys", `{a: "map[int]string"}`, ``, "spec.schema.spec.a", `map keys must be string`},
		{"map without its value type", `{a: "map[string]"}`, ``, "spec.schema.spec.a", `type "map[string]": a map's value type follows the ], as in map[string]string`},
		{"list without its item type", `{a: "[]"}`, ``, "spec.schema.spec.a", `type "[]": a list's item type follows the [], as in []string`},
		{"list as Python writes it", `{a: "list[str]"}`, ``, "spec.schema.spec.a", `unknown type "list[str]": a list is written []T, as in []string (built-in types:`},
		{"list as Java writes it", `{a: "List<String>"}`, ``, "spec.schema.spec.a", `as in []string (`},
		{"map as TypeScript writes it", `{a: "map<string, number>"}`, ``, "spec.schema.spec.a", `unknown type "map<string, number>": a map is written map[string]T, as in map[string]float (`},
		{"map as Python writes it", `{a: "dict[str, Port]"}`, ``, "spec.schema.spec.a", `as in map[string]Port (`},
		{"list written with [] last", `{a: "string[]"}`, ``, "spec.schema.spec.a", `unknown type "string[]": a list is written with the [] first, as in []string (built-in types:`},
		{"[] last inside a map type", `{a: "map[string]integer[]"}`, ``, "spec.schema.spec.a", `unknown type "integer[]": a list is written with the [] first, as in []integer`},
		{"map without bracket", `{a: "map[string"}`, ``, "spec.schema.spec.a", `missing ]`},
		{"bad integer default", `{a: "integer | default=three"}`, ``, "spec.schema.spec.a", `bad default: "three" is not an integer`},
		{"bad boolean default", `{a: "boolean | default=yes"}`, ``, "spec.schema.spec.a", `is not true or false`},
		{"default outside enum", `{a: "string | enum=a,b default=c"}`, ``, "spec.schema.spec.a", `not one of the enum values`},
		{"default below minimum", `{a: "integer | minimum=1 default=0"}`, ``, "spec.schema.spec.a", `below minimum`},
		{"default against pattern", `{a: "string | pattern=^[a-z]+$ default=ABC"}`, ``, "spec.schema.spec.a", `does not match pattern`},
		{"default with fewer than minItems", `{a: "[]string | minItems=2 default=[\"a\"]"}`, ``, "spec.schema.spec.a", `bad default: ["a"] has 1 items, fewer than minItems 2`},
		{"default with more than maxItems", `{a: "[]integer | maxItems=1 default=[1,2]"}`, ``, "spec.schema.spec.a", `has 2 items, more than maxItems 1`},
		{"set default with a duplicate", `{a: "[]string | uniqueItems=true default=[\"a\",\"b\",\"a\"]"}`, ``, "spec.schema.spec.a", `bad default: ["a","b","a"] holds "a" twice, but its items must be unique`},
		{"set default with equal numbers", `{a: "[]float | listType=set default=[1,1.0]"}`, ``, "spec.schema.spec.a", `holds 1 twice`},
		{"map list default with a duplicate key", `{a: "[]T | listType=map listMapKey=name default=[{\"name\":\"x\",\"v\":1},{\"name\":\"x\",\"v\":2}]"}`, `{T: {name: "string | required=true", v: integer}}`, "spec.schema.spec.a",
			`holds two items with keys {"name":"x"}, but each item's keys (name) must be unique`},
		{"map list default whose keys are the same once defaulted", `{a: "[]T | listType=map listMapKey=name listMapKey=protocol default=[{\"name\":\"x\"},{\"name\":\"x\",\"protocol\":\"TCP\"}]"}`, `{T: {name: "string | required=true", protocol: "string | default=TCP"}}`, "spec.schema.spec.a",
			`holds two items with keys {"name":"x","protocol":"TCP"}, but each item's keys (name, protocol) must be unique`},
		{"list default not a list", `{a: "[]string | default={}"}`, ``, "spec.schema.spec.a", `is not a list`},
		// A default written as YAML writes it, or one value for a list:
		// the JSON to write, when it is a default of the field.
		{"list default in YAML", `{a: "[]string | default=[a, b]"}`, ``, "spec.schema.spec.a", `bad default: "[a, b]" is not JSON: invalid character 'a' looking for beginning of value: write default=["a","b"] (JSON, its text in double quotes)`},
		{"map default in YAML", `{a: "map[string]integer | default={a: 1}"}`, ``, "spec.schema.spec.a", `write default={"a":1}`},
		{"list default of one value", `{a: "[]integer | minItems=1 default=3"}`, ``, "spec.schema.spec.a", `bad default: "3" is not a list: write default=[3]`},
		{"default on required", `{a: "string | required=true default=x"}`, ``, "spec.schema.spec.a", `required field cannot have a default`},
		{"minimum on string", `{a: "string | minimum=1"}`, ``, "spec.schema.spec.a", `minimum applies to integer and float fields, not string`},
		{"pattern on integer", `{a: "integer | pattern=x"}`, ``, "spec.schema.spec.a", `pattern applies to string fields`},
		{"minItems on map", `{a: "map[string]string | minItems=1"}`, ``, "spec.schema.spec.a", `minItems applies to array fields, not a map`},
		{"enum on boolean", `{a: "boolean | enum=true"}`, ``, "spec.schema.spec.a", `enum applies to`},
		{"bad enum value", `{a: "integer | enum=1,two"}`, ``, "spec.schema.spec.a", `enum value "two"`},
		{"bad regex", `{a: "string | pattern=\"[\""}`, ``, "spec.schema.spec.a", `not a valid regular expression`},
		{"negative maxLength", `{a: "string | maxLength=-1"}`, ``, "spec.schema.spec.a", `non-negative integer`},
		{"min above max", `{a: "integer | minimum=5 maximum=1"}`, ``, "spec.schema.spec.a", `minimum is greater than maximum`},
		{"required not boolean", `{a: "string | required=maybe"}`, ``, "spec.schema.spec.a", `required must be true or false`},
		{"empty validation", `{a: "string | validation=\"\""}`, ``, "spec.schema.spec.a", `needs a CEL rule`},
		{"type not a string", `{a: 5}`, ``, "spec.schema.spec.a", `must be a SimpleSchema type`},
		{"missing type", `{a: "| required=true"}`, ``, "spec.schema.spec.a", `missing type`},
		{"nested error path", `{outer: {inner: {leaf: "string | bogus=1"}}}`, ``, "spec.schema.spec.outer.inner.leaf", `unknown marker "bogus"`},
		{"recursive type", `{a: Node}`, `{Node: {next: Node}}`, "spec.schema.types[Node]", `refers to itself`},
		{"required custom type with a default", `{a: "T | default=x"}`, `{T: "string | required=true"}`, "spec.schema.spec.a", `type T is required=true, so a field of it cannot have a default`},
		{"unclosed brace in a default", `{a: "map[string]string | default={\"a\": 1"}`, ``, "spec.schema.spec.a", `unclosed { or [`},
		{"stray closing bracket", `{a: "[]string | default=a]"}`, ``, "spec.schema.spec.a", `not opened`},
		{"unknown listType", `{a: "[]string | listType=bag"}`, ``, "spec.schema.spec.a", `listType must be atomic, set or map`},
		{"listType on a string", `{a: "string | listType=set"}`, ``, "spec.schema.spec.a", `listType applies to array fields, not string`},
		{"map list without a key", `{a: "[]T | listType=map"}`, `{T: {x: "string | required=true"}}`, "spec.schema.spec.a", `needs a listMapKey`},
		{"listMapKey without map", `{a: "[]T | listMapKey=x"}`, `{T: {x: "string | required=true"}}`, "spec.schema.spec.a", `listMapKey needs listType=map`},
		{"listMapKey twice the same", `{a: "[]T | listType=map listMapKey=x listMapKey=x"}`, `{T: {x: "string | required=true"}}`, "spec.schema.spec.a", `different field`},
		{"uniqueItems against listType", `{a: "[]string | uniqueItems=true listType=atomic"}`, ``, "spec.schema.spec.a", `uniqueItems makes the list a set`},
		{"uniqueItems on list of structs", `{a: "[]T | uniqueItems=true"}`, `{T: {x: string}}`, "spec.schema.spec.a", `scalar type`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := build(t, tc.spec, tc.types)
			if len(errs) == 0 {
				t.Fatalf("expected an error at %s containing %q, got none", tc.path, tc.msg)
			}
			for _, e := range errs {
				if e.Field == tc.path && strings.Contains(e.Error(), tc.msg) {
					return
				}
			}
			t.Errorf("no error at %s containing %q; got: %v", tc.path, tc.msg, errs.ToAggregate())
		})
	}
}

func TestBuildReportsEveryError(t *testing.T) {
	_, errs := build(t, `{a: "string | bogus=1", b: "integer | default=x", c: nope}`, ``)
	if len(errs) != 3 {
		t.Fatalf("want 3 errors, got %d: %v", len(errs), errs)
	}
}

// A map written as an OpenAPI schema is one error, not one for each of
// its keywords read as a field; one SimpleSchema reads without error
// ({type: array, items: {type: string}}) is legal, as in kro, and
// WrittenAsOpenAPI finds it for a warning, but for a type alone, as likely
// a field named type.
func TestOpenAPIWrittenIsOneError(t *testing.T) {
	for spec, want := range map[string]int{
		`{port: {type: integer, minimum: 1, nullable: true}, name: string}`: 1,
		`{type: object, properties: {name: {type: string, minimum: 1}}}`:    1,
		`{name: {type: string}}`: 0,
	} {
		if _, errs := build(t, spec, ""); len(errs) != want {
			t.Errorf("%s: %d errors, want %d: %v", spec, len(errs), want, errs)
		}
	}
	var fields map[string]any
	if err := yaml.Unmarshal([]byte(`{name: {type: string}, db: {type: string, size: integer}, tags: {type: array, items: {type: string}}, nested: {inner: {type: object, properties: {a: string}}}}`), &fields); err != nil {
		t.Fatal(err)
	}
	if got := WrittenAsOpenAPI(fields); !reflect.DeepEqual(got, [][]string{{"nested", "inner"}, {"tags"}}) {
		t.Errorf("WrittenAsOpenAPI = %q, want nested.inner and tags", got)
	}
}

func FuzzBuild(f *testing.F) {
	for _, s := range []string{
		"string", "integer | default=3 minimum=1", `string | description="a \"quoted\" value" pattern=^a`,
		"[]map[string][]T", "map[string", "boolean | required", "float | enum=1.5,2", "[]string | default=[1]",
		"string | validation=\"self.size() > 0\" immutable=true", "|", "T | default={\"a\":1}",
	} {
		f.Add(s, "string | default=x")
	}
	f.Fuzz(func(t *testing.T, fieldDef, typeDef string) {
		spec := map[string]any{"a": fieldDef, "n": map[string]any{"b": fieldDef}}
		types := map[string]any{"T": typeDef, "U": map[string]any{"x": fieldDef}}
		s, _ := Build(spec, types, specPath, typesPath)
		if s == nil {
			t.Fatal("Build returned a nil schema")
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("schema does not marshal: %v", err)
		}
	})
}

// The quoted value the advice suggests is read back whole.
func TestQuotedValuesKeepTheirSpaces(t *testing.T) {
	got, errs := build(t, `{a: "string | description=\"The name of the app\" default=\"IRSA role \\\"x\\\" for ACK\""}`, ``)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := `{"type":"object","default":{},"properties":{"a":{"description":"The name of the app","type":"string","default":"IRSA role \"x\" for ACK"}}}`
	if got != want {
		t.Errorf("schema\n got: %s\nwant: %s", got, want)
	}
}
