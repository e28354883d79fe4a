package resolve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// timeGates gates on the time, as upstream kro's time.now() lets an RGD:
// a resource included from a time the instance gives, one ready some time
// after it was created, and the status saying whether the window is open.
const timeGates = `
spec:
  schema:
    apiVersion: v1alpha1
    kind: TimeGates
    spec:
      openAt: string
      closeAt: string
    status:
      open: ${time.now() >= timestamp(schema.spec.openAt) && time.now() < timestamp(schema.spec.closeAt)}
  resources:
    - id: stamp
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-stamp"}
        data:
          age: ${string(time.now() - schema.metadata.creationTimestamp)}
          left: ${string(timestamp(schema.spec.closeAt) - time.now())}
      readyWhen:
        - ${time.now() > stamp.metadata.creationTimestamp + duration("10s")}
    - id: gate
      includeWhen:
        - ${time.now() >= timestamp(schema.spec.openAt)}
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-gate"}
`

func TestTimeGatesTurnWithTheClock(t *testing.T) {
	g := compileRGD(t, timeGates)
	instance := obj(t, `{metadata: {name: w, namespace: default, creationTimestamp: "2026-12-05T09:50:00Z"}, spec: {openAt: "2026-12-05T10:30:00Z", closeAt: "2026-12-05T12:00:00Z"}}`)
	ten := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	opens := time.Date(2026, 12, 5, 10, 30, 0, 1, time.UTC)

	s := NewScope(g, instance).at(ten)
	if included, err := Included(g.Node("gate"), s); err != nil || included {
		t.Fatalf("gate included at 10:00 = %v (%v), want false", included, err)
	}
	if next, ok := s.Clock().NextChange(); !ok || !next.Equal(opens) {
		t.Errorf("at 10:00 the next change is %v (%v), want %v, when openAt has passed", next, ok, opens)
	}
	stamp, err := Render(g.Node("stamp"), s)
	if err != nil {
		t.Fatal(err)
	}
	if data := stamp["data"].(map[string]any); data["age"] != "600s" || data["left"] != "7200s" {
		t.Errorf("stamp data at 10:00 = %v, want age 600s and left 7200s", data)
	}
	// The object as the API server returns it, created at 10:00.
	stamp["metadata"].(map[string]any)["creationTimestamp"] = "2026-12-05T10:00:00Z"
	if r := Ready(g.Node("stamp"), stamp, s); r.Ready || !strings.Contains(r.Reason, `+ duration("10s")} is false until 2026-12-05T10:00:10Z`) {
		t.Errorf("stamp at its creation: ready %v (%s), want not ready, saying until when", r.Ready, r.Reason)
	}
	if until := Until(s, g.Node("gate").IncludeWhen...); until != " until 2026-12-05T10:30:00Z" {
		t.Errorf("the gate's includeWhen is false%q, want until openAt", until)
	}
	if next, _ := s.Clock().NextChange(); !next.Equal(time.Date(2026, 12, 5, 10, 0, 10, 1, time.UTC)) {
		t.Errorf("after readyWhen, the next change is %v, want 10:00:10 when the stamp turns ready", next)
	}
	s.Observe(g.Node("stamp"), stamp)
	status, err := Status(g, s)
	if err != nil || status["open"] != false {
		t.Errorf("status at 10:00 = %v (%v), want open false", status, err)
	}

	later := NewScope(g, instance).at(opens)
	if included, err := Included(g.Node("gate"), later); err != nil || !included {
		t.Errorf("gate included just after openAt = %v (%v), want true", included, err)
	}
	if r := Ready(g.Node("stamp"), stamp, later); !r.Ready {
		t.Errorf("stamp not ready half an hour after its creation: %s", r.Reason)
	}
	later.Observe(g.Node("stamp"), stamp)
	if status, err := Status(g, later); err != nil || status["open"] != true {
		t.Errorf("status just after openAt = %v (%v), want open true", status, err)
	}
	if next, ok := later.Clock().NextChange(); !ok || !next.Equal(time.Date(2026, 12, 5, 12, 0, 0, 1, time.UTC)) {
		t.Errorf("once open, the next change is %v (%v), want closeAt", next, ok)
	}
}

// A value computed from time.now() is written only through string(...):
// written as it is, it would change with every reconcile unseen.
func TestTimeNowIsWrittenAsText(t *testing.T) {
	for _, tc := range []struct{ name, status, data, want string }{
		{name: "status", status: `${time.now()}`, want: "spec.schema.status.at: Invalid value: \"${time.now()}\": a value computed from time.now() is stored with string(...)"},
		{name: "template", data: `${time.now() + duration("1h")}`, want: "expression has type timestamp, but the field expects string; a value computed from time.now() is written with string(...)"},
		{name: "text", data: `at ${time.now()}`, want: "${time.now()} is embedded in text, so it must be a string, but has type timestamp; a value computed from time.now() is written with string(...)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `
spec:
  schema:
    apiVersion: v1alpha1
    kind: Stamped
    spec: {}
`
			if tc.status != "" {
				doc += "    status:\n      at: " + tc.status + "\n"
			}
			doc += `  resources:
    - id: cm
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: x}
`
			if tc.data != "" {
				doc += "        data:\n          at: " + tc.data + "\n"
			}
			rgd := &v1alpha1.ResourceGraphDefinition{}
			if err := yaml.Unmarshal([]byte(doc), rgd); err != nil {
				t.Fatal(err)
			}
			r, _ := kinds.Builtin()
			_, err := graph.Compile(rgd, graph.Options{Resolver: r})
			var cerr *graph.Error
			if !errors.As(err, &cerr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("compiling = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
