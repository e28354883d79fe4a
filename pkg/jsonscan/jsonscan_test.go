package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestMembersGivesEachMembersSpan(t *testing.T) {
	data := []byte(` {"kind":"ConfigMap", "metadata" : {"name":"a","managedFields":[{"f:x":{}}]},"data":{"k":"v\"q"},"n":-1.5e3,"ok":true,"none":null} `)
	members, err := Members(data)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
		got[m.Name] = string(data[m.ValueStart:m.End])
	}
	if want := []string{"kind", "metadata", "data", "n", "ok", "none"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if got["metadata"] != `{"name":"a","managedFields":[{"f:x":{}}]}` || got["data"] != `{"k":"v\"q"}` || got["n"] != "-1.5e3" {
		t.Errorf("values = %v", got)
	}
	if s, err := String([]byte(got["kind"])); err != nil || s != "ConfigMap" {
		t.Errorf("String(kind) = %q, %v", s, err)
	}
}

func TestWithoutDropsMembersAndKeepsTheRest(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"managedFields":[1],"name":"a"}`, `{"name":"a"}`},
		{`{"name":"a","managedFields":[1]}`, `{"name":"a"}`},
		{`{"name":"a","managedFields":[1],"uid":"u"}`, `{"name":"a","uid":"u"}`},
		{`{"managedFields":[1]}`, `{}`},
		{`{}`, `{}`},
	} {
		data := []byte(tc.in)
		members, err := Members(data)
		if err != nil {
			t.Fatal(err)
		}
		got := Without(data, members, func(m Member) bool { return m.Name == "managedFields" })
		if string(got) != tc.want {
			t.Errorf("Without(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestMembersRejectsWhatIsNotAnObject(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"s"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}x`, `{"a":tru}`, `{"a":01}`,
		`{"a":"x` + "\x01" + `"}`, `{"a":"\q"}`, `{"a":"\u12"}`, `{"a":[1,]}`, `{"a":{"b":1,}}`, `{a:1}`,
		`{"a":1.}`, `{"a":-}`, `{"a":1e}`,
		`{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
	} {
		if _, err := Members([]byte(in)); err == nil {
			t.Errorf("Members(%.40q) accepted it", in)
		} else if json.Valid([]byte(in)) && strings.HasPrefix(in, "{") {
			t.Errorf("Members(%.40q) = %v, but it is a valid object", in, err)
		}
	}
}

// FuzzMembers checks Members and Without against encoding/json: an object
// is accepted exactly when encoding/json accepts it, each member's value is
// what encoding/json decodes for that name, and Without leaves the same
// object less the members it drops. Numbers are compared as written: one too
// large for a float64 is valid JSON all the same.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b","labels":{"x":"y"},"managedFields":[{"manager":"m"}]},"data":{"k":"v"}}`,
		`{"a":[1,2,{"b":null}],"c":"\u00e9\n","d":-0.5E+2,"a":false}`,
		` { } `, `{"":""}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[1]`, `{"a":1,}`, `{"":5E666}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		members, err := Members(data)
		var want map[string]any
		wantErr := decode(data, &want)
		if wantErr == nil && want == nil {
			wantErr = errNull // "null" decodes into a nil map; it is no object
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Members(%q): error %v, encoding/json: %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		got := map[string]any{}
		for _, m := range members {
			var v any
			if err := decode(data[m.ValueStart:m.End], &v); err != nil {
				t.Fatalf("member %q: value %q: %v", m.Name, data[m.ValueStart:m.End], err)
			}
			got[m.Name] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Members(%q) gives %v, encoding/json %v", data, got, want)
		}
		drop := func(m Member) bool { return len(m.Name)%2 == 0 }
		out := Without(data, members, drop)
		var less map[string]any
		if err := decode(out, &less); err != nil {
			t.Fatalf("Without(%q) = %q: %v", data, out, err)
		}
		for k := range want {
			if len(k)%2 == 0 {
				delete(want, k)
			}
		}
		if !reflect.DeepEqual(less, want) && !(len(less) == 0 && len(want) == 0) {
			t.Fatalf("Without(%q) = %v, want %v", data, less, want)
		}
		if bytes.Contains(out, []byte("\n")) && !bytes.Contains(data, []byte("\n")) {
			t.Fatalf("Without(%q) added a newline", data)
		}
	})
}

func TestElementsGivesEachElement(t *testing.T) {
	got, err := Elements([]byte(` [ {"a":[1,2]}, "s" ,-1, null,[] ] `))
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	for _, e := range got {
		strs = append(strs, string(e))
	}
	if want := []string{`{"a":[1,2]}`, `"s"`, `-1`, `null`, `[]`}; !reflect.DeepEqual(strs, want) {
		t.Errorf("Elements = %q, want %q", strs, want)
	}
	if got, err := Elements([]byte(`[]`)); err != nil || len(got) != 0 {
		t.Errorf("Elements([]) = %q, %v", got, err)
	}
	for _, in := range []string{``, `{}`, `null`, `[`, `[1,]`, `[1]x`, `[01]`} {
		if _, err := Elements([]byte(in)); err == nil {
			t.Errorf("Elements(%q) accepted it", in)
		}
	}
}

// FuzzElements checks Elements against encoding/json: an array is accepted
// exactly when encoding/json decodes it into a slice, with the same
// elements.
func FuzzElements(f *testing.F) {
	for _, seed := range []string{
		`[{"kind":"ConfigMap","metadata":{"name":"a"}},{"kind":"Secret"}]`,
		`[]`, ` [ 1 , "a\"b" , [null] ] `, `null`, `[1,]`, `{}`, "[\"\xff\"]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Elements(data)
		var want []json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		if wantErr == nil && want == nil {
			wantErr = errNull // "null" decodes into a nil slice; it is no array
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Elements(%q): error %v, encoding/json: %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("Elements(%q) gives %d elements, encoding/json %d", data, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("Elements(%q)[%d] = %q, encoding/json %q", data, i, got[i], want[i])
			}
		}
		// EachElement visits the same, and stops where it is told to.
		var visited [][]byte
		if err := EachElement(data, func(e []byte) bool { visited = append(visited, e); return len(visited) < 2 }); err != nil {
			t.Fatalf("EachElement(%q): %v", data, err)
		}
		if len(visited) != min(len(got), 2) {
			t.Fatalf("EachElement(%q) visited %d elements, want %d", data, len(visited), min(len(got), 2))
		}
		for i := range visited {
			if !bytes.Equal(visited[i], got[i]) {
				t.Fatalf("EachElement(%q) visited %q as element %d, Elements gives %q", data, visited[i], i, got[i])
			}
		}
	})
}

// Leading reads the first members of an object and nothing after them: the
// rest, checked by whoever checked the whole, may hold anything.
func TestLeadingReadsOnlyTheFirstMembers(t *testing.T) {
	data := []byte(` {"manager":"kro-agent", "operation" : "Apply","fieldsV1": {"f:x"`)
	got, err := Leading(data, 2)
	if err != nil || len(got) != 2 || got[0].Name != "manager" || string(data[got[1].ValueStart:got[1].End]) != `"Apply"` {
		t.Errorf("Leading = %+v, %v", got, err)
	}
	if got, err := Leading([]byte(`{"a":1}`), 2); err != nil || len(got) != 1 {
		t.Errorf("Leading of one member = %+v, %v", got, err)
	}
	if got, err := Leading([]byte(`{}`), 2); err != nil || len(got) != 0 {
		t.Errorf("Leading of no member = %+v, %v", got, err)
	}
	for _, in := range []string{``, `[]`, `{"a"}`, `{"a":}`, `{"a":1 "b":2}`} {
		if _, err := Leading([]byte(in), 2); err == nil {
			t.Errorf("Leading(%q) accepted it", in)
		}
	}
}

// decode is json.Unmarshal with numbers kept as written (json.Number).
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("after the value: %v", err)
	}
	return nil
}

var errNull = jsonNull{}

type jsonNull struct{}

func (jsonNull) Error() string { return "null" }
