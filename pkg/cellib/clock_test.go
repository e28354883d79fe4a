package cellib_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/cellib"
)

// at evaluates src at now, with schema.spec.openAt and closeAt typed as
// timestamps (as an RGD's date-time fields are) and ttl as a duration, and
// returns the value as written into an object and when its answer turns.
func at(t *testing.T, src string, now time.Time) (any, time.Time, error) {
	t.Helper()
	str := func(format string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Format: format}}
	}
	schema := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"openAt": str("date-time"), "closeAt": str("date-time"), "ttl": str("duration"), "name": str(""),
	}}}
	prg := program(t, schema, src)
	clock := cellib.NewClock(now)
	vars := map[string]any{
		"schema": map[string]any{
			"openAt":  mustTime(t, "2026-12-05T12:00:00Z"),
			"closeAt": mustTime(t, "2026-12-05T14:00:00Z"),
			"ttl":     time.Hour,
			"name":    "x",
		},
		cellib.ClockVar: clock,
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return nil, time.Time{}, err
	}
	v, err := cellib.Native(out)
	next, _ := clock.NextChange()
	return v, next, err
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTimeNowAnswersAndSaysWhenTheAnswerTurns(t *testing.T) {
	now := mustTime(t, "2026-12-05T11:00:00Z")
	for _, tc := range []struct {
		src  string
		want any
		// next is when the answer turns; "" for never.
		next string
	}{
		{`time.now() > schema.openAt`, false, "2026-12-05T12:00:00.000000001Z"},
		{`time.now() >= schema.openAt`, false, "2026-12-05T12:00:00.000000001Z"},
		{`schema.openAt <= time.now()`, false, "2026-12-05T12:00:00.000000001Z"},
		{`schema.openAt > time.now()`, true, "2026-12-05T12:00:00.000000001Z"},
		{`schema.openAt <= time.now() && time.now() < schema.closeAt`, false, "2026-12-05T12:00:00.000000001Z"},
		// Both crossings are ahead: the first one counts.
		{`time.now() < schema.closeAt`, true, "2026-12-05T14:00:00.000000001Z"},
		// Durations: the time left, on either side of the subtraction.
		{`schema.openAt - time.now() < duration("30m")`, false, "2026-12-05T11:30:00.000000001Z"},
		{`time.now() - schema.openAt > duration("-30m")`, false, "2026-12-05T11:30:00.000000001Z"},
		{`duration("30m") > schema.openAt - time.now()`, false, "2026-12-05T11:30:00.000000001Z"},
		{`time.now() + schema.ttl >= schema.openAt - duration("1m")`, true, ""},
		{`schema.ttl + time.now() > schema.closeAt`, false, "2026-12-05T13:00:00.000000001Z"},
		{`time.now() - schema.ttl > schema.openAt - duration("3h")`, true, ""},
		{`-(schema.openAt - time.now()) > duration("1m")`, false, "2026-12-05T12:01:00.000000001Z"},
		{`schema.closeAt - schema.ttl - time.now() < duration("0s")`, false, "2026-12-05T13:00:00.000000001Z"},
		// A crossing passed already turns nothing.
		{`time.now() > timestamp("2020-01-01T00:00:00Z")`, true, ""},
		// Two values of now: the same line, or lines that never cross.
		{`time.now() == time.now()`, true, ""},
		{`time.now() + duration("1s") > time.now()`, true, ""},
		// Written out, the value at the reconcile's time; nothing turns.
		{`string(time.now())`, "2026-12-05T11:00:00Z", ""},
		{`string(timestamp(time.now() + duration("90m")))`, "2026-12-05T12:30:00Z", ""},
		{`string(time.now() - schema.openAt)`, "-3600s", ""},
		{`time.now() > schema.openAt ? "open" : "closed"`, "closed", "2026-12-05T12:00:00.000000001Z"},
		// Far dates hold to what int64 nanoseconds reach.
		{`time.now() < timestamp("9999-12-31T23:59:59Z")`, true, ""},
	} {
		got, next, err := at(t, tc.src, now)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %v, want %v", tc.src, got, tc.want)
		}
		var wantNext time.Time
		if tc.next != "" {
			wantNext, _ = time.Parse(time.RFC3339Nano, tc.next)
		}
		if !next.Equal(wantNext) {
			t.Errorf("%s turns at %v, want %v", tc.src, next, wantNext)
		}
		// Just after the turn, the answer is the other one.
		if tc.next != "" {
			after, _, err := at(t, tc.src, wantNext)
			if err != nil || after == got {
				t.Errorf("%s at %v = %v (%v), want the answer turned from %v", tc.src, wantNext, after, err, got)
			}
		}
	}
}

func TestTimeNowIsRefusedWhereItsChangesWouldBeLost(t *testing.T) {
	schema := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	env, err := celenv.New(celenv.Var{Name: "schema", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`time.now().getHours()`,
		`time.now() + 1`,
		`time.now() + time.now()`,
		`duration("1h") - time.now()`,
		`time.now() > "2026-01-01T00:00:00Z"`,
		`int(time.now())`,
	} {
		_, err := env.Compile(src)
		if err == nil || !strings.Contains(err.Error(), "a value computed from time.now() can be compared with timestamps or durations") {
			t.Errorf("compiling %s: %v, want an error saying what a value computed from time.now() takes", src, err)
		}
	}
}

func TestTimeNowIsWrittenOnlyAsText(t *testing.T) {
	_, _, err := at(t, `{"at": time.now()}`, time.Now())
	if err == nil || !strings.Contains(err.Error(), "string(...)") {
		t.Fatalf("a map holding time.now() written into an object: %v, want an error saying to write string(...)", err)
	}
}

// Dates before 1678 hold to it (int64 nanoseconds), and what cannot be
// told within that range is an error, not a wrong answer.
func TestTimeNowOutOfRangeIsAnError(t *testing.T) {
	now := mustTime(t, "2026-12-05T11:00:00Z")
	if got, _, err := at(t, `time.now() > timestamp("0001-01-01T00:00:00Z")`, now); err != nil || got != true {
		t.Errorf("now after the year 1: %v (%v), want true", got, err)
	}
	_, _, err := at(t, `string(time.now() - timestamp("0001-01-01T00:00:00Z"))`, now)
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("the time since the year 1: %v, want an out of range error", err)
	}
}
