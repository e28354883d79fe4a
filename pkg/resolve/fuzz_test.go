package resolve

import (
	"os"
	"path/filepath"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/graph"
)

// FuzzResolve runs every example RGD's graph over arbitrary instances and
// observed objects, as the instance reconciler does: includeWhen, forEach,
// rendering, readyWhen, status and custom conditions. The API server checks
// an instance against its CRD, but not what other controllers write into the
// objects readyWhen and status read, nor instances stored under an older
// schema; whatever the values, resolving must answer with a value or an
// error, never panic.
func FuzzResolve(f *testing.F) {
	paths, err := filepath.Glob("../../examples/*/rgd.yaml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no examples: %v", err)
	}
	var graphs []*graph.Graph
	for _, path := range paths {
		g := compileExample(f, filepath.Base(filepath.Dir(path)))
		graphs = append(graphs, g)
		instance, err := os.ReadFile(filepath.Join(filepath.Dir(path), "instance.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		asJSON, err := yaml.YAMLToJSON(instance)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(asJSON, []byte(`{"metadata":{"name":"x"},"spec":{"replicas":2},"status":{"readyReplicas":2,"availableReplicas":2,"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}},"data":{"k":"v"}}`))
	}
	// Free-form values into typed fields, checked as they are rendered.
	graphs = append(graphs, compileRGD(f, freeFormIntoTypedRGD))
	// Free-form values formatted: cel-go's latest format() over whatever
	// the instance holds.
	graphs = append(graphs, compileRGD(f, formattedFreeFormRGD))
	// Time gates: values computed from time.now() over whatever dates
	// the instance and the objects hold.
	graphs = append(graphs, compileRGD(f, timeGates))
	f.Add([]byte(`{"metadata":{"name":"t","creationTimestamp":"0001-01-01T00:00:00Z"},"spec":{"openAt":"9999-12-31T23:59:59Z","closeAt":"1970-01-01T00:00:00Z"}}`), []byte(`{"metadata":{"creationTimestamp":"2262-04-12T00:00:00Z"}}`))
	f.Add([]byte(`{"metadata":{"name":"v"},"spec":{"cfg":{"count":5,"replicas":"3","ports":[{"port":"80"},[]],"labels":{"a":{}},"cpu":1,"deadline":1.5}}}`), []byte(`{}`))
	f.Add([]byte(`{"metadata":{"name":7,"labels":[]},"spec":{"name":null,"replicas":"three","queues":[1,{"a":[]}],"regions":{},"ingress":{"enabled":"yes"}}}`), []byte(`[]`))
	f.Add([]byte(`{"spec":{"queues":["a","b"],"regions":["\xff"]}}`), []byte(`{"status":{"readyReplicas":1e300},"spec":{"replicas":-1}}`))
	f.Fuzz(func(t *testing.T, instanceJSON, observedJSON []byte) {
		var instance map[string]any
		if utiljson.Unmarshal(instanceJSON, &instance) != nil || instance == nil {
			return // the API server only stores objects
		}
		var observed map[string]any
		if utiljson.Unmarshal(observedJSON, &observed) != nil {
			observed = nil // as if the object were not observed yet
		}
		for _, g := range graphs {
			resolveAll(g, instance, observed)
		}
	})
}

// resolveAll walks g in order for one instance, binding observed as every
// resource's (and collection item's) observed state.
func resolveAll(g *graph.Graph, instance, observed map[string]any) {
	s := NewScope(g, instance)
	for _, id := range g.Order() {
		n := g.Node(id)
		if included, err := Included(n, s); err != nil || !included {
			continue
		}
		switch {
		case n.External != nil:
			_, _ = ExternalTarget(n, s)
		case n.IsCollection():
			items, err := Expand(n, s, 50)
			if err != nil {
				continue
			}
			var all []any
			for _, item := range items {
				_, _ = Render(n, item.Scope)
				_ = Ready(n, observed, item.Scope)
				all = append(all, observed)
			}
			if observed != nil {
				s.Observe(n, all)
			}
			continue
		default:
			_, _ = Render(n, s)
			_ = Ready(n, observed, s)
		}
		if observed != nil {
			s.Observe(n, observed)
		}
	}
	_, _ = Status(g, s)
	_ = Conditions(g, s)
}

const formattedFreeFormRGD = `
spec:
  schema: {apiVersion: v1alpha1, kind: Formatted, spec: {cfg: object}}
  resources:
  - id: cm
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: x}
      data:
        s: ${"%s".format([schema.spec.cfg])}
        x: ${"%x".format([schema.spec.cfg.count])}
        f: ${"%.3f".format([schema.spec.cfg.deadline])}
        e: ${"%e".format([schema.spec.cfg.cpu])}
        d: ${"%d-%s".format([schema.spec.cfg.replicas, schema.spec.cfg.ports])}
`
