//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// pairRGD is an RGD named name of kind kind: a ConfigMap and a Secret
// that reads it, named after the instance.
func pairRGD(name, kind string) string {
	return fmt.Sprintf(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: %s}
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
    spec: {value: string}
  resources:
    - id: config
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-config"}
        data: {value: "${schema.spec.value}"}
    - id: secret
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}-secret"}
        stringData: {from: "${config.metadata.name}"}
`, name, kind)
}

// managedBy counts the ConfigMaps and Secrets in ns that the instances
// of RGD rgd own.
func (c *clients) managedBy(t *testing.T, ns, rgd string) int {
	t.Helper()
	n := 0
	for _, kind := range []string{"ConfigMap", "Secret"} {
		list, err := c.resource(t, "v1", kind).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: v1alpha1.LabelRGDName + "=" + rgd})
		if err != nil {
			t.Fatal(err)
		}
		n += len(list.Items)
	}
	return n
}

// rgdHasFinalizer tells whether RGD name carries the agent's finalizer.
func (c *clients) rgdHasFinalizer(t *testing.T, name string) (bool, string) {
	u, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", name)
	if err != nil {
		return false, err.Error()
	}
	return slices.Contains(u.GetFinalizers(), v1alpha1.Finalizer), fmt.Sprint(u.GetFinalizers())
}

func TestCRDDeletionWhenAllowed(t *testing.T) {
	const ns = "crddeletion"
	withDeletion := func(o *agent.Options) { o.AllowCRDDeletion = true }
	f := features.New("--allow-crd-deletion").
		Assess("an RGD's deletion deletes its CRD and every instance with its resources, across a restart", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			startAgentWith(t, cfg, withDeletion)
			c := newClients(t, cfg)
			namespace(t, c, ns)
			c.apply(t, pairRGD("doomed", "Doomed"))
			c.waitRGDActive(t, "doomed")
			eventually(t, 10*time.Second, "the RGD to carry the agent's finalizer", func() (bool, string) { return c.rgdHasFinalizer(t, "doomed") })
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Doomed", ns)
			for i := range 3 {
				c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Doomed, metadata: {name: d%d, namespace: %s}, spec: {value: v}}", i, ns))
			}
			for i := range 3 {
				c.waitState(t, "kro.run/v1alpha1", "Doomed", ns, fmt.Sprintf("d%d", i), v1alpha1.InstanceActive)
			}
			if n := c.managedBy(t, ns, "doomed"); n != 6 {
				t.Fatalf("%d objects of the instances, want 6", n)
			}

			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "doomed")
			// Stopped and started again part way: the RGD, held by the
			// finalizer, still has the graph the deletions need.
			time.Sleep(100 * time.Millisecond)
			stopAgentNow(t)
			startAgentWith(t, cfg, withDeletion)
			eventually(t, 60*time.Second, "the RGD, its CRD, its instances and their objects to be gone", func() (bool, string) {
				_, rgdErr := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "doomed")
				_, crdErr := c.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "dooms.kro.run")
				n := c.managedBy(t, ns, "doomed")
				return apierrors.IsNotFound(rgdErr) && apierrors.IsNotFound(crdErr) && n == 0,
					fmt.Sprintf("RGD: %v; CRD: %v; %d objects", rgdErr, crdErr, n)
			})
			return ctx
		}).
		Assess("an agent without it takes its finalizer off RGDs, and leaves the CRD when one is deleted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgentWith(t, cfg, withDeletion) // unless running
			c := newClients(t, cfg)
			c.apply(t, pairRGD("spared", "Spared"))
			c.waitRGDActive(t, "spared")
			eventually(t, 10*time.Second, "the RGD to carry the agent's finalizer", func() (bool, string) { return c.rgdHasFinalizer(t, "spared") })
			stopAgentNow(t)
			startAgent(t, cfg)
			eventually(t, 10*time.Second, "the finalizer to come off", func() (bool, string) {
				has, why := c.rgdHasFinalizer(t, "spared")
				return !has, why
			})
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Spared", ns)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Spared, metadata: {name: s0, namespace: %s}, spec: {value: v}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Spared", ns, "s0", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "spared")
			eventually(t, 30*time.Second, "the instance to be released", func() (bool, string) {
				u, err := c.get(t, "kro.run/v1alpha1", "Spared", ns, "s0")
				if err != nil {
					return false, err.Error()
				}
				return len(u.GetFinalizers()) == 0, fmt.Sprint(u.GetFinalizers())
			})
			if _, err := c.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "spareds.kro.run"); err != nil {
				t.Errorf("the CRD of an RGD deleted without --allow-crd-deletion: %v", err)
			}
			if n := c.managedBy(t, ns, "spared"); n != 2 {
				t.Errorf("%d objects of the released instance, want its 2 left in place", n)
			}
			c.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "spareds.kro.run")
			return ctx
		}).
		Teardown(func(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
			// The next test gets the agent as it runs by default.
			stopAgentNow(t)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
