package resolve

import "testing"

// BenchmarkRenderWebApp renders the webapp example's objects for one
// instance whose resources are all observed, as a reconcile of an ACTIVE
// instance does: the evaluation an instance costs the agent each time it
// is reconciled.
func BenchmarkRenderWebApp(b *testing.B) {
	g := compileExample(b, "webapp")
	instance := obj(b, `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: demo, namespace: default},
  spec: {name: demo, image: "nginx:1.27", replicas: 3, port: 8080, greeting: hi, ingress: {enabled: false, host: x}}}`)
	observed := map[string]map[string]any{
		"config":     obj(b, `{metadata: {name: demo-config, namespace: default}, data: {GREETING: hi}}`),
		"deployment": obj(b, `{metadata: {name: demo, namespace: default}, spec: {replicas: 3, selector: {matchLabels: {app: demo}}}, status: {availableReplicas: 3}}`),
		"service":    obj(b, `{metadata: {name: demo, namespace: default}, spec: {clusterIP: 10.0.0.7, selector: {app: demo}}}`),
	}
	ids := []string{"config", "deployment", "service"}
	b.ReportAllocs()
	for b.Loop() {
		s := NewScope(g, instance)
		for _, id := range ids {
			n := g.Node(id)
			if _, err := Render(n, s); err != nil {
				b.Fatal(err)
			}
			s.Observe(n, observed[id])
			if r := Ready(n, observed[id], s); !r.Ready {
				b.Fatalf("%s not ready: %s", id, r.Reason)
			}
		}
	}
}
