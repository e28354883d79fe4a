package celenv

import (
	"fmt"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Misfits finds every part of a value its type does not take, in the
// order of their paths, and costs a value that fits no allocation: every
// reconcile checks its instance's spec.
func TestMisfits(t *testing.T) {
	port := objectSchema(map[string]spec.Schema{"name": *spec.StringProperty(), "port": *spec.Int64Property()})
	want := FieldType(objectSchema(map[string]spec.Schema{
		"count": *spec.StringProperty(),
		"on":    *spec.BooleanProperty(),
		"ports": *arrayOf(port),
		"tags":  *spec.MapProperty(spec.StringProperty()),
		// Named as no CEL identifier: its type names it escaped.
		"max-count": *spec.Int64Property(),
	}))
	v := map[string]any{
		"count":     int64(3),
		"on":        true,
		"ports":     []any{map[string]any{"name": "a", "port": int64(80)}, map[string]any{"name": int64(2), "port": "81"}, "x"},
		"tags":      map[string]any{"b": "ok", "a": false},
		"other":     int64(1), // not declared: the API server's to judge
		"max-count": "3",
	}
	var got []string
	for _, m := range Misfits(want, v) {
		got = append(got, fmt.Sprintf("%s %s", m.At, m.Describe()))
	}
	wantAll := []string{
		`count holds 3 (an int), where string is expected`,
		`max-count holds "3" (a string), where int is expected`,
		`ports[1].name holds 2 (an int), where string is expected`,
		`ports[1].port holds "81" (a string), where int is expected`,
		`ports[2] holds "x" (a string), where an object is expected`,
		`tags.a holds false (a bool), where string is expected`,
	}
	if fmt.Sprint(got) != fmt.Sprint(wantAll) {
		t.Errorf("Misfits =\n%q\nwant\n%q", got, wantAll)
	}
	if err := ValueFits(want, v); err == nil || err.Error() != `holds 3 (an int) at count, where string is expected` {
		t.Errorf("ValueFits = %v, want the first misfit", err)
	}

	fits := map[string]any{"count": "3", "ports": []any{map[string]any{"name": "a", "port": int64(80)}}, "tags": map[string]any{"a": "b"}}
	if m := Misfits(want, fits); m != nil {
		t.Errorf("Misfits of a value that fits = %v", m)
	}
	if n := testing.AllocsPerRun(100, func() { Misfits(want, fits) }); n != 0 {
		t.Errorf("Misfits of a value that fits allocates %v times", n)
	}
}
