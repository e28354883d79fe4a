package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/plugin"
)

// largeCRD is a CRD with a schema of about 100 KB, like those of the
// big operators that once cost kro 2 GB: many fields, long descriptions.
func largeCRD(i int) string {
	var props strings.Builder
	for f := range 60 {
		fmt.Fprintf(&props, `
                field%02d:
                  type: object
                  description: %q
                  properties:
                    name: {type: string, description: %q}
                    value: {type: string, description: %q}
                    count: {type: integer, description: %q}
                    items: {type: array, items: {type: string}, description: %q}`,
			f, strings.Repeat("An object field of a large custom resource. ", 12),
			strings.Repeat("name ", 30), strings.Repeat("value ", 30), strings.Repeat("count ", 30), strings.Repeat("items ", 30))
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: large%03ds.bench.kro.run}
spec:
  group: bench.kro.run
  names: {kind: Large%03d, plural: large%03ds, singular: large%03d, listKind: Large%03dList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:%s
`, i, i, i, i, i, props.String())
}

// idle measures a controller's RSS at rest in a cluster with 200 large
// CRDs installed and one RGD with one instance, after settle, and then how
// much of it the controller touches over as long again.
func (b *bench) idle(ctx context.Context, ctl *controller, settle time.Duration) (Idle, error) {
	c, err := b.freshCluster(ctx, 2)
	if err != nil {
		return Idle{}, err
	}
	defer c.delete(ctx, b.root)
	for i := range 200 {
		if err := c.applyYAML(ctx, largeCRD(i)); err != nil {
			return Idle{}, err
		}
	}
	if err := c.waitEstablished(ctx); err != nil {
		return Idle{}, err
	}
	p, err := b.startOn(ctx, c, ctl, agentBound)
	if err != nil {
		return Idle{}, err
	}
	defer p.stop()
	name, ns := spread(0)
	if err := c.createAll(ctx, []map[string]any{instance(agentBound, name, ns)}, 1); err != nil {
		return Idle{}, err
	}
	time.Sleep(settle)
	u, err := p.usage()
	if err != nil {
		return Idle{}, err
	}
	touched, err := p.touchedIn(ctx, settle)
	if err != nil {
		return Idle{}, err
	}
	return Idle{Controller: ctl.Name, RSSMB: u.RSSMB, AnonMB: u.AnonMB, FileMB: u.FileMB, TouchedMB: touched}, nil
}

// latencies measures admission of an RGD create and of an instance create
// (server-side dry runs, which call kro-agent's validating and mutating
// webhooks where it registered them) and, for kro-agent, `kubectl kro tree`
// with 10k unrelated objects.
func (b *bench) latencies(ctx context.Context, ctl *controller, tries int, withTree bool) ([]Latency, error) {
	c, err := b.freshCluster(ctx, 2)
	if err != nil {
		return nil, err
	}
	defer c.delete(ctx, b.root)
	p, err := b.startOn(ctx, c, ctl, agentBound)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	var out []Latency
	record := func(what string, f func() error) error {
		took, err := timeEach(tries, f)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		p50, p99 := percentiles(took)
		out = append(out, Latency{Controller: ctl.Name, What: what, P50ms: p50, P99ms: p99})
		return nil
	}
	doc := strings.Replace(agentBound.RGD, "name: chainbench", "name: dryrun", 1)
	rgd := map[string]any{}
	if err := yaml.Unmarshal([]byte(strings.Replace(doc, "kind: ChainBench", "kind: DryRun", 1)), &rgd); err != nil {
		return nil, err
	}
	if err := record("admission of an RGD create (server dry run)", func() error { return c.dryRun(ctx, rgd) }); err != nil {
		return nil, err
	}
	// One stored instance, ACTIVE, shows the kind is served (and, for
	// kro-agent, its webhook registered) before instance creates are timed.
	name, ns := spread(0)
	if err := c.createAll(ctx, []map[string]any{instance(agentBound, name, ns)}, 1); err != nil {
		return nil, err
	}
	active := c.count(rgdInstances(agentBound), stateActive)
	defer active.close()
	if err := active.waitFor(ctx, 1, 2*time.Minute); err != nil {
		return nil, err
	}
	inst := instance(agentBound, "dryrun", ns)
	if err := record("admission of an instance create (server dry run)", func() error { return c.dryRun(ctx, inst) }); err != nil {
		return nil, err
	}
	if !withTree {
		return out, nil
	}
	if err := c.namespaces(ctx, "noise"); err != nil {
		return nil, err
	}
	var noise []map[string]any
	for i := range 10000 {
		noise = append(noise, object("v1", "ConfigMap", fmt.Sprintf("noise-%05d", i), "noise", map[string]any{"data": map[string]any{"k": "v"}}))
	}
	if err := c.createAll(ctx, noise, parallelClients); err != nil {
		return nil, err
	}
	err = record("kubectl kro tree, 10k unrelated objects", func() error {
		cmd := plugin.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
		cmd.SetArgs([]string{"tree", agentBound.Resource, name, "-n", ns, "--kubeconfig", c.kubeconfig})
		if err := cmd.ExecuteContext(ctx); err != nil {
			return fmt.Errorf("kubectl kro tree: %w", err)
		}
		return nil
	})
	return out, err
}

// timeEach runs f tries times and returns how long each run took.
func timeEach(tries int, f func() error) ([]time.Duration, error) {
	took := make([]time.Duration, 0, tries)
	for range tries {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		took = append(took, time.Since(start))
	}
	return took, nil
}

func rgdInstances(w workload) schema.GroupVersionResource {
	return gvrOf("kro.run/v1alpha1", w.Kind)
}

// dryRun sends a create that the API server admits (webhooks included) but
// does not store.
func (c *benchCluster) dryRun(ctx context.Context, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	_, err := c.dyn.Resource(gvrOf(u.GetAPIVersion(), u.GetKind())).Namespace(u.GetNamespace()).
		Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
