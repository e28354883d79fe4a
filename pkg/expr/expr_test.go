package expr

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestParse(t *testing.T) {
	e := func(s string) Segment { return Segment{Expr: s, IsExpr: true} }
	l := func(s string) Segment { return Segment{Literal: s} }
	cases := []struct {
		in   string
		want []Segment
	}{
		{"plain", []Segment{l("plain")}},
		{"", []Segment{l("")}},
		{"${schema.spec.name}", []Segment{e("schema.spec.name")}},
		{"${ a }", []Segment{e("a")}},
		{"name-${a}-${b}", []Segment{l("name-"), e("a"), l("-"), e("b")}},
		{"${a}${b}", []Segment{e("a"), e("b")}},
		{"$${not} ${x}", []Segment{l("${not} "), e("x")}},
		{`${ {"k": "}"}["k"] }`, []Segment{e(`{"k": "}"}["k"]`)}},
		{`${'}' + "\"}"}`, []Segment{e(`'}' + "\"}"`)}},
		{`${"""a}"""}`, []Segment{e(`"""a}"""`)}},
		{"cost $5", []Segment{l("cost $5")}},
	}
	for _, tc := range cases {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	if !IsStandalone([]Segment{e("x")}) || IsStandalone([]Segment{l("a"), e("x")}) {
		t.Error("IsStandalone is wrong")
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"${":            "unterminated expression",
		"a-${b":         "unterminated expression",
		"${}":           "empty expression",
		`${"abc}`:       "unterminated string literal",
		`${"""abc}`:     "unterminated string literal",
		"${ {a: 1 }":    "unterminated expression",
		"ok ${x} ${  }": "empty expression",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestFind(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "${schema.spec.name}-web", "labels": map[string]any{"a.b/c": "${x}"}},
		"spec": map[string]any{
			"replicas": "${schema.spec.replicas}",
			"ports":    []any{map[string]any{"port": int64(80)}, map[string]any{"port": "${p}"}},
			"plain":    "no expression",
		},
	}
	fields, errs := Find(obj, field.NewPath("spec", "resources").Index(0).Child("template"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var paths []string
	for _, f := range fields {
		paths = append(paths, f.Path.String())
	}
	want := []string{`metadata.labels["a.b/c"]`, "metadata.name", "spec.ports[1].port", "spec.replicas"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
	if !fields[3].Standalone() || fields[1].Standalone() {
		t.Error("standalone detection is wrong")
	}
	if got := fields[2].Path.FieldPath(field.NewPath("t")).String(); got != "t.spec.ports[1].port" {
		t.Errorf("field path = %s", got)
	}
}

// A key that is no plain name is written as a map key in error lists, so
// its dots do not read as fields.
func TestFieldPathWritesMapKeys(t *testing.T) {
	p := Path{{Key: "metadata"}, {Key: "annotations"}, {Key: "app.kubernetes.io/name"}}
	if got := p.FieldPath(field.NewPath("t")).String(); got != "t.metadata.annotations[app.kubernetes.io/name]" {
		t.Errorf("field path = %s", got)
	}
	p = Path{{Key: "data"}, {Key: "my-key"}}
	if got := p.FieldPath(field.NewPath("t")).String(); got != "t.data.my-key" {
		t.Errorf("field path = %s", got)
	}
}

func TestFindRefusesExpressionKeys(t *testing.T) {
	_, errs := Find(map[string]any{"data": map[string]any{"${k}": "v"}}, field.NewPath("tpl"))
	if len(errs) != 1 || errs[0].Field != "tpl.data[${k}]" || !strings.Contains(errs[0].Detail, "map keys") {
		t.Fatalf("errs = %v", errs)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"${a}", "x-${a}-${b}", "$${a}", `${"}"}`, "${'''}'''}", "${", "${{}}", `${"\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := Parse(s)
		if err != nil {
			return
		}
		if len(segs) == 0 {
			t.Fatal("no segments for a string that parsed")
		}
		for _, seg := range segs {
			if seg.IsExpr && strings.TrimSpace(seg.Expr) == "" {
				t.Fatalf("empty expression from %q", s)
			}
		}
	})
}

// A path has the prefixes it begins with, itself included; an index and a
// key are different steps even where they print alike.
func TestHasPrefix(t *testing.T) {
	p := Path{}.Child("status").Child("items").Index(0)
	for _, tc := range []struct {
		prefix Path
		want   bool
	}{
		{nil, true},
		{Path{}.Child("status"), true},
		{p, true},
		{p.Child("name"), false},
		{Path{}.Child("spec"), false},
		{Path{}.Child("status").Child("items").Child("0"), false},
	} {
		if got := p.HasPrefix(tc.prefix); got != tc.want {
			t.Errorf("%s.HasPrefix(%s) = %v, want %v", p, tc.prefix, got, tc.want)
		}
	}
}
