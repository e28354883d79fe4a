//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/agent"
	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/plugin"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

const regionalRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: regionalapps}
spec:
  schema:
    apiVersion: v1alpha1
    kind: RegionalApp
    spec:
      image: string | default="nginx"
      replicas: integer | default=1
  resources:
    - id: config
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-config"}
        data: {image: "${schema.spec.image}"}
    - id: deploy
      readyWhen:
        - ${deploy.status.?availableReplicas.orValue(0) == deploy.spec.replicas}
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: "${schema.metadata.name}"}
        spec:
          replicas: ${schema.spec.replicas}
          selector: {matchLabels: {app: "${schema.metadata.name}"}}
          template:
            metadata: {labels: {app: "${schema.metadata.name}"}}
            spec:
              containers:
                - name: app
                  image: ${schema.spec.image}
                  env: [{name: CONFIG, value: "${config.metadata.name}"}]
`

// flatKubeconfig reads a kubeconfig with its certificate files embedded, as
// a Cluster's Secret must hold it; server, when set, replaces the address.
func flatKubeconfig(t testing.TB, path, server string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmdapi.MinifyConfig(raw); err != nil {
		t.Fatal(err)
	}
	if err := clientcmdapi.FlattenConfig(raw); err != nil {
		t.Fatal(err)
	}
	if server != "" {
		for _, c := range raw.Clusters {
			c.Server = server
		}
	}
	b, err := clientcmd.Write(*raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func kubeconfigSecret(name, kubeconfig string) string {
	doc, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": name, "namespace": "kro-clusters"},
		"stringData": map[string]any{"kubeconfig": kubeconfig},
	})
	return string(doc)
}

func clusterObject(name, region, secret string) string {
	return fmt.Sprintf(`{apiVersion: agent.kro.run/v1alpha1, kind: Cluster, metadata: {name: %s},
  spec: {region: %s, kubeconfigSecretRef: {namespace: kro-clusters, name: %s, key: kubeconfig}}}`, name, region, secret)
}

func regionalApp(name, region string) string {
	return fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: RegionalApp,
  metadata: {name: %s, namespace: placed, labels: {agent.kro.run/region: %s}}, spec: {}}`, name, region)
}

// deletePlaced deletes an instance placed in namespace placed and waits for
// it to go, and with it its object of the same name on the workload
// cluster w.
func deletePlaced(t *testing.T, c, w *clients, kind, name, objAPIVersion, objKind string) {
	t.Helper()
	c.delete(t, "kro.run/v1alpha1", kind, "placed", name)
	waitPlacedGone(t, c, w, kind, name, objAPIVersion, objKind)
}

// waitPlacedGone waits for an instance placed in namespace placed, being
// deleted, to go, and with it its object of the same name on the
// workload cluster w.
func waitPlacedGone(t *testing.T, c, w *clients, kind, name, objAPIVersion, objKind string) {
	t.Helper()
	eventually(t, 30*time.Second, kind+" "+name+" and its "+objKind+" to go", func() (bool, string) {
		_, e1 := c.get(t, "kro.run/v1alpha1", kind, "placed", name)
		_, e2 := w.get(t, objAPIVersion, objKind, "placed", name)
		return apierrors.IsNotFound(e1) && apierrors.IsNotFound(e2), fmt.Sprintf("instance %v, %s %v", e1, objKind, e2)
	})
}

// dryRunPlan runs kubectl kro dry-run -o json on one RegionalApp, whose
// graph has two resources.
func dryRunPlan(t *testing.T, cfg *envconf.Config, instance string) []plugin.PlannedResource {
	t.Helper()
	file := filepath.Join(t.TempDir(), "instance.yaml")
	writeFile(t, file, instance)
	out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-o", "json")
	if err != nil {
		t.Fatalf("dry-run: %v\n%s", err, out)
	}
	var plan []plugin.PlannedResource
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan) != 2 {
		t.Fatalf("dry-run plan: %v\n%s", err, out)
	}
	return plan
}

// flangesRGD is an RGD of one Flange; status, when given, is its
// spec.schema.status line.
func flangesRGD(status string) string {
	return `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: regionalflanges}
spec:
  schema:
    apiVersion: v1alpha1
    kind: RegionalFlanges
    spec: {size: integer | default=1}
    ` + status + `
  resources:
  - id: flange
    template:
      apiVersion: placed.example.dev/v1
      kind: Flange
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`
}

// withFinish adds to an exampleCRD a string spec field finish, with the
// given default unless it is "".
func withFinish(t testing.TB, crd, def string) string {
	finish := "{type: string}"
	if def != "" {
		finish = "{type: string, default: " + def + "}"
	}
	const color = "              color: {type: string}\n"
	return replaceOnce(t, crd, color, color+"              finish: "+finish+"\n")
}

// withSizeType gives an exampleCRD's spec.size another type.
func withSizeType(t testing.TB, crd, typ string) string {
	return replaceOnce(t, crd, "              size: {type: integer}\n", "              size: {type: "+typ+"}\n")
}

// replaceOnce replaces the first old in s, which must hold it.
func replaceOnce(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("no %q in:\n%s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}

func TestPlacement(t *testing.T) {
	workloadName := fmt.Sprintf("%s%d-workload", clusterPrefix, os.Getpid())
	var workloadKubeconfig string
	workload := func(t testing.TB) *clients {
		return newClients(t, envconf.New().WithKubeconfigFile(workloadKubeconfig))
	}
	f := features.New("multi-cluster placement by region").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			path, err := localcluster.Start(ctx, workloadName)
			if err != nil {
				t.Fatalf("starting the workload cluster: %v", err)
			}
			workloadKubeconfig = path
			startAgent(t, cfg)
			c := newClients(t, cfg)
			namespace(t, c, "placed")
			namespace(t, c, "kro-clusters")
			c.apply(t, kubeconfigSecret("eu-west-1", flatKubeconfig(t, path, "")))
			// Not Current to kstatus (Flux) before the agent's first check.
			created := c.apply(t, clusterObject("eu-west-1", "eu-west", "eu-west-1"))
			if res, err := kstatus.Compute(created); err != nil || res.Status != kstatus.InProgressStatus {
				t.Errorf("a new Cluster: kstatus %+v (%v), status %v; want InProgress", res, err, created.Object["status"])
			}
			c.apply(t, regionalRGD)
			c.waitRGDActive(t, "regionalapps")
			return ctx
		}).
		Teardown(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			for _, name := range []string{"eu-west-1", "ap-south-1"} {
				_ = c.resource(t, "agent.kro.run/v1alpha1", "Cluster").Delete(ctx, name, metav1.DeleteOptions{})
			}
			if err := localcluster.Stop(ctx, workloadName); err != nil {
				t.Errorf("deleting the workload cluster: %v", err)
			}
			return ctx
		}).
		Assess("a registered Cluster reports Ready with its server version", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			eventually(t, 30*time.Second, "Cluster eu-west-1 to be Ready", func() (bool, string) {
				u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
				ready := condition(u, "Ready")
				return ready != nil && ready.Status == metav1.ConditionTrue, conditionSummary(u)
			})
			u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
			if res, err := kstatus.Compute(u); err != nil || res.Status != kstatus.CurrentStatus {
				t.Errorf("the Cluster Ready: kstatus %+v (%v), want Current", res, err)
			}
			if v, _, _ := unstructured.NestedString(u.Object, "status", "serverVersion"); !strings.HasPrefix(v, "v1.36.") {
				t.Errorf("serverVersion = %q", v)
			}
			for _, cond := range []string{"KubeconfigLoaded", "Reachable", "KindsDiscoverable", "Guarded"} {
				if got := condition(u, cond); got == nil || got.Status != metav1.ConditionTrue {
					t.Errorf("%s = %+v", cond, got)
				}
			}
			if n, ok := gauge(t, "kro_agent_cluster_ready", map[string]string{"cluster": "eu-west-1", "region": "eu-west"}); !ok || n != 1 {
				t.Errorf("kro_agent_cluster_ready of eu-west-1 = %v (found: %v), want 1", n, ok)
			}
			// The guard policies are applied in the workload cluster too.
			w := workload(t)
			for _, name := range []string{"kro-agent-ownership-labels", "kro-agent-no-takeover"} {
				if _, err := w.get(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", name); err != nil {
					t.Errorf("policy %s in the workload cluster: %v", name, err)
				}
			}
			return ctx
		}).
		Assess("a guard policy deleted in the workload cluster is back after the next check", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			w.delete(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", guard.NoTakeoverPolicyName)
			// Any change to the Cluster makes it checked at once rather
			// than at the next interval.
			c.patch(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1", `{"metadata":{"annotations":{"test/poke":"`+time.Now().Format(time.RFC3339Nano)+`"}}}`)
			eventually(t, 20*time.Second, "the no-takeover policy back in the workload cluster", func() (bool, string) {
				_, err := w.get(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", guard.NoTakeoverPolicyName)
				return err == nil, fmt.Sprint(err)
			})
			// Back means enforced again; the takeover Assess below relies
			// on it.
			w.waitTakeoverGuard(t, "default")
			return ctx
		}).
		Assess("an instance labelled with the region gets its resources on the workload cluster", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			c.apply(t, regionalApp("a1", "eu-west"))
			inst := c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1", v1alpha1.InstanceActive)
			placement, _, _ := unstructured.NestedStringMap(inst.Object, "status", "placement")
			if placement["cluster"] != "eu-west-1" || placement["region"] != "eu-west" {
				t.Errorf("status.placement = %v", placement)
			}
			if p := condition(inst, "Placed"); p == nil || p.Status != metav1.ConditionTrue || !strings.Contains(p.Message, "eu-west-1") {
				t.Errorf("Placed = %+v", p)
			}
			d := w.mustGet(t, "apps/v1", "Deployment", "placed", "a1")
			if avail, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas"); avail != 1 {
				t.Errorf("the workload Deployment has %d available replicas", avail)
			}
			if d.GetLabels()[v1alpha1.LabelInstanceID] != string(inst.GetUID()) {
				t.Errorf("workload Deployment labels = %v", d.GetLabels())
			}
			if _, err := c.get(t, "apps/v1", "Deployment", "placed", "a1"); !apierrors.IsNotFound(err) {
				t.Errorf("the Deployment exists on the hub too: %v", err)
			}
			return ctx
		}).
		Assess("a changed region label does not move a placed instance, and both admission and Placed say so", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			c.apply(t, regionalApp("m1", "eu-west"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "m1", v1alpha1.InstanceActive)
			// The label changed as kubectl label changes it, by a patch,
			// with the API server's warnings collected.
			dyn, warnings := warnedClient(t, cfg)
			gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "regionalapps"}
			patch := []byte(`{"metadata":{"labels":{"agent.kro.run/region":"us-east"}}}`)
			if _, err := dyn.Resource(gvr).Namespace("placed").Patch(ctx, "m1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			stays := `the label agent.kro.run/region asks for region "us-east", but the instance stays on cluster eu-west-1 (region eu-west)`
			if got := warnings.all(); len(got) != 1 || !strings.HasPrefix(got[0], stays) {
				t.Errorf("warnings of the label change: %q, want one starting %q", got, stays)
			}
			eventually(t, 20*time.Second, "Placed to say the instance stays", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "m1")
				p := condition(inst, "Placed")
				return p != nil && p.Status == metav1.ConditionTrue && p.Reason == v1alpha1.ReasonStaysPlaced && strings.Contains(p.Message, stays), fmt.Sprintf("%+v", p)
			})
			if _, err := w.get(t, "apps/v1", "Deployment", "placed", "m1"); err != nil {
				t.Errorf("the workload Deployment after the label change: %v", err)
			}
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "m1")
			return ctx
		}).
		Assess("an instance reconciled in the local cluster stays there when it is given a region label, and both admission and Placed say so", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "regionalapps"}
			local := func(name string) string {
				return fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: RegionalApp, metadata: {name: %s, namespace: placed}, spec: {}}`, name)
			}
			const stays = `the label agent.kro.run/region asks for region "eu-west", but the instance stays in the local cluster`
			staysLocal := func(name string) {
				t.Helper()
				eventually(t, 30*time.Second, "Placed to say "+name+" stays in the local cluster", func() (bool, string) {
					inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", name)
					p := condition(inst, "Placed")
					state, _, _ := unstructured.NestedString(inst.Object, "status", "state")
					return p != nil && p.Status == metav1.ConditionTrue && p.Reason == v1alpha1.ReasonStaysLocal && strings.HasPrefix(p.Message, stays) &&
						state == string(v1alpha1.InstanceActive), fmt.Sprintf("state %s, Placed %+v", state, p)
				})
				if _, err := c.get(t, "apps/v1", "Deployment", "placed", name); err != nil {
					t.Errorf("the local Deployment %s: %v", name, err)
				}
				if _, err := w.get(t, "apps/v1", "Deployment", "placed", name); !apierrors.IsNotFound(err) {
					t.Errorf("the Deployment %s exists on the workload cluster too (%v): the instance moved and left its local resources behind", name, err)
				}
			}
			// Labelled as kubectl label does, with the API server's
			// warnings collected: the status says where it was reconciled.
			c.apply(t, local("l1"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "l1", v1alpha1.InstanceActive)
			dyn, warnings := warnedClient(t, cfg)
			label := []byte(`{"metadata":{"labels":{"agent.kro.run/region":"eu-west"}}}`)
			if _, err := dyn.Resource(gvr).Namespace("placed").Patch(ctx, "l1", types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := warnings.all(); len(got) != 1 || !strings.HasPrefix(got[0], stays) {
				t.Errorf("warnings of the label: %q, want one starting %q", got, stays)
			}
			staysLocal("l1")
			// With no status to tell (an agent stopped after applying the
			// resources, before writing it), the resources found in the
			// local cluster keep the instance there.
			c.apply(t, local("l2"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "l2", v1alpha1.InstanceActive)
			stopAgentNow(t)
			if _, err := c.resource(t, "kro.run/v1alpha1", "RegionalApp").Namespace("placed").Patch(ctx, "l2", types.MergePatchType, []byte(`{"status":null}`), metav1.PatchOptions{}, "status"); err != nil {
				t.Fatal(err)
			}
			c.patch(t, "kro.run/v1alpha1", "RegionalApp", "placed", "l2", string(label))
			startAgent(t, cfg)
			staysLocal("l2")
			c.deleteAll(t, "kro.run/v1alpha1", "RegionalApp", "placed", "l1", "l2")
			for _, name := range []string{"l1", "l2"} {
				if _, err := c.get(t, "apps/v1", "Deployment", "placed", name); !apierrors.IsNotFound(err) {
					t.Errorf("the local Deployment %s after its instance was deleted: %v", name, err)
				}
			}
			return ctx
		}).
		Assess("kubectl kro tree, why-not-ready, status and dry-run follow the placement", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			out, err := kro(t, cfg, nil, "tree", "regionalapp", "a1", "-n", "placed", "-o", "json")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var tree struct {
				Placement struct{ Cluster, Region string } `json:"placement"`
				Resources []struct{ NodeID, Name, Ready string }
			}
			if err := json.Unmarshal([]byte(out), &tree); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if tree.Placement.Cluster != "eu-west-1" || len(tree.Resources) != 2 {
				t.Fatalf("tree = %+v", tree)
			}
			for _, r := range tree.Resources {
				if r.Ready != "Ready" {
					t.Errorf("resource %s (%s) is %s on the workload cluster", r.NodeID, r.Name, r.Ready)
				}
			}
			out, err = kro(t, cfg, nil, "tree", "regionalapp", "a1", "-n", "placed")
			if err != nil || !strings.Contains(out, "Placed on cluster eu-west-1 (region eu-west)") {
				t.Errorf("tree: %v\n%s", err, out)
			}
			if out, err := kro(t, cfg, nil, "why-not-ready", "regionalapp", "a1", "-n", "placed"); err != nil {
				t.Errorf("why-not-ready on a Ready placed instance: %v\n%s", err, out)
			}
			// A user who may read the RGDs and the instance, not the
			// Cluster and its kubeconfig, is told what kro-agent found
			// there: a Ready instance is Ready for them too.
			const user = "placed-author"
			c := newClients(t, cfg)
			c.grant(t, user, "{apiGroups: [kro.run], resources: [resourcegraphdefinitions, regionalapps], verbs: [get, list, watch]}")
			eventually(t, 10*time.Second, user+"'s diagnosis", func() (bool, string) {
				out, err := kro(t, cfg, nil, "why-not-ready", "regionalapp", "a1", "-n", "placed", "--as", user)
				return err == nil && strings.Contains(out, "is Ready"), fmt.Sprint(out, err)
			})
			if out, err := kro(t, cfg, nil, "tree", "regionalapp", "a1", "-n", "placed", "--as", user); err != nil ||
				!strings.Contains(out, `Cluster eu-west-1, where the resources are, cannot be reached, so what they are is not known:
reading Cluster eu-west-1: clusters.agent.kro.run "eu-west-1" is forbidden`) {
				t.Errorf("tree as %s: %v\n%s", user, err, out)
			}
			out, err = kro(t, cfg, nil, "status", "regionalapp", "-n", "placed")
			if err != nil || !strings.Contains(out, "CLUSTER") || !strings.Contains(out, "eu-west-1") {
				t.Errorf("status does not show the cluster: %v\n%s", err, out)
			}

			// tree --watch follows the resources where they are. With the
			// instance suspended (written no more), a resource deleted on
			// the workload cluster changes only the list read there.
			c, w := newClients(t, cfg), workload(t)
			watched := startKro(ctx, cfg, "tree", "regionalapp/a1", "-n", "placed", "--watch", "--watch-interval", "200ms")
			suspend := func(value string) {
				c.patch(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1", fmt.Sprintf(`{"metadata":{"annotations":{"kro.run/reconcile":%s}}}`, value))
			}
			suspend(`"suspended"`)
			eventually(t, 10*time.Second, "the instance's status to say it is suspended", func() (bool, string) {
				cond := condition(c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1"), v1alpha1.ConditionResourcesReady)
				return cond != nil && cond.Reason == v1alpha1.ReasonSuspended, fmt.Sprint(cond)
			})
			eventually(t, 10*time.Second, "the tree of the placed instance", func() (bool, string) {
				return strings.Contains(watched.lastFrame(), "Placed on cluster eu-west-1"), watched.out.String()
			})
			watched.quiet(t)
			w.delete(t, "v1", "ConfigMap", "placed", "a1-config")
			eventually(t, 10*time.Second, "a tree with the workload ConfigMap missing", func() (bool, string) {
				for _, line := range strings.Split(watched.lastFrame(), "\n") {
					if strings.Contains(line, "config") && strings.Contains(line, "Missing") {
						return true, ""
					}
				}
				return false, watched.out.String()
			})
			watched.stop(t)
			suspend("null")
			eventually(t, 30*time.Second, "the ConfigMap back on the workload cluster", func() (bool, string) {
				_, err := w.get(t, "v1", "ConfigMap", "placed", "a1-config")
				return err == nil, fmt.Sprint(err)
			})
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1", v1alpha1.InstanceActive)

			// The resources exist on the workload cluster only: planned
			// against the hub they would be creates.
			for _, p := range dryRunPlan(t, cfg, regionalApp("a1", "eu-west")) {
				if p.Action != "unchanged" || p.Cluster != "eu-west-1" {
					t.Errorf("dry-run of a placed instance, %s: %s on cluster %q (%s)", p.NodeID, p.Action, p.Cluster, p.Reason)
				}
			}
			for _, p := range dryRunPlan(t, cfg, regionalApp("new", "eu-west")) {
				if p.Action != "pending" || !strings.Contains(p.Reason, `region "eu-west"`) {
					t.Errorf("dry-run of a new regional instance, %s: %s (%s)", p.NodeID, p.Action, p.Reason)
				}
			}
			return ctx
		}).
		Assess("on the workload cluster, too, the agent does not take over an object it did not create", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			w.apply(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: t1-config, namespace: placed}, data: {owner: bob}}")
			c.apply(t, regionalApp("t1", "eu-west"))
			eventually(t, 30*time.Second, "the instance to report the refused apply", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t1")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && strings.Contains(cond.Message, "ConfigMap placed/t1-config already exists in cluster eu-west-1 and was not created by kro-agent"), conditionSummary(inst)
			})
			if cm := w.mustGet(t, "v1", "ConfigMap", "placed", "t1-config"); len(cm.GetLabels()) != 0 {
				t.Errorf("bob's ConfigMap on the workload cluster was labelled: %v", cm.GetLabels())
			}
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t1")
			eventually(t, 30*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t1")
				return err != nil, "still there"
			})
			if _, err := w.get(t, "v1", "ConfigMap", "placed", "t1-config"); err != nil {
				t.Errorf("bob's ConfigMap after the instance's deletion: %v", err)
			}
			return ctx
		}).
		Assess("on the workload cluster, what an earlier instance of the name left is not adopted, and the refusal says why", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			c.apply(t, regionalApp("t2", "eu-west"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2", v1alpha1.InstanceActive)
			left := w.mustGet(t, "v1", "ConfigMap", "placed", "t2-config")
			// Deleted while no agent ran, its finalizer taken off by
			// hand: its objects stay on the workload cluster.
			stopAgentNow(t)
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2")
			c.release(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2")
			startAgent(t, cfg)
			c.apply(t, regionalApp("t2", "eu-west"))
			eventually(t, 30*time.Second, "the new instance to refuse the earlier one's ConfigMap, saying why it is not adopted", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2")
				msg := conditionSummary(inst)
				return strings.Contains(msg, "ConfigMap placed/t2-config already exists in cluster eu-west-1 and was created for an earlier instance of this name") &&
					strings.Contains(msg, "kro-agent adopts what an earlier instance of this name left only in the instance's own cluster"), msg
			})
			// kubectl kro dry-run says the same, and exits 1 for it.
			file := filepath.Join(t.TempDir(), "instance.yaml")
			writeFile(t, file, regionalApp("t2", "eu-west"))
			out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-o", "json")
			var plan []plugin.PlannedResource
			if jerr := json.Unmarshal([]byte(out), &plan); err == nil || jerr != nil || len(plan) == 0 ||
				plan[0].Action != plugin.ActionInvalid || !strings.Contains(plan[0].Reason, "left only in the instance's own cluster") {
				t.Errorf("dry-run of the new instance: %v, want exit 1 and its ConfigMap INVALID saying why it is not adopted\n%s", err, out)
			}
			if cm := w.mustGet(t, "v1", "ConfigMap", "placed", "t2-config"); cm.GetLabels()[v1alpha1.LabelInstanceID] != left.GetLabels()[v1alpha1.LabelInstanceID] {
				t.Errorf("the earlier instance's ConfigMap was relabelled: %v", cm.GetLabels())
			}
			// Handed over by their owner, they are adopted there too: the
			// guard policy on the workload cluster lets the agent's apply
			// take them.
			handOver := `{"metadata": {"annotations": {"kro.run/adopt-by": "placed/t2"}}}`
			w.patch(t, "v1", "ConfigMap", "placed", "t2-config", handOver)
			w.patch(t, "apps/v1", "Deployment", "placed", "t2", handOver)
			inst := c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2", v1alpha1.InstanceActive)
			if cm := w.mustGet(t, "v1", "ConfigMap", "placed", "t2-config"); cm.GetUID() != left.GetUID() || cm.GetLabels()[v1alpha1.LabelInstanceID] != string(inst.GetUID()) {
				t.Errorf("t2-config on the workload cluster is %s labelled for %q, want %s (the one left) labelled for %s", cm.GetUID(), cm.GetLabels()[v1alpha1.LabelInstanceID], left.GetUID(), inst.GetUID())
			}
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2")
			eventually(t, 30*time.Second, "the new instance to be gone, with what it adopted", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "RegionalApp", "placed", "t2")
				_, cmErr := w.get(t, "v1", "ConfigMap", "placed", "t2-config")
				return err != nil && apierrors.IsNotFound(cmErr), fmt.Sprint("instance: ", err, "; ConfigMap: ", cmErr)
			})
			return ctx
		}).
		Assess("a resource deleted on the workload cluster comes back", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			w := workload(t)
			old := w.mustGet(t, "v1", "ConfigMap", "placed", "a1-config")
			w.delete(t, "v1", "ConfigMap", "placed", "a1-config")
			eventually(t, 30*time.Second, "the ConfigMap to be recreated on the workload cluster", func() (bool, string) {
				cm, err := w.get(t, "v1", "ConfigMap", "placed", "a1-config")
				return err == nil && cm.GetUID() != old.GetUID(), fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("an instance a policy of the workload cluster refuses is tried again once the policy changes there", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// A graph of one ConfigMap: nothing else of the instance changes
			// on the workload cluster to bring it back to the agent.
			c, w := newClients(t, cfg), workload(t)
			c.apply(t, moodRGD)
			c.waitRGDActive(t, "mood")
			applyRefusingPolicy(t, w, "refuse-moods", "placed", "mood")
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: Mood,
  metadata: {name: r1, namespace: placed, labels: {agent.kro.run/region: eu-west}}, spec: {mood: refused}}`)
			refuseRepeatedly(t, c, "Mood", "placed", "r1", 14, "is refused by policy", func(i int) string {
				return fmt.Sprintf(`{"spec":{"mood":"refused-%d"}}`, i)
			})
			w.delete(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", "refuse-moods")
			c.activeSoonAfter(t, "Mood", "placed", "r1", time.Now(), "the policy's binding was deleted on the workload cluster")
			deletePlaced(t, c, w, "Mood", "r1", "v1", "ConfigMap")
			return ctx
		}).
		Assess("an unknown region waits with a clear condition and proceeds once a Cluster is registered", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			c.apply(t, regionalApp("b1", "ap-south"))
			eventually(t, 30*time.Second, "Placed to be False", func() (bool, string) {
				inst, err := c.get(t, "kro.run/v1alpha1", "RegionalApp", "placed", "b1")
				if err != nil {
					return false, err.Error()
				}
				p := condition(inst, "Placed")
				return p != nil && p.Status == metav1.ConditionFalse, conditionSummary(inst)
			})
			inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "b1")
			p := condition(inst, "Placed")
			if p.Reason != "NoClusterInRegion" || !strings.Contains(p.Message, `region "ap-south"`) || !strings.Contains(p.Message, "regions with Clusters: eu-west") {
				t.Errorf("Placed = %+v", p)
			}
			if st, _, _ := unstructured.NestedString(inst.Object, "status", "state"); st != string(v1alpha1.InstanceInProgress) {
				t.Errorf("state = %s, want IN_PROGRESS while waiting", st)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "regionalapp", "b1", "-n", "placed")
			if err == nil || !strings.Contains(out, `is not placed on a cluster of region "ap-south"`) {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			// Its resources are not missing from the local cluster: they
			// have no cluster yet.
			out, err = kro(t, cfg, nil, "tree", "regionalapp", "b1", "-n", "placed")
			if err != nil || !strings.Contains(out, `Not placed on a cluster yet: no Cluster is registered for region "ap-south"`) ||
				strings.Count(out, "not created yet: the instance is not placed on a cluster") != 2 || strings.Contains(out, "expected by the graph") {
				t.Errorf("tree: %v\n%s", err, out)
			}
			if _, err := w.get(t, "v1", "ConfigMap", "placed", "b1-config"); !apierrors.IsNotFound(err) {
				t.Errorf("an unplaced instance created resources: %v", err)
			}
			c.apply(t, clusterObject("ap-south-1", "ap-south", "eu-west-1"))
			inst = c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "b1", v1alpha1.InstanceActive)
			if placement, _, _ := unstructured.NestedStringMap(inst.Object, "status", "placement"); placement["cluster"] != "ap-south-1" {
				t.Errorf("status.placement = %v", placement)
			}
			return ctx
		}).
		Assess("an unreachable cluster turns Ready False, the instance says why, and nothing is deleted; one deleted meanwhile waits for it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			before := w.mustGet(t, "apps/v1", "Deployment", "placed", "a1")
			c.apply(t, regionalApp("u1", "eu-west"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "u1", v1alpha1.InstanceActive)
			c.apply(t, kubeconfigSecret("eu-west-1", flatKubeconfig(t, workloadKubeconfig, "https://127.0.0.1:1")))
			eventually(t, 30*time.Second, "Cluster eu-west-1 to be unreachable", func() (bool, string) {
				u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
				r := condition(u, "Reachable")
				ready := condition(u, "Ready")
				return r != nil && r.Status == metav1.ConditionFalse && ready.Status == metav1.ConditionFalse, conditionSummary(u)
			})
			eventually(t, 30*time.Second, "the instance to say its cluster is not Ready", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1")
				rr := condition(inst, "ResourcesReady")
				return rr != nil && rr.Status == metav1.ConditionFalse && rr.Reason == "ClusterNotReady" &&
					strings.Contains(rr.Message, "cluster eu-west-1 is not Ready"), conditionSummary(inst)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "regionalapp", "a1", "-n", "placed")
			if err == nil || !strings.Contains(out, "in cluster eu-west-1, which cannot be reached") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			// tree still draws the graph, each resource Unknown, and says why.
			out, err = kro(t, cfg, nil, "tree", "regionalapp", "a1", "-n", "placed")
			if err != nil || !regexp.MustCompile(`deploy +Deployment +- +Unknown +- +in cluster eu-west-1, which cannot be reached`).MatchString(out) ||
				!strings.Contains(out, "Cluster eu-west-1, where the resources are, cannot be reached, so what they are is not known:\ncluster eu-west-1 is not Ready: ") {
				t.Errorf("tree: %v\n%s", err, out)
			}
			// An instance deleted now waits to delete its resources there,
			// and why-not-ready says what ends the wait.
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "u1")
			deleting := c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "u1", v1alpha1.InstanceDeleting)
			if rr := condition(deleting, "ResourcesReady"); rr == nil ||
				!strings.HasPrefix(rr.Message, "waiting to delete the resources in cluster eu-west-1: cluster eu-west-1 is not Ready") {
				t.Errorf("the deleted instance does not say it waits for its cluster: %s", conditionSummary(deleting))
			}
			out, err = kro(t, cfg, nil, "why-not-ready", "regionalapp", "u1", "-n", "placed")
			if err == nil || !strings.Contains(out, "Root cause: RegionalApp/u1 is being deleted") ||
				!strings.Contains(out, "once it reaches the cluster again: kubectl describe clusters.agent.kro.run eu-west-1") ||
				!strings.Contains(out, "deleting the Cluster (kubectl delete clusters.agent.kro.run eu-west-1) lets the instance go") {
				t.Errorf("why-not-ready of the instance deleted while its cluster is unreachable: %v\n%s", err, out)
			}
			never(t, 3*time.Second, "a workload Deployment was deleted or replaced", func() bool {
				d, err := w.get(t, "apps/v1", "Deployment", "placed", "a1")
				u, errU := w.get(t, "apps/v1", "Deployment", "placed", "u1")
				return err != nil || d.GetUID() != before.GetUID() || d.GetDeletionTimestamp() != nil || errU != nil || u.GetDeletionTimestamp() != nil
			})
			c.apply(t, kubeconfigSecret("eu-west-1", flatKubeconfig(t, workloadKubeconfig, "")))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1", v1alpha1.InstanceActive)
			// Once the cluster is back, the deletion finishes there.
			waitPlacedGone(t, c, w, "RegionalApp", "u1", "apps/v1", "Deployment")
			if d := w.mustGet(t, "apps/v1", "Deployment", "placed", "a1"); d.GetUID() != before.GetUID() {
				t.Error("the workload Deployment was replaced while the cluster was unreachable")
			}
			return ctx
		}).
		Assess("a workload cluster that stops is not Ready at once, and Ready again once it answers", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The periodic check is an hour away: only what the agent's own
			// requests to the cluster find, or the rechecks of a cluster
			// that is not Ready, can bring a check forward.
			restartAgent := func() {
				stopAgentNow(t)
				startAgentWith(t, cfg, func(o *agent.Options) { o.ClusterCheckInterval = time.Hour })
			}
			restartAgent()
			defer func() {
				stopAgentNow(t)
				startAgent(t, cfg)
			}()
			c, w := newClients(t, cfg), workload(t)
			clusterReady := func(want metav1.ConditionStatus) func() (bool, string) {
				return func() (bool, string) {
					u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
					reachable, ready := condition(u, "Reachable"), condition(u, "Ready")
					return reachable != nil && reachable.Status == want && ready != nil && ready.Status == want, conditionSummary(u)
				}
			}
			stopped := false
			suspend := func() {
				if err := localcluster.Suspend(ctx, workloadName); err != nil {
					t.Fatal(err)
				}
				stopped = true
			}
			resume := func() {
				if _, err := localcluster.Start(ctx, workloadName); err != nil {
					t.Fatal(err)
				}
				stopped = false
			}
			defer func() {
				if stopped { // what follows needs the cluster
					_, _ = localcluster.Start(ctx, workloadName)
				}
			}()
			// An instance this agent placed: it watches the cluster now.
			c.apply(t, regionalApp("s1", "eu-west"))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "s1", v1alpha1.InstanceActive)
			before := w.mustGet(t, "apps/v1", "Deployment", "placed", "s1")

			suspend()
			eventually(t, 30*time.Second, "Cluster eu-west-1 to be unreachable, its check brought forward", clusterReady(metav1.ConditionFalse))
			// The registry the gauge reads is set before the status is written.
			if n, ok := gauge(t, "kro_agent_cluster_ready", map[string]string{"cluster": "eu-west-1"}); !ok || n != 0 {
				t.Errorf("kro_agent_cluster_ready of the stopped eu-west-1 = %v (found: %v), want 0", n, ok)
			}
			// kubectl get says why at a glance.
			if out, err := kubectl(t, cfg, "", "get", "clusters.agent.kro.run", "eu-west-1"); err != nil ||
				!regexp.MustCompile(`(?m)^eu-west-1 +eu-west +False +Unreachable +v1\.36\.`).MatchString(out) {
				t.Errorf("kubectl get of the stopped Cluster: %v\n%s", err, out)
			}
			eventually(t, 30*time.Second, "the instance to say its cluster is not Ready", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "s1")
				rr := condition(inst, "ResourcesReady")
				return rr != nil && rr.Status == metav1.ConditionFalse && rr.Reason == "ClusterNotReady", conditionSummary(inst)
			})
			// kubectl describe shows when it went, and why.
			eventually(t, 10*time.Second, "a NotReady Event on Cluster eu-west-1 saying why", func() (bool, string) {
				for _, e := range eventsAbout(t, c, "default", "eu-west-1", "NotReady") {
					if note, _, _ := unstructured.NestedString(e.Object, "note"); strings.Contains(note, "connection refused") {
						return true, note
					}
				}
				return false, "none"
			})
			resumed := time.Now().Add(-time.Second) // Event times are in microseconds
			resume()
			// The agent's watches retry with a backoff of up to 30 s; the
			// first that gets through brings the check forward.
			eventually(t, 60*time.Second, "Cluster eu-west-1 to be Ready again", clusterReady(metav1.ConditionTrue))
			eventually(t, 10*time.Second, "a Ready Event on Cluster eu-west-1 since it was started again", func() (bool, string) {
				var seen []string
				for _, e := range eventsAbout(t, c, "default", "eu-west-1", "Ready") {
					at, _, _ := unstructured.NestedString(e.Object, "eventTime")
					if when, err := time.Parse(time.RFC3339Nano, at); err == nil && when.After(resumed) && e.Object["type"] == "Normal" {
						return true, ""
					}
					seen = append(seen, at)
				}
				return false, fmt.Sprintf("Ready Events at %v", seen)
			})
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "s1", v1alpha1.InstanceActive)

			// An agent that starts while the cluster is stopped never
			// connects to it, so no request of its can find it back: the
			// rechecks of a Cluster that is not Ready do.
			suspend()
			restartAgent()
			eventually(t, 30*time.Second, "Cluster eu-west-1 to be found unreachable by the new agent", clusterReady(metav1.ConditionFalse))
			resume()
			eventually(t, 60*time.Second, "Cluster eu-west-1 to be Ready again, rechecked", clusterReady(metav1.ConditionTrue))
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "s1", v1alpha1.InstanceActive)
			if d := w.mustGet(t, "apps/v1", "Deployment", "placed", "s1"); d.GetUID() != before.GetUID() {
				t.Error("the workload Deployment was replaced while its cluster was stopped")
			}
			deletePlaced(t, c, w, "RegionalApp", "s1", "apps/v1", "Deployment")
			return ctx
		}).
		Assess("a kind dropped from the graph before a restart is still pruned on the workload cluster", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			rgd := func(configName string, withAccount bool) string {
				return accountRGD("regionalkinds", "RegionalKinds", configName, withAccount)
			}
			const kind = "RegionalKinds"
			accountGone := func(name string) func() (bool, string) {
				return func() (bool, string) {
					_, err := w.get(t, "v1", "ServiceAccount", "placed", name)
					return apierrors.IsNotFound(err), fmt.Sprint(err)
				}
			}
			c.apply(t, rgd("${schema.metadata.name}", true))
			c.waitRGDActive(t, "regionalkinds")
			for _, name := range []string{"kept", "deleted"} {
				c.apply(t, fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: %s,
  metadata: {name: %s, namespace: placed, labels: {agent.kro.run/region: eu-west}}, spec: {}}`, kind, name))
				c.waitState(t, "kro.run/v1alpha1", kind, "placed", name, v1alpha1.InstanceActive)
				w.mustGet(t, "v1", "ServiceAccount", "placed", name)
			}

			// The ServiceAccount leaves the graph while the ConfigMap cannot
			// be applied (its name is invalid), so it is not pruned yet, and
			// the annotation in this cluster still lists its kind.
			c.apply(t, rgd("${schema.metadata.name}_Invalid", false))
			c.waitState(t, "kro.run/v1alpha1", kind, "placed", "kept", v1alpha1.InstanceError)
			w.mustGet(t, "v1", "ServiceAccount", "placed", "kept")
			for _, name := range []string{"kept", "deleted"} {
				got := c.mustGet(t, "kro.run/v1alpha1", kind, "placed", name).GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]
				if got != "ConfigMap,ServiceAccount" {
					t.Errorf("%s lists %q in contains-group-kinds while its ServiceAccount is on the workload cluster", name, got)
				}
			}
			// The agent comes back reconciling instances before it has
			// checked the workload cluster again: it must not take the
			// cluster for gone.
			stopAgentNow(t)
			slowClusterChecks.Store(true)
			startAgent(t, cfg)
			defer slowClusterChecks.Store(false)

			c.delete(t, "kro.run/v1alpha1", kind, "placed", "deleted")
			eventually(t, 30*time.Second, "the deleted instance to go", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", kind, "placed", "deleted")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			if ok, err := accountGone("deleted")(); !ok {
				t.Errorf("the deleted instance left its ServiceAccount on the workload cluster: %s", err)
			}

			c.apply(t, rgd("${schema.metadata.name}", false))
			eventually(t, 30*time.Second, "the dropped ServiceAccount to be pruned", accountGone("kept"))
			eventually(t, 20*time.Second, "contains-group-kinds to shrink to ConfigMap", func() (bool, string) {
				got := c.mustGet(t, "kro.run/v1alpha1", kind, "placed", "kept").GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds]
				return got == "ConfigMap", got
			})
			c.waitState(t, "kro.run/v1alpha1", kind, "placed", "kept", v1alpha1.InstanceActive)
			deletePlaced(t, c, w, kind, "kept", "v1", "ConfigMap")
			return ctx
		}).
		Assess("a kind whose CRD changes on the workload cluster is read as it is there; deleted, it is no longer watched there, and comes back with it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			crd := exampleCRD("Flange", "placed.example.dev")
			c.apply(t, crd)
			w.apply(t, crd)
			eventually(t, 30*time.Second, "the RGD using Flange to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, flangesRGD(""))
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "regionalflanges")
			const kind = "RegionalFlanges"
			c.apply(t, `{apiVersion: kro.run/v1alpha1, kind: RegionalFlanges,
  metadata: {name: f1, namespace: placed, labels: {agent.kro.run/region: eu-west}}, spec: {}}`)
			c.waitState(t, "kro.run/v1alpha1", kind, "placed", "f1", v1alpha1.InstanceActive)
			w.mustGet(t, "placed.example.dev/v1", "Flange", "placed", "f1")

			// The kind gains a field with a default, one on the hub and
			// another on the workload cluster. The placed graph is compiled
			// again against the workload cluster's new schema and reads f1's
			// Flange there, with that cluster's default, not the hub's.
			c.apply(t, withFinish(t, crd, "matte"))
			w.apply(t, withFinish(t, crd, "gloss"))
			eventually(t, 30*time.Second, "the RGD reading the new field to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, flangesRGD(`status: {finish: "${flange.spec.finish}"}`))
				return err == nil, fmt.Sprint(err)
			})
			eventually(t, 30*time.Second, "f1 to project the workload cluster's default", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", kind, "placed", "f1")
				finish, _, _ := unstructured.NestedString(inst.Object, "status", "finish")
				return finish == "gloss", fmt.Sprintf("status.finish = %q; %s; %s", finish, conditionSummary(inst), rgdSummary(t, c, "regionalflanges"))
			})
			// The workload cluster's CRD alone changes a field's type: the
			// placed graph no longer type-checks there, the RGD unchanged,
			// until the CRD changes back.
			w.apply(t, withSizeType(t, withFinish(t, crd, "gloss"), "string"))
			eventually(t, 30*time.Second, "f1 to say its graph does not type-check in the workload cluster", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", kind, "placed", "f1")
				g := condition(inst, v1alpha1.ConditionGraphResolved)
				return g != nil && g.Status == metav1.ConditionFalse && strings.Contains(g.Message, "cluster eu-west-1") &&
					strings.Contains(g.Message, "spec.size"), conditionSummary(inst)
			})
			w.apply(t, withFinish(t, crd, "gloss"))
			c.waitState(t, "kro.run/v1alpha1", kind, "placed", "f1", v1alpha1.InstanceActive)

			w.delete(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "flanges.placed.example.dev")
			eventually(t, 30*time.Second, "the instance to say the kind is missing there", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", kind, "placed", "f1")
				g := condition(inst, v1alpha1.ConditionGraphResolved)
				return g != nil && g.Status == metav1.ConditionFalse && strings.Contains(g.Message, "cluster eu-west-1") &&
					strings.Contains(g.Message, "placed.example.dev/v1 Flange"), conditionSummary(inst)
			})
			// The informer of flanges there is stopped, not listing a
			// resource that is not served again and again.
			raw, err := clientcmd.LoadFromFile(workloadKubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			host := strings.TrimPrefix(raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Server, "https://")
			time.Sleep(time.Second)
			before := clientRequests(t, host, "404")
			time.Sleep(5 * time.Second)
			if after := clientRequests(t, host, "404"); after != before {
				t.Errorf("the agent's requests to the workload cluster went on failing with 404 after the CRD was deleted: %v more in 5s", after-before)
			}

			w.apply(t, withFinish(t, crd, "gloss"))
			c.waitState(t, "kro.run/v1alpha1", kind, "placed", "f1", v1alpha1.InstanceActive)
			w.mustGet(t, "placed.example.dev/v1", "Flange", "placed", "f1")
			deletePlaced(t, c, w, kind, "f1", "placed.example.dev/v1", "Flange")
			return ctx
		}).
		Assess("deleting the instance deletes on the workload cluster in reverse order", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			w.hold(t, "apps/v1", "Deployment", "placed", "a1")
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1")
			c.waitState(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1", v1alpha1.InstanceDeleting)
			eventually(t, 10*time.Second, "the workload Deployment to be terminating", func() (bool, string) {
				d := w.mustGet(t, "apps/v1", "Deployment", "placed", "a1")
				return d.GetDeletionTimestamp() != nil, "not terminating"
			})
			never(t, 3*time.Second, "the ConfigMap was deleted before the Deployment that depends on it", func() bool {
				cm, err := w.get(t, "v1", "ConfigMap", "placed", "a1-config")
				return err != nil || cm.GetDeletionTimestamp() != nil
			})
			inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1")
			if msg := condition(inst, "ResourcesReady").Message; !strings.Contains(msg, "in cluster eu-west-1") {
				t.Errorf("ResourcesReady does not say where it deletes: %s", msg)
			}
			w.release(t, "apps/v1", "Deployment", "placed", "a1")
			c.delete(t, "kro.run/v1alpha1", "RegionalApp", "placed", "b1")
			eventually(t, 30*time.Second, "everything to be gone", func() (bool, string) {
				_, e1 := c.get(t, "kro.run/v1alpha1", "RegionalApp", "placed", "a1")
				_, e2 := w.get(t, "apps/v1", "Deployment", "placed", "a1")
				_, e3 := w.get(t, "v1", "ConfigMap", "placed", "a1-config")
				_, e4 := c.get(t, "kro.run/v1alpha1", "RegionalApp", "placed", "b1")
				_, e5 := w.get(t, "v1", "ConfigMap", "placed", "b1-config")
				return e1 != nil && e2 != nil && e3 != nil && e4 != nil && e5 != nil,
					fmt.Sprintf("a1 %v, its Deployment %v, its ConfigMap %v; b1 %v, its ConfigMap %v", e1, e2, e3, e4, e5)
			})
			return ctx
		}).
		Assess("a deleted Cluster's identity is taken off the guard policies there; with none left, they go", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			recorded := func() (map[string]string, error) {
				p, err := w.get(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", guard.LabelsPolicyName)
				if err != nil {
					return nil, err
				}
				identities := map[string]string{}
				err = json.Unmarshal([]byte(p.GetAnnotations()[guard.AnnotationIdentities]), &identities)
				return identities, err
			}
			// Both Clusters use one kubeconfig of the workload cluster: two
			// writers there.
			eventually(t, 20*time.Second, "both Clusters recorded on the workload cluster's policy", func() (bool, string) {
				ids, err := recorded()
				return err == nil && len(ids) == 2 && ids["cluster/eu-west-1"] != "" && ids["cluster/ap-south-1"] != "", fmt.Sprint(ids, err)
			})
			c.delete(t, "agent.kro.run/v1alpha1", "Cluster", "", "ap-south-1")
			eventually(t, 20*time.Second, "ap-south-1 taken off the policy, eu-west-1 kept", func() (bool, string) {
				ids, err := recorded()
				return err == nil && len(ids) == 1 && ids["cluster/eu-west-1"] != "", fmt.Sprint(ids, err)
			})
			c.delete(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
			eventually(t, 20*time.Second, "the guard policies and bindings gone from the workload cluster", func() (bool, string) {
				var left []string
				for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
					for _, name := range []string{guard.LabelsPolicyName, guard.NoTakeoverPolicyName} {
						if _, err := w.get(t, "admissionregistration.k8s.io/v1", kind, "", name); !apierrors.IsNotFound(err) {
							left = append(left, kind+" "+name)
						}
					}
				}
				return len(left) == 0, strings.Join(left, ", ")
			})
			return ctx
		}).
		Assess("an instance whose Cluster is deleted waits for its region, label or not, and is placed again once one is registered", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c, w := newClients(t, cfg), workload(t)
			register := func() {
				t.Helper()
				c.apply(t, clusterObject("eu-west-1", "eu-west", "eu-west-1"))
				eventually(t, 30*time.Second, "Cluster eu-west-1 to be Ready", func() (bool, string) {
					u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
					ready := condition(u, "Ready")
					return ready != nil && ready.Status == metav1.ConditionTrue, conditionSummary(u)
				})
			}
			// Its Deployment is created but not waited for: the workload
			// cluster was stopped and started again above.
			placedOn := func(why string) {
				t.Helper()
				eventually(t, 30*time.Second, why, func() (bool, string) {
					inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "g1")
					p, _ := agentv1.PlacementOf(inst)
					_, err := w.get(t, "apps/v1", "Deployment", "placed", "g1")
					return p.Cluster == "eu-west-1" && p.Region == "eu-west" && err == nil, fmt.Sprintf("placement %+v, workload Deployment %v", p, err)
				})
			}
			register()
			c.apply(t, regionalApp("g1", "eu-west"))
			placedOn("g1 to be placed on eu-west-1")
			// Without its label it stays placed; with its Cluster gone it
			// is placed again in its region, not in the local cluster.
			c.patch(t, "kro.run/v1alpha1", "RegionalApp", "placed", "g1", `{"metadata":{"labels":{"agent.kro.run/region":null}}}`)
			c.delete(t, "agent.kro.run/v1alpha1", "Cluster", "", "eu-west-1")
			eventually(t, 30*time.Second, "g1 to wait for a cluster of region eu-west", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "RegionalApp", "placed", "g1")
				p := condition(inst, "Placed")
				placement, _, _ := unstructured.NestedStringMap(inst.Object, "status", "placement")
				return p != nil && p.Status == metav1.ConditionFalse && p.Reason == v1alpha1.ReasonNoClusterInRegion && strings.Contains(p.Message, `"eu-west"`) &&
					placement["region"] == "eu-west" && placement["cluster"] == "", fmt.Sprintf("Placed %+v, placement %v", p, placement)
			})
			if len(eventsAbout(t, c, "placed", "g1", "ClusterGone")) == 0 {
				t.Error("no ClusterGone Event about g1")
			}
			if out, err := kro(t, cfg, nil, "why-not-ready", "regionalapp", "g1", "-n", "placed"); err == nil || !strings.Contains(out, `is not placed on a cluster of region "eu-west"`) ||
				!strings.Contains(out, "Warning ClusterGone: cluster eu-west-1 is no longer registered; the resources created there are left behind") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			if _, err := c.get(t, "apps/v1", "Deployment", "placed", "g1"); !apierrors.IsNotFound(err) {
				t.Errorf("g1's Deployment in the local cluster: %v", err)
			}
			register()
			placedOn("g1 to be placed on eu-west-1 again")
			deletePlaced(t, c, w, "RegionalApp", "g1", "apps/v1", "Deployment")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// The agent's own cluster registered as a workload Cluster, with a
// kubeconfig of another identity, is written to by kro-agent as two
// users. The guard policies there recognise both, and stay as they are:
// written whole for one identity, each writer would undo the other's at
// every check and deny the other's writes in between.
func TestGuardRecognisesEveryIdentityOfTheAgent(t *testing.T) {
	f := features.New("guard policies written by the agent as two identities").
		Assess("both identities are recorded, and nothing is written again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			defer stopAgentNow(t) // the next test starts the usual agent
			startAgentWith(t, cfg, func(o *agent.Options) { o.ClusterCheckInterval = 500 * time.Millisecond })
			c := newClients(t, cfg)
			kc := kubernetes.NewForConfigOrDie(cfg.Client().RESTConfig())
			namespace(t, c, "kro-clusters")
			self, err := guard.Identity(ctx, kc)
			if err != nil {
				t.Fatal(err)
			}
			// A ServiceAccount of the same cluster, with a token, as a hub's
			// kubeconfig for it would have.
			c.apply(t, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: hub, namespace: kro-clusters}}`)
			c.apply(t, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: kro-e2e-hub},
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin},
  subjects: [{kind: ServiceAccount, name: hub, namespace: kro-clusters}]}`)
			defer func() {
				_ = c.resource(t, "agent.kro.run/v1alpha1", "Cluster").Delete(ctx, "home-1", metav1.DeleteOptions{})
				_ = kc.RbacV1().ClusterRoleBindings().Delete(ctx, "kro-e2e-hub", metav1.DeleteOptions{})
			}()
			token, err := kc.CoreV1().ServiceAccounts("kro-clusters").CreateToken(ctx, "hub", &authnv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := clientcmd.Load([]byte(flatKubeconfig(t, cfg.KubeconfigFile(), "")))
			if err != nil {
				t.Fatal(err)
			}
			for name := range raw.AuthInfos {
				raw.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
			}
			hubKubeconfig, err := clientcmd.Write(*raw)
			if err != nil {
				t.Fatal(err)
			}
			c.apply(t, kubeconfigSecret("home-1", string(hubKubeconfig)))
			c.apply(t, clusterObject("home-1", "home", "home-1"))
			eventually(t, 30*time.Second, "Cluster home-1 to be Ready", func() (bool, string) {
				u := c.mustGet(t, "agent.kro.run/v1alpha1", "Cluster", "", "home-1")
				ready := condition(u, "Ready")
				return ready != nil && ready.Status == metav1.ConditionTrue, conditionSummary(u)
			})
			hub := "system:serviceaccount:kro-clusters:hub"
			want := fmt.Sprintf(`{"cluster/home-1":%q,"self":%q}`, hub, self)
			policy := func() (*admissionregv1.ValidatingAdmissionPolicy, error) {
				return kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, guard.LabelsPolicyName, metav1.GetOptions{})
			}
			eventually(t, 20*time.Second, "the labels policy to recognise both identities", func() (bool, string) {
				p, err := policy()
				if err != nil {
					return false, err.Error()
				}
				condition := p.Spec.MatchConditions[0].Expression
				return p.Annotations[guard.AnnotationIdentities] == want && strings.Contains(condition, hub) && strings.Contains(condition, self),
					p.Annotations[guard.AnnotationIdentities] + " " + condition
			})
			p, err := policy()
			if err != nil {
				t.Fatal(err)
			}
			// Checked every half second from the Cluster's side, and on
			// every registration check from the agent's own: neither writes.
			c.patch(t, "agent.kro.run/v1alpha1", "Cluster", "", "home-1", `{"metadata":{"annotations":{"test/poke":"1"}}}`)
			never(t, 5*time.Second, "the labels policy written again", func() bool {
				now, err := policy()
				return err != nil || now.ResourceVersion != p.ResourceVersion
			})
			return ctx
		}).Feature()
	testenv.Test(t, f)
}
