//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// chainRGD is SPEC §10's agent-bound workload: three chained objects.
const chainRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: chain}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Chain
    spec: {value: string | default=v}
  resources:
  - id: first
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-1"}, data: {v: "${schema.spec.value}"}}
  - id: second
    template: {apiVersion: v1, kind: Secret, metadata: {name: "${schema.metadata.name}-2"}, stringData: {v: "${first.data.v}"}}
  - id: third
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-3"}, data: {from: "${second.metadata.name}"}}
`

func TestWriteBudget(t *testing.T) {
	const ns = "writes"
	const n = 10
	f := features.New("the agent's writes: one apply per resource and one status per instance to ACTIVE, none while nothing changes").
		Assess("the budget holds", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, chainRGD)
			c.waitRGDActive(t, "chain")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Chain", ns)
			// Writes are counted per namespace (see countWrites), so other
			// tests' instances sharing this agent do not count.
			for i := 0; i < n; i++ {
				c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Chain, metadata: {name: c%d, namespace: %s}}", i, ns))
			}
			for i := 0; i < n; i++ {
				c.waitState(t, "kro.run/v1alpha1", "Chain", ns, fmt.Sprintf("c%d", i), v1alpha1.InstanceActive)
			}
			// Let in-flight reconciles (triggered by our own writes) settle.
			time.Sleep(2 * time.Second)
			perInstance := float64(writesIn(ns)) / n
			t.Logf("writes per instance on the way to ACTIVE: %.1f", perInstance)
			// Labels, ApplySet annotations and finalizer come with the
			// create, from the admission webhook.
			if perInstance > 4 {
				t.Errorf("%.1f writes per instance; the budget is 4 (one apply per resource, one status); the writes:\n%s",
					perInstance, strings.Join(writeRequestsIn(ns), "\n"))
			}
			quiet := writesIn(ns)
			time.Sleep(5 * time.Second)
			if got := writeRequestsIn(ns)[quiet:]; len(got) != 0 {
				t.Errorf("%d writes while nothing changed; want none:\n%s", len(got), strings.Join(got, "\n"))
			}
			// A restarted agent reads what it applied before, and finds
			// nothing to apply again (a Secret's stringData included).
			// Nor does it dry-run the CRD of an RGD it finds unchanged, or
			// write its registrations again: the instance webhook's for
			// each kind it had would hold the next RGD up, as it goes
			// through them one at a time.
			clusterWide := len(writeRequestsIn(""))
			stopAgentNow(t)
			startAgent(t, cfg)
			time.Sleep(5 * time.Second)
			if got := writeRequestsIn(ns)[quiet:]; len(got) != 0 {
				t.Errorf("%d writes after a restart with nothing changed; want none:\n%s", len(got), strings.Join(got, "\n"))
			}
			var crd, registrations []string
			for _, w := range writeRequestsIn("")[clusterWide:] {
				switch {
				case strings.HasSuffix(w, "/customresourcedefinitions/chains.kro.run"):
					crd = append(crd, w)
				case strings.Contains(w, "/apis/admissionregistration.k8s.io/"):
					registrations = append(registrations, w)
				}
			}
			if len(crd) > 0 {
				t.Errorf("the CRD of the unchanged RGD chain was applied or dry-run %d times after a restart; want none", len(crd))
			}
			// The webhook configurations and guard policies are found as
			// the agent before it left them.
			if len(registrations) > 0 {
				t.Errorf("%d writes of the agent's registrations after a restart with nothing changed; want none:\n%s", len(registrations), strings.Join(registrations, "\n"))
			}
			return ctx
		}).
		Assess("a hand edit of the data a Secret's stringData made is repaired", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// stringData is write-only: the live Secret holds it as data.
			secrets := c.resource(t, "v1", "Secret").Namespace(ns)
			if _, err := secrets.Patch(ctx, "c0-2", types.MergePatchType, []byte(`{"data":{"v":"aGFuZA=="}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the Secret's data to be restored", func() (bool, string) {
				secret := c.mustGet(t, "v1", "Secret", ns, "c0-2")
				v, _, _ := unstructured.NestedString(secret.Object, "data", "v")
				return v == base64.StdEncoding.EncodeToString([]byte("v")), "data.v = " + v
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// contestRGD sets an annotation the deployment controller keeps for itself:
// each writes its own value back after the other.
const contestRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: contests}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Contest
    spec: {revision: string | default=x}
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.metadata.name}
        annotations: {deployment.kubernetes.io/revision: "${schema.spec.revision}"}
      spec:
        replicas: 1
        selector: {matchLabels: {app: "${schema.metadata.name}"}}
        template:
          metadata: {labels: {app: "${schema.metadata.name}"}}
          spec: {containers: [{name: c, image: nginx}]}
`

func TestContestedObject(t *testing.T) {
	const ns = "contest"
	f := features.New("an object another writer keeps changing back is restored less and less often, and the instance names the writer").
		Assess("the agent backs off and says who it contends with", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, contestRGD)
			c.waitRGDActive(t, "contests")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Contest", ns)
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: Contest, metadata: {name: rev, namespace: "+ns+"}}")
			eventually(t, 60*time.Second, "the instance to name the contested field and its writer", func() (bool, string) {
				u, err := c.get(t, "kro.run/v1alpha1", "Contest", ns, "rev")
				if err != nil {
					return false, err.Error()
				}
				ready := condition(u, "ResourcesReady")
				if ready == nil {
					return false, conditionSummary(u)
				}
				return strings.Contains(ready.Message, `is contested: metadata.annotations[deployment.kubernetes.io/revision] was changed by field manager "kube-controller-manager`), ready.Message
			})
			// Restorations now wait 5 s, then 10 s, 20 s...: in 8 s at most
			// two. Restoring at once, the two writers take turns many times
			// a second.
			deployment := "/namespaces/" + ns + "/deployments/rev"
			applies := func() int {
				n := 0
				for _, w := range writeRequestsIn(ns) {
					if strings.HasSuffix(w, deployment) {
						n++
					}
				}
				return n
			}
			// Every version of the instance meanwhile: the restoration
			// after the 5 s wait must not turn it ACTIVE for a moment (the
			// controller changes the object back at once).
			w, err := c.resource(t, "kro.run/v1alpha1", "Contest").Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=rev"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			before := applies()
			for end := time.After(8 * time.Second); end != nil; {
				select {
				case <-end:
					end = nil
				case ev := <-w.ResultChan():
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						t.Fatalf("watching the instance: %v", ev.Object)
					}
					if state, _, _ := unstructured.NestedString(u.Object, "status", "state"); state != string(v1alpha1.InstanceError) {
						t.Errorf("state of the contested instance at version %s = %q, want ERROR; conditions %s",
							u.GetResourceVersion(), state, conditionSummary(u))
					}
				}
			}
			if got := applies() - before; got < 1 || got > 2 {
				t.Errorf("%d applies of the contested Deployment in 8 s; want one or two (after waits of 5 s and 10 s)", got)
			}
			// Agreeing with the controller ends the contest: a new desired
			// object is applied at once.
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: Contest, metadata: {name: rev, namespace: "+ns+"}, spec: {revision: \"1\"}}")
			c.waitState(t, "kro.run/v1alpha1", "Contest", ns, "rev", v1alpha1.InstanceActive)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// quantityRGD writes quantities in a form the API server stores otherwise
// ("1000m" is kept as "1"): the live Deployment never holds the template's
// text, and every change of its status finds it "different".
const quantityRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: quantities}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Quant
    spec: {replicas: integer | default=2}
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.metadata.name}"}
      spec:
        replicas: ${schema.spec.replicas}
        selector: {matchLabels: {app: "${schema.metadata.name}"}}
        template:
          metadata: {labels: {app: "${schema.metadata.name}"}}
          spec: {containers: [{name: c, image: nginx, resources: {limits: {cpu: 1000m, memory: 1024Mi}}}]}
`

func TestNormalizedValuesAreNotAContest(t *testing.T) {
	const ns = "normalized"
	f := features.New("a value the API server stores in its own form is not mistaken for another writer's change").
		Assess("status changes of the Deployment leave the instance ACTIVE and cost no apply", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, quantityRGD)
			c.waitRGDActive(t, "quantities")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Quant", ns)
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: Quant, metadata: {name: q, namespace: "+ns+"}}")
			c.waitState(t, "kro.run/v1alpha1", "Quant", ns, "q", v1alpha1.InstanceActive)
			before := writesIn(ns)
			pods := c.resource(t, "v1", "Pod").Namespace(ns)
			for range 4 {
				// New pods: the deployment controller updates the status
				// several times, each a new version of the Deployment.
				if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=q"}); err != nil {
					t.Fatal(err)
				}
				never(t, 1500*time.Millisecond, "the instance reported a contest", func() bool {
					u, err := c.get(t, "kro.run/v1alpha1", "Quant", ns, "q")
					if err != nil {
						return false
					}
					state, _, _ := unstructured.NestedString(u.Object, "status", "state")
					return state == string(v1alpha1.InstanceError)
				})
			}
			// The stored form of our fields did not change, so applying
			// the Deployment again would change nothing.
			var applies []string
			for _, w := range writeRequestsIn(ns)[before:] {
				if strings.Contains(w, "/deployments/") {
					applies = append(applies, w)
				}
			}
			if len(applies) != 0 {
				t.Errorf("%d writes to the Deployment while only its status changed; want none:\n%s",
					len(applies), strings.Join(applies, "\n"))
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
