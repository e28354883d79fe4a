package celenv

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func objectSchema(props map[string]spec.Schema) *spec.Schema {
	s := &spec.Schema{}
	s.Type = []string{"object"}
	s.Properties = props
	return s
}

func arrayOf(items *spec.Schema) *spec.Schema {
	s := &spec.Schema{}
	s.Type = []string{"array"}
	s.Items = &spec.SchemaOrArray{Schema: items}
	return s
}

func TestFit(t *testing.T) {
	port := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty(), "port": *spec.Int64Property()})
	servicePort := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty(), "port": *spec.Int64Property(), "protocol": *spec.StringProperty()})
	src := objectSchema(map[string]spec.Schema{
		"name":    *spec.StringProperty(),
		"count":   *spec.Int64Property(),
		"ratio":   *spec.Float64Property(),
		"on":      *spec.BooleanProperty(),
		"ports":   *arrayOf(port),
		"labels":  *spec.MapProperty(spec.StringProperty()),
		"anyting": {SchemaProps: spec.SchemaProps{Type: []string{"object"}}, VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}}},
	})
	env, err := New(Var{Name: "src", Schema: src})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr string
		into *spec.Schema
		want bool
	}{
		{"src.name", spec.StringProperty(), true},
		{"src.count", spec.StringProperty(), false},
		{"src.count", spec.Int64Property(), true},
		{"src.count", spec.Float64Property(), true},
		{"src.ratio", spec.Int64Property(), false},
		{"src.on", spec.BooleanProperty(), true},
		{"src.name", spec.BooleanProperty(), false},
		{"src.ports", arrayOf(servicePort), true},            // every field of Port has a place in ServicePort
		{"src.ports", arrayOf(spec.StringProperty()), false}, // objects into strings
		{"src.labels", spec.MapProperty(spec.StringProperty()), true},
		{"src.labels", spec.MapProperty(spec.Int64Property()), false},
		{`{"a": "b"}`, servicePort, true}, // map literal into an object: keys checked at run time
		{"src.?name.orValue('x')", spec.StringProperty(), true},
		{"src.?name", spec.StringProperty(), true}, // optional: absent omits the field
		{"dyn(src.count)", spec.StringProperty(), true},
		{"src.name", nil, true},
	}
	for _, tc := range cases {
		ast, err := env.Compile(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if _, got := env.Fit(FieldType(tc.into), ast.OutputType()); got != tc.want {
			t.Errorf("Fit(%s, %s) = %v, want %v", TypeName(FieldType(tc.into)), TypeString(ast.OutputType()), got, tc.want)
		}
	}
	// Port has no protocol field to give, but ServicePort lacks nothing Port
	// has; the other way round, protocol has nowhere to go.
	env2, err := New(Var{Name: "sp", Schema: arrayOf(servicePort)})
	if err != nil {
		t.Fatal(err)
	}
	ast, err := env2.Compile("sp")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := env2.Fit(FieldType(arrayOf(port)), ast.OutputType()); ok {
		t.Error("a ServicePort list must not fit a Port list: protocol has no place")
	}
	// Fit says where, when the misfit is inside the value.
	if why, _ := env2.Fit(FieldType(arrayOf(port)), ast.OutputType()); why != "which has no [*].protocol" {
		t.Errorf("Fit of a ServicePort list into a Port list = %q", why)
	}
	stringPort := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty(), "port": *spec.StringProperty()})
	if why, _ := env.Fit(FieldType(arrayOf(stringPort)), mustCompile(t, env, "src.ports").OutputType()); why != "whose [*].port takes string, not int" {
		t.Errorf("Fit of a field of another type = %q", why)
	}
	for expr, into := range map[string]*spec.Schema{"src.ports": arrayOf(servicePort), "src.count": spec.StringProperty()} {
		if why, _ := env.Fit(FieldType(into), mustCompile(t, env, expr).OutputType()); why != "" {
			t.Errorf("Fit(%s) = %q, want none: it fits, or the types differ at the top", expr, why)
		}
	}
}

func mustCompile(t *testing.T, env *Env, expr string) *cel.Ast {
	t.Helper()
	ast, err := env.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return ast
}

func TestSchemaOf(t *testing.T) {
	env, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]string{
		"'a'": "string", "1": "integer", "1.5": "number", "true": "boolean", "[1, 2]": "array",
		"{'a': 1}": "object", "timestamp('2024-01-01T00:00:00Z')": "string", "dyn(1)": "",
	} {
		ast, err := env.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		s, err := SchemaOf(ast.OutputType())
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if s.Type != want {
			t.Errorf("SchemaOf(%s) type = %q, want %q", expr, s.Type, want)
		}
	}
}

// A field an object lacks, or a name or function nothing declares, is told
// with the one meant or what there is.
func TestUnknownFieldsAndNamesSayWhatThereIs(t *testing.T) {
	scalar := func(typ string) spec.Schema { return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}}} }
	app := objectSchema(map[string]spec.Schema{
		"spec": *objectSchema(map[string]spec.Schema{"replicas": scalar("integer"), "image": scalar("string"), "name": scalar("string")}),
		// What YAML makes of a key written on.
		"flags": *objectSchema(map[string]spec.Schema{"true": scalar("boolean")}),
	})
	env, err := New(Var{Name: "schema", Schema: app}, Var{Name: "items", Schema: app, List: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want string }{
		{"schema.spec.replica", "undefined field 'replica': did you mean schema.spec.replicas?"},
		{"schema.spec.Image", "undefined field 'Image': did you mean schema.spec.image?"},
		{"schema.spec.zzzzz", "undefined field 'zzzzz': schema.spec has image, name, replicas"},
		{"schema.flags.on", `undefined field 'on': schema.flags has a field true instead: YAML reads the key on as the boolean true, quote it ("on": ...)`},
		// Operands bound by macros are typed as the checker types them.
		{"items.map(i, i.spec.replica)", "undefined field 'replica': did you mean i.spec.replicas?"},
		{"items.map(i, items.filter(j, j.spec.nme == i.spec.name))", "undefined field 'nme': did you mean j.spec.name?"},
		{"items.all(n, i, n > 0 && i.spec.replica > 0)", "undefined field 'replica': did you mean i.spec.replicas?"},
		{"{'a': schema.spec}.exists(k, v, k == v.nme)", "undefined field 'nme': did you mean v.name?"},
		{"cel.bind(s, schema.spec, s.imag)", "undefined field 'imag': did you mean s.image?"},
		{"cel.bind(s, items, s.map(i, i.spec.imag))", "undefined field 'imag': did you mean i.spec.image?"},
		{"schema.spec.?replica.orValue(1)", "undefined field 'replica': did you mean schema.spec.?replicas?"},
		{"items.all(i, i.spec.?imag.hasValue())", "undefined field 'imag': did you mean i.spec.?image?"},
		{"schema.?spec.imag.orValue('')", "undefined field 'imag': did you mean schema.?spec.image?"},
		// A range that does not compile types nothing.
		{"item.map(i, i.spec.replica)", "undeclared reference to 'item': did you mean items?"},
		// A name nothing declares: the one meant, or what there is.
		{"schem.spec.name", "undeclared reference to 'schem': did you mean schema?\n"},
		{"items.map(i, j.spec.name)", "undeclared reference to 'j': did you mean i?\n"},
		{"config.data.name", "undeclared reference to 'config': it can read items, schema\n"},
		{"items.map(entry, other)", "undeclared reference to 'other': it can read entry, items, schema\n"},
		// A function nothing declares: the one meant, if any.
		{"sise(items)", "undeclared reference to 'sise': did you mean size?\n"},
		{"schema.spec.name.lowerAcii()", "undeclared reference to 'lowerAcii': did you mean lowerAscii?\n"},
		{"frobnicate(items)", "undeclared reference to 'frobnicate'\n"},
		// A function as another language calls it.
		{"len(items)", "undeclared reference to 'len': CEL calls it size: size(items)\n"},
		{"str(schema.spec.replicas)", "undeclared reference to 'str': CEL calls it string: string(schema.spec.replicas)\n"},
		{"schema.spec.name.toUpperCase()", "undeclared reference to 'toUpperCase': CEL calls it upperAscii: schema.spec.name.upperAscii()\n"},
		{"lower(schema.spec.name + 'x')", "undeclared reference to 'lower': CEL calls it lowerAscii: (schema.spec.name + \"x\").lowerAscii()\n"},
		{"schema.spec.name.substr(1, 2)", "undeclared reference to 'substr': CEL calls it substring: schema.spec.name.substring(1, 2)\n"},
		{"items.length()", "undeclared reference to 'length': CEL calls it size: size(items)\n"},
		{"upper()", "undeclared reference to 'upper': CEL calls it upperAscii\n"},
		{"schema.spec.name.isEmpty()", "undeclared reference to 'isEmpty': CEL calls it size: size(schema.spec.name) == 0\n"},
		{"schema.spec.name.replaceAll('a', 'b')", "undeclared reference to 'replaceAll': CEL calls it replace: schema.spec.name.replace(\"a\", \"b\")\n"},
		{"['a', 'b'].includes(schema.spec.name)", "undeclared reference to 'includes': CEL calls it in: schema.spec.name in [\"a\", \"b\"]\n"},
		{"schema.spec.name.includes('a')", "undeclared reference to 'includes': CEL calls it contains: schema.spec.name.contains(\"a\")\n"},
		// A list asked as a string is, and a field compared with null.
		{"['a', 'b'].contains(schema.spec.name)", "found no matching overload for 'contains' applied to 'list(string).(string)': CEL asks whether a list holds a value with in: schema.spec.name in [\"a\", \"b\"]\n"},
		{"schema.spec.name == null", "applied to '(string, null)': a field is never null: CEL asks whether it is set with has(...): !has(schema.spec.name)\n"},
		{"null != schema.spec.image", "applied to '(null, string)': a field is never null: CEL asks whether it is set with has(...): has(schema.spec.image)\n"},
		{"schema.spec.name != nil", "undeclared reference to 'nil': CEL writes null, and a field is never null: CEL asks whether it is set with has(...): has(schema.spec.name)\n"},
		{"items.length > 0", "type 'list(object (items))' does not support field selection: CEL gives a length with size: size(items)\n"},
		{"schema.spec.name.count", "does not support field selection: CEL gives a length with size: size(schema.spec.name)\n"},
		{"schema.spec.name.first", "type 'string' does not support field selection\n"},
		// A library's function without its namespace.
		{"sha256(schema.spec.name)", "undeclared reference to 'sha256': did you mean hash.sha256?\n"},
		{"marshal(schema.spec)", "undeclared reference to 'marshal': did you mean json.marshal?\n"},
		// Operands of two types: how to make them one.
		{`schema.spec.name + "-" + schema.spec.replicas`, "applied to '(string, int)': + joins strings and adds numbers, never one to the other: convert the int with string(...) to join them, or the string with int(...) to add them\n"},
		{`schema.spec.name + (schema.spec.replicas > 1)`, "applied to '(string, bool)': + joins strings and adds numbers, never one to the other: convert the bool with string(...)\n"},
		{`schema.spec.replicas + 0.5`, "applied to '(int, double)': + adds numbers of one type only: convert one of them, with int(...) or double(...)\n"},
		{`schema.spec.replicas * 1.5`, "applied to '(int, double)': * works on numbers of one type only: convert one of them, with int(...) or double(...)\n"},
		{`schema.spec.name / 2`, "applied to '(string, int)': / works on numbers, not text: convert the string with int(...)\n"},
		{`schema.spec - 1`, "applied to '(object (schema.spec), int)'\n"},
		{`schema.spec.replicas == "3"`, "applied to '(int, string)': CEL compares values of one type only: convert the string with int(...), or the int with string(...)\n"},
		{`(schema.spec.replicas > 1) == "yes"`, "applied to '(bool, string)': CEL compares values of one type only: convert the string with bool(...), or the bool with string(...)\n"},
		{`[1] + "a"`, "applied to '(list(int), string)'\n"},
		// A map, list or object made text, and ? : of two types.
		{`string(schema.spec)`, "applied to '(object (schema.spec))': string(...) converts a scalar; json.marshal(...) writes a map, list or object as JSON text\n"},
		{`string(items)`, ": string(...) converts a scalar; json.marshal(...) writes"},
		{`string({"a": 1})`, ": string(...) converts a scalar; json.marshal(...) writes"},
		{`schema.spec.replicas > 1 ? 1 : "two"`, "applied to '(bool, int, string)': both results of ? : must have one type, not int and string: convert the int with string(...)\n"},
		{`schema.spec.replicas > 1 ? schema.spec : 0`, "applied to '(bool, object (schema.spec), int)': both results of ? : must have one type, not object (schema.spec) and int\n"},
		// An optional's value, compared or added as the value itself.
		{`schema.spec.?name != ""`, `applied to '(optional_type(string), string)': .? selects an optional, which compares only with another optional: take its value with .orValue(""), "" when the field is not there, or ask whether it is there with .hasValue()` + "\n"},
		{`1 < schema.spec.?replicas`, "applied to '(int, optional_type(int))': .? selects an optional, which compares only with another optional: take its value with .orValue(0)"},
		{`schema.spec.?name + "-x"`, ".? selects an optional, which adds only with another optional: take its value with .orValue(\"\")"},
		{`schema.?spec == schema`, ": .? selects an optional, which compares only with another optional: take its value with .orValue(v), v standing for a field that is not there, or ask"},
		// Each of two errors gets its own, in the order of the source.
		{"schema.spec.nme + schema.spec.imag", "undefined field 'nme': did you mean schema.spec.name?\n | schema.spec.nme + schema.spec.imag\n | ...........^\nERROR: <input>:1:30: undefined field 'imag': did you mean schema.spec.image?"},
	} {
		_, err := env.Compile(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
}

// A Compiler compiles and plans what its environment does, and reports an
// expression that does not compile, if without the hints its environment
// gives.
func TestCompilerCompilesAsItsEnvironment(t *testing.T) {
	scalar := func(typ string) spec.Schema { return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}}} }
	app := objectSchema(map[string]spec.Schema{"spec": *objectSchema(map[string]spec.Schema{"replicas": scalar("integer")})})
	env, err := New(Var{Name: "schema", Schema: app})
	if err != nil {
		t.Fatal(err)
	}
	c := env.Compiler()
	ast, err := c.Compile("schema.spec.replicas + 1")
	if err != nil {
		t.Fatal(err)
	}
	prg, err := c.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := prg.Eval(map[string]any{"schema": map[string]any{"spec": map[string]any{"replicas": int64(2)}}}); err != nil || out.Value() != int64(3) {
		t.Errorf("evaluated to %v, %v; want 3", out, err)
	}
	if _, err := c.Compile("schema.spec.replica"); err == nil || !strings.Contains(err.Error(), "undefined field 'replica'") {
		t.Errorf("a misspelt field compiled: %v", err)
	}
}

// Strings are formatted as in kro's environment, which has cel-go's strings
// extension at its latest version, not at the API server's version 2: the
// same template renders the same text under either controller.
func TestStringsAreFormattedAsKroFormatsThem(t *testing.T) {
	env, err := New(Var{Name: "schema", Schema: objectSchema(map[string]spec.Schema{
		"hosts": *arrayOf(&spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}),
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want string }{
		{`"%s".format([schema.hosts])`, "[a.example, b.example]"},
		{`"%s".format([{"k": "v"}])`, "{k: v}"},
		{`"%s".format([[1, "a", 2.5]])`, "[1, a, 2.5]"},
		{`"%d".format([2.0])`, "2"},
		{`"%f".format([2])`, "2.000000"},
		{`"%e".format([1234.5])`, "1.234500e+03"},
		{`"%s".format([1e20])`, "100000000000000000000"},
		{`"%s".format([double("Infinity")])`, "Infinity"},
		{`"héllo".reverse()`, "olléh"},
		{`"%s-%d".format(["web", 3])`, "web-3"},
	} {
		prg := program(t, env, tc.src)
		if prg == nil {
			continue
		}
		if got, ok := evalString(t, prg, tc.src, map[string]any{"schema": map[string]any{"hosts": []any{"a.example", "b.example"}}}); ok && got != tc.want {
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
	}
	// A clause its argument cannot take is still refused when compiled.
	if _, err := env.Compile(`"%d".format(["x"])`); err == nil || !strings.Contains(err.Error(), "decimal clause can only be used on ints, uints, and doubles") {
		t.Errorf(`"%%d".format(["x"]) compiled, or failed otherwise: %v`, err)
	}
}

// Error messages name an object by the variable path it comes from, not by
// the type name the environment gives it inside.
func TestTypeStringNamesObjectsByPath(t *testing.T) {
	port := objectSchema(map[string]spec.Schema{"port": *spec.Int64Property()})
	src := objectSchema(map[string]spec.Schema{
		"spec":  *objectSchema(map[string]spec.Schema{"ports": *arrayOf(port)}),
		"byKey": *spec.MapProperty(port),
		"name":  *spec.StringProperty(),
	})
	env, err := New(Var{Name: "deploy", Schema: src})
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]string{
		"deploy":             "object (deploy)",
		"deploy.spec":        "object (deploy.spec)",
		"deploy.spec.ports":  "list(object (deploy.spec.ports[*]))",
		"deploy.byKey":       "map(string, object (deploy.byKey[*]))",
		"deploy.?spec":       "optional_type(object (deploy.spec))",
		"deploy.name":        "string",
		"[deploy.name]":      "list(string)",
		"{'a': deploy.spec}": "map(string, object (deploy.spec))",
	} {
		ast, err := env.Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := TypeString(ast.OutputType()); got != want {
			t.Errorf("TypeString(%s) = %q, want %q", expr, got, want)
		}
	}
}

// CEL's own messages name the objects of variables as the user knows them.
func TestIssuesNameObjectsByPath(t *testing.T) {
	env, err := New(Var{Name: "cm", Schema: objectSchema(map[string]spec.Schema{"metadata": *objectSchema(map[string]spec.Schema{"name": *spec.StringProperty()})})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.Compile("cm.metadata + 1 == 2 && [1].all(x, x > 0)")
	if err == nil || !strings.Contains(err.Error(), "found no matching overload for '_+_' applied to '(object (cm.metadata), int)'") {
		t.Errorf("got %v", err)
	}
	if got := UserTypeNames("list(__result__) and __workers__.spec.@idx.ports.@elem"); got != "list(__result__) and object (workers.spec[*].ports[*])" {
		t.Errorf("UserTypeNames = %q", got)
	}
}

// A comprehension over a map ranges over its keys in sorted order, whatever
// made the map, so that the lists and strings made from it are the same at
// every evaluation: an instance's forEach items and rendered objects must
// not change while the instance does not.
func TestComprehensionsRangeOverMapsInKeyOrder(t *testing.T) {
	quotas := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"},
		AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"integer"}}}}}}
	env, err := New(Var{Name: "schema", Schema: objectSchema(map[string]spec.Schema{"quotas": *quotas})})
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"schema": map[string]any{"quotas": map[string]any{"pods": 3, "cpu": 1, "zz": 6, "mem": 2, "aa": 7, "svc": 5}}}
	for _, tc := range []struct{ src, want string }{
		{`schema.quotas.map(k, k).join(",")`, "aa,cpu,mem,pods,svc,zz"},
		{`dyn(schema.quotas).filter(k, schema.quotas[k] > 2).join(",")`, "aa,pods,svc,zz"},
		{`schema.quotas.transformList(k, v, k + "=" + string(v)).join(",")`, "aa=7,cpu=1,mem=2,pods=3,svc=5,zz=6"},
		{`{"b": 1, "d": 2, "a": 3, "c": 4, "e": 5}.map(k, k).join(",")`, "a,b,c,d,e"},
		{`{"b": 1, "d": 2}.merge({"a": 3, "c": 4, "e": 5}).map(k, k).join(",")`, "a,b,c,d,e"},
		{`json.unmarshal('{"b": 1, "d": 2, "a": 3, "c": 4, "e": 5}').map(k, k).join(",")`, "a,b,c,d,e"},
		{`schema.quotas.transformMap(k, v, v * 2).transformList(k, v, k + "=" + string(v)).join(",")`, "aa=14,cpu=2,mem=4,pods=6,svc=10,zz=12"},
		{`[{"y": 1, "x": 2, "w": 3}, {"b": 1, "a": 2}].map(m, m.map(k, k).join("")).join(",")`, "wxy,ab"},
		{`{10: "a", 9: "b", 2: "c", 100: "d"}.map(k, string(k)).join(",")`, "2,9,10,100"},
		{`{true: "a", false: "b"}.map(k, string(k)).join(",")`, "false,true"},
		{`{"s": 1, 2: 2, true: 3, 1u: 4}.map(k, string(k)).join(",")`, "true,1,2,s"},
	} {
		prg := program(t, env, tc.src)
		if prg == nil {
			continue
		}
		for range 20 {
			if got, ok := evalString(t, prg, tc.src, vars); ok && got != tc.want {
				t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
				break
			}
		}
	}
}

// program compiles src in env and plans it, or says why it could not.
func program(t *testing.T, env *Env, src string) cel.Program {
	t.Helper()
	ast, err := env.Compile(src)
	if err != nil {
		t.Errorf("%s: %v", src, err)
		return nil
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Errorf("%s: %v", src, err)
		return nil
	}
	return prg
}

// evalString evaluates prg, whose source is src, to a string, or says why
// it could not.
func evalString(t *testing.T, prg cel.Program, src string, vars map[string]any) (string, bool) {
	t.Helper()
	out, _, err := prg.Eval(vars)
	if err != nil {
		t.Errorf("%s: %v", src, err)
		return "", false
	}
	got, ok := out.Value().(string)
	if !ok {
		t.Errorf("%s = %v (%T), want a string", src, out.Value(), out.Value())
	}
	return got, ok
}

func TestZeroLiteral(t *testing.T) {
	for _, tc := range []struct {
		t    *cel.Type
		want string
		ok   bool
	}{
		{cel.StringType, `""`, true},
		{cel.IntType, "0", true},
		{cel.UintType, "0u", true},
		{cel.DoubleType, "0.0", true},
		{cel.BoolType, "false", true},
		{cel.ListType(cel.StringType), "[]", true},
		{cel.MapType(cel.StringType, cel.IntType), "{}", true},
		{cel.TimestampType, "", false},
		{nil, "", false},
	} {
		if got, ok := ZeroLiteral(tc.t); got != tc.want || ok != tc.ok {
			t.Errorf("ZeroLiteral(%v) = %q, %v; want %q, %v", tc.t, got, ok, tc.want, tc.ok)
		}
	}
}
