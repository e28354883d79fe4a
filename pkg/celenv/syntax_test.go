package celenv

import (
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// An operator of another language (= for ==, and for &&) is answered with
// what CEL writes, and the expression so written, in place of the parser's
// errors that follow from it; a mistake the rewrite does not mend keeps the
// parser's words alone.
func TestOperatorsOfOtherLanguagesSayWhatCELWrites(t *testing.T) {
	scalar := func(typ string) spec.Schema { return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}}} }
	app := objectSchema(map[string]spec.Schema{
		"spec": *objectSchema(map[string]spec.Schema{"replicas": scalar("integer"), "name": scalar("string")}),
	})
	env, err := New(Var{Name: "schema", Schema: app})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, want string
	}{
		{`schema.spec.name = "fast"`, "ERROR: <input>:1:18: Syntax error: token recognition error at: '= ': CEL writes == for =: ${schema.spec.name == \"fast\"}\n | schema.spec.name = \"fast\"\n | .................^"},
		{`schema.spec.replicas > 1 and schema.spec.name != ""`, `: CEL writes && for and: ${schema.spec.replicas > 1 && schema.spec.name != ""}`},
		{`not (schema.spec.replicas > 1) or schema.spec.name == "a = b"`, `: CEL writes ! for not, || for or: ${! (schema.spec.replicas > 1) || schema.spec.name == "a = b"}`},
		{`schema.spec.replicas === 1 & schema.spec.replicas <> 2`, `: CEL writes == for ===, && for &, != for <>: ${schema.spec.replicas == 1 && schema.spec.replicas != 2}`},
		{`schema.spec.name == 'it\'s | x' | true`, `: CEL writes || for |: ${schema.spec.name == 'it\'s | x' || true}`},
		// Doubled braces, as GitHub Actions writes its expressions.
		{`{ schema.spec.name }`, `: ${{ }} is written ${ }: ${schema.spec.name}`},
		// Lambdas, as JavaScript and Java write them.
		{`schema.spec.name.split(",").exists(p => p == "a => b")`, `: CEL's macros take the variable and the expression as two arguments: ${schema.spec.name.split(",").exists(p, p == "a => b")}`},
		{`schema.spec.name.split(",").map(p -> p + "(x -> y)")`, `: ${schema.spec.name.split(",").map(p, p + "(x -> y)")}`},
		// Written over two lines, as a YAML block may hold it: the hint
		// stays on one.
		{"schema.spec.replicas > 1 and\nschema.spec.name != 'a\\nb'", `: CEL writes && for and: ${schema.spec.replicas > 1 && schema.spec.name != 'a\nb'}` + "\n"},
		// A templating language's pipe to a filter, and ??.
		{`schema.spec.name | lower`, `: CEL has no pipes: call the function on the value: ${schema.spec.name.lowerAscii()}`},
		{`schema.spec.name + "-x" | upper | trim`, `: CEL has no pipes: call the function on the value: ${(schema.spec.name + "-x").upperAscii().trim()}`},
		{`schema.spec.name ?? "none"`, `: CEL has no ??: select what may be absent with .? (or [?...]) and give the default with orValue: ${schema.spec.?name.orValue("none")}`},
		{`schema.spec.items[0] ?? 'a ?? b'`, `: ${schema.spec.items[?0].orValue('a ?? b')}`},
		// ${ } around names inside an expression, as in a template.
		{`schema.spec.replicas > 1 ? ${schema.spec.name} + "-x" : "none"`, `Syntax error: token recognition error at: '$': inside ${...} values are named without ${ }: ${schema.spec.replicas > 1 ? schema.spec.name + "-x" : "none"}`},
		{`${schema.spec.name} = "a" && {"k": 1}.k == 1`, `: inside ${...} values are named without ${ }, and CEL writes == for =: ${schema.spec.name == "a" && {"k": 1}.k == 1}`},
	} {
		_, err := env.Compile(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want it to contain %q", tc.src, err, tc.want)
			continue
		}
		if n := strings.Count(err.Error(), "Syntax error"); n != 1 {
			t.Errorf("Compile(%q) = %v: %d syntax errors, want the first alone", tc.src, err, n)
		}
	}
	for _, src := range []string{
		`schema.spec.name = = "fast"`, // not mended by ==
		`schema.spec.name ==`,         // no foreign operator
		`schema.spec.and(1)`,          // a function of that name
	} {
		_, err := env.Compile(src)
		if err == nil || strings.Contains(err.Error(), "CEL writes") {
			t.Errorf("Compile(%q) = %v, want the parser's error alone", src, err)
		}
	}
}

// Compile never panics on any text, the rewrite of foreign operators
// included, and a hint it gives holds an expression that parses.
func FuzzCompileText(f *testing.F) {
	for _, seed := range []string{`a = "b"`, `x and y`, `'it\'s' | """a"""`, `not (1 <> 2)`, `"unterminated`, `'''`, `r"\"" = 1`, `a.b | lower | trim`, `a[0] ?? "x"`, `a.exists(i => i)`, "n&A0(    \n0)"} {
		f.Add(seed)
	}
	env, err := New(Var{Name: "a"}, Var{Name: "x"}, Var{Name: "y"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := env.Compile(src)
		if err == nil {
			return
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		if !strings.Contains(first, ": CEL writes ") && !strings.Contains(first, "values are named without ${ }") && !strings.Contains(first, ": CEL has no ") && !strings.Contains(first, "is written ${ }") && !strings.Contains(first, "macros take the variable") {
			return
		}
		at := strings.LastIndex(first, ": ${")
		if at < 0 {
			t.Fatalf("Compile(%q) = %v: a hint without the expression rewritten", src, err)
		}
		rewritten := strings.TrimSuffix(first[at+len(": ${"):], "}")
		if _, iss := env.env.Parse(rewritten); iss.Err() != nil {
			t.Errorf("Compile(%q) offers %q, which does not parse: %v", src, rewritten, iss.Err())
		}
	})
}
