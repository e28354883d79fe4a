//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/webhook"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

// kubectl runs the real kubectl against the test cluster.
func kubectl(t testing.TB, cfg *envconf.Config, stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := localcluster.BinDir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", cfg.KubeconfigFile(), "--cache-dir", kubeCacheDir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

const brokenRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: broken}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Broken
    spec: {name: string, replicas: integer}
  resources:
  - id: first
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${second.metadata.name}"}
      spec: {replicas: "${schema.spec.name}"}
  - id: second
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${first.metadata.name}"}
      data: {x: "${nowhere.metadata.name}"}
`

const badRuleRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: badrule}
spec:
  schema:
    apiVersion: v1alpha1
    kind: BadRule
    spec: {port: "integer | validation=\"self >\""}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
`

// servingSerial returns the serial of the certificate the webhook serves.
func servingSerial(t testing.TB) string {
	t.Helper()
	return servedCert(t, webhookAddr(t)).SerialNumber.String()
}

// servedCert returns the certificate a webhook server serves at addr.
func servedCert(t testing.TB, addr string) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func TestWebhooks(t *testing.T) {
	const ns = "webhooks"
	f := features.New("admission: RGD validation, instance labels, ownership guard, TLS").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			agentIn(t, cfg, ns)
			return ctx
		}).
		Assess("kubectl apply of an invalid RGD is denied with every error and its path", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			denials := func() float64 {
				m, _ := series(t, "kro_agent_webhook_requests_total", map[string]string{"webhook": "validate-rgd", "result": "denied"})
				return m.GetCounter().GetValue()
			}
			before := denials()
			var out string
			eventually(t, 20*time.Second, "the webhook to be registered", func() (bool, string) {
				var err error
				out, err = kubectl(t, cfg, brokenRGD, "apply", "-f", "-")
				return err != nil && strings.Contains(out, "denied the request"), out
			})
			sayAll(t, "denial", out,
				`admission webhook "resourcegraphdefinitions.kro-agent.kro.run" denied the request: ResourceGraphDefinition broken is invalid`,
				`spec.resources[first].template.spec.replicas: Invalid value: "${schema.spec.name}": expression has type string, but the field expects int`,
				`spec.resources[second].template.data.x`, `undeclared reference to 'nowhere'`,
				`dependency cycle: first -> second -> first`,
			)
			c := newClients(t, cfg)
			if _, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "broken"); err == nil {
				t.Error("the invalid RGD was stored")
			}
			// The agent counts the denial the API server asked of it.
			if denials() <= before {
				t.Errorf("kro_agent_webhook_requests_total counts no denied RGD (%v before the apply, %v after)", before, denials())
			}
			return ctx
		}).
		Assess("a custom kind at a version or spelling the cluster does not serve is denied naming the one it serves", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: misnamed}
spec:
  schema: {apiVersion: v1alpha1, kind: Misnamed, spec: {}}
  resources:
  - id: moved
    template: {apiVersion: kro.run/v1, kind: ResourceGraphDefinition, metadata: {name: x}}
  - id: misspelt
    template: {apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefiniton, metadata: {name: other}}
`
			out, err := kubectl(t, cfg, rgd, "apply", "-f", "-")
			for _, want := range []string{
				`spec.resources[moved].template.kind: Not found: "kro.run/v1 ResourceGraphDefinition (the cluster serves ResourceGraphDefinition as apiVersion kro.run/v1alpha1)"`,
				`spec.resources[misspelt].template.kind: Not found: "kro.run/v1alpha1 ResourceGraphDefiniton (did you mean ResourceGraphDefinition, apiVersion kro.run/v1alpha1?)"`,
			} {
				if err == nil || !strings.Contains(out, want) {
					t.Errorf("denial lacks %q: %v\n%s", want, err, out)
				}
			}
			return ctx
		}).
		Assess("a schema the API server would refuse is denied at its RGD field", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// Only the API server's validation of the generated CRD finds
			// this: the agent asks it with a dry-run apply.
			out, err := kubectl(t, cfg, badRuleRGD, "apply", "-f", "-")
			for _, want := range []string{
				`denied the request: ResourceGraphDefinition badrule is invalid`,
				`spec.schema.spec.port: Invalid value: "validation=self >"`,
				`compilation failed`,
			} {
				if err == nil || !strings.Contains(out, want) {
					t.Errorf("denial lacks %q: %v\n%s", want, err, out)
				}
			}
			c := newClients(t, cfg)
			if _, err := c.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "badrules.kro.run"); !apierrors.IsNotFound(err) {
				t.Errorf("the dry run left a CRD behind: %v", err)
			}
			return ctx
		}).
		Assess("an apiVersion written with its group is refused with what to write", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The RGD CRD's pattern refuses it before any webhook is
			// called; its rule adds the advice.
			const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: grouped}
spec:
  schema: {apiVersion: platform.example.com/v1, kind: Grouped, spec: {}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
`
			out, err := kubectl(t, cfg, rgd, "apply", "-f", "-")
			if want := `spec.schema.apiVersion: Invalid value: the group is given apart, by spec.schema.group (kro.run when not given): write apiVersion: v1 and group: platform.example.com`; err == nil || !strings.Contains(out, want) {
				t.Errorf("refusal lacks %q: %v\n%s", want, err, out)
			}
			return ctx
		}).
		Assess("a valid RGD is admitted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			start := time.Now()
			out, err := kubectl(t, cfg, example(t, "webapp", "rgd.yaml"), "apply", "-f", "-")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("kubectl apply of a valid RGD through the webhook took %s", time.Since(start))
			newClients(t, cfg).waitRGDActive(t, "webapp")
			return ctx
		}).
		Assess("an instance name longer than its label holds is refused at create", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			instance := func(name string) *unstructured.Unstructured {
				return toUnstructured(map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
					"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"name": "longest", "replicas": 1}})
			}
			webapps := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns)
			_, err := webapps.Create(ctx, instance(strings.Repeat("a", 64)), metav1.CreateOptions{})
			want := "metadata.name: Invalid value: must be no more than 63 characters: every object the instance manages carries its name in the label kro.run/instance-name"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("want a refusal saying %q, got %v", want, err)
			}
			longest := strings.Repeat("a", 63)
			if _, err := webapps.Create(ctx, instance(longest), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, longest, v1alpha1.InstanceActive)
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "longest-config")
			if got := cm.GetLabels()[v1alpha1.LabelInstanceName]; got != longest {
				t.Errorf("ConfigMap labelled %s=%q, want the instance's name", v1alpha1.LabelInstanceName, got)
			}
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, longest)
			eventually(t, 30*time.Second, "the instance to be deleted", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, longest)
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("an instance has its ownership labels and finalizer in the create response", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			var created map[string]string
			var finalizers []string
			eventually(t, 20*time.Second, "the instance webhook to label instances", func() (bool, string) {
				name := fmt.Sprintf("labelled-%d", time.Now().UnixNano()%100000)
				inst := toUnstructured(map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
					"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"name": name}})
				out, err := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns).Create(ctx, inst, metav1.CreateOptions{})
				if err != nil {
					return false, err.Error()
				}
				created, finalizers = out.GetLabels(), out.GetFinalizers()
				return created[v1alpha1.LabelOwned] == "true", fmt.Sprint(created)
			})
			for _, k := range []string{v1alpha1.LabelOwned, v1alpha1.LabelRGDName, v1alpha1.LabelRGDID, v1alpha1.LabelKroVersion, v1alpha1.LabelApplySetID, v1alpha1.LabelManagedBy} {
				if created[k] == "" {
					t.Errorf("create response lacks label %s: %v", k, created)
				}
			}
			if !contains(finalizers, v1alpha1.Finalizer) {
				t.Errorf("create response lacks the finalizer: %v", finalizers)
			}
			// An instance with labels, annotations and a finalizer of its
			// author's gets the agent's added one by one beside them. A
			// dry run: the API server calls the webhook all the same.
			own := toUnstructured(map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
				"metadata": map[string]any{"name": "authored", "namespace": ns, "labels": map[string]any{"team": "a"},
					"annotations": map[string]any{"note": "n"}, "finalizers": []any{"e2e.kro.run/hold"}},
				"spec": map[string]any{"name": "authored"}})
			out, err := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns).Create(ctx, own, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("dry-run create of an instance with metadata of its own: %v", err)
			}
			if l := out.GetLabels(); l["team"] != "a" || l[v1alpha1.LabelOwned] != "true" || l[v1alpha1.LabelApplySetID] == "" {
				t.Errorf("labels of an instance with its own: %v", l)
			}
			if a := out.GetAnnotations(); a["note"] != "n" || a[v1alpha1.AnnotationApplySetGroupKinds] == "" || a[v1alpha1.AnnotationApplySetTooling] == "" {
				t.Errorf("annotations of an instance with its own: %v", a)
			}
			if f := out.GetFinalizers(); !slices.Equal(f, []string{"e2e.kro.run/hold", v1alpha1.Finalizer}) {
				t.Errorf("finalizers of an instance with its own: %v", f)
			}
			// An ownership label the author sets otherwise keeps the agent's
			// value, and the author is told so.
			dyn, warnings := warnedClient(t, cfg)
			own.SetLabels(map[string]string{v1alpha1.LabelOwned: "false"})
			out, err = dyn.Resource(schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}).Namespace(ns).Create(ctx, own, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("dry-run create of an instance labelled %s=false: %v", v1alpha1.LabelOwned, err)
			}
			kept := "kro-agent sets these labels on its instances, and they keep its values: kro.run/owned=true"
			if got := warnings.all(); out.GetLabels()[v1alpha1.LabelOwned] != "true" || !slices.Contains(got, kept) {
				t.Errorf("label %s = %q, warnings %q; want true, and the warning %q", v1alpha1.LabelOwned, out.GetLabels()[v1alpha1.LabelOwned], got, kept)
			}
			// The tool that writes an instance may say so in
			// app.kubernetes.io/managed-by, as a Helm chart does: kro-agent
			// neither warns of it nor overwrites it at any later write, or
			// the tool would find the instance changed at every sync. What
			// kro-agent manages says "kro".
			c.apply(t, fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: charted, namespace: %s, labels: {app.kubernetes.io/managed-by: Helm}}, spec: {name: charted, replicas: 1}}`, ns))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "charted", v1alpha1.InstanceActive)
			if l := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "charted").GetLabels(); l[v1alpha1.LabelManagedBy] != "Helm" || l[v1alpha1.LabelOwned] != "true" {
				t.Errorf("labels of an instance rendered by Helm: %v", l)
			}
			if l := c.mustGet(t, "v1", "ConfigMap", ns, "charted-config").GetLabels(); l[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue {
				t.Errorf("labels of the ConfigMap of an instance rendered by Helm: %v", l)
			}
			c.deleteAll(t, "kro.run/v1alpha1", "WebApp", ns, "charted")

			// Named from generateName after admission, an instance has no
			// ApplySet ID at its create rather than one of no name; the
			// agent sets it from the name it was given.
			generated, err := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns).Create(ctx, toUnstructured(map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
				"metadata": map[string]any{"generateName": "generated-", "namespace": ns}, "spec": map[string]any{"name": "generated", "replicas": int64(1)}}), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create of an instance with generateName: %v", err)
			}
			if l := generated.GetLabels(); l[v1alpha1.LabelOwned] != "true" || l[v1alpha1.LabelApplySetID] != "" {
				t.Errorf("labels of an instance named from generateName at its create: %v; want kro-agent's but the ApplySet ID", l)
			}
			want := ownership.ApplySetID(ownership.Instance{GVK: generated.GroupVersionKind(), Name: generated.GetName(), Namespace: ns})
			eventually(t, 30*time.Second, "the agent to label the generated instance with its ApplySet ID", func() (bool, string) {
				l := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, generated.GetName()).GetLabels()
				return l[v1alpha1.LabelApplySetID] == want, fmt.Sprint(l)
			})

			// An update of the spec alone is not sent to the webhook, which
			// would change nothing; one of the labels is.
			calls := func() float64 {
				var n float64
				for _, result := range []string{"allowed", "denied", "error"} {
					m, _ := series(t, "kro_agent_webhook_requests_total", map[string]string{"webhook": "mutate-instance", "result": result})
					n += m.GetCounter().GetValue()
				}
				return n
			}
			webapps := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns)
			before := calls()
			if _, err := webapps.Patch(ctx, generated.GetName(), types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("patching the spec of an instance: %v", err)
			}
			if after := calls(); after != before {
				t.Errorf("a change of an instance's spec called the instance webhook (%v calls before, %v after)", before, after)
			}
			if _, err := webapps.Patch(ctx, generated.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("labelling an instance: %v", err)
			}
			if after := calls(); after <= before {
				t.Errorf("a change of an instance's labels did not call the instance webhook (%v calls before, %v after)", before, after)
			}
			c.deleteAll(t, "kro.run/v1alpha1", "WebApp", ns, generated.GetName())
			return ctx
		}).
		Assess("only the agent may change ownership labels on managed resources", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, webapp(ns, "guarded", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "guarded", v1alpha1.InstanceActive)
			// alice is a cluster admin, but not kro-agent.
			out, err := kubectl(t, cfg, "", "--as", "alice", "--as-group", "system:masters", "-n", ns,
				"label", "deployment", "guarded", "kro.run/instance-name=someone-else", "--overwrite")
			if err == nil || !strings.Contains(out, "label kro.run/instance-name records ownership by kro-agent; only kro-agent may change or remove it") {
				t.Errorf("alice's edit of kro.run/instance-name was not denied: %v\n%s", err, out)
			}
			out, err = kubectl(t, cfg, "", "--as", "alice", "--as-group", "system:masters", "-n", ns,
				"label", "deployment", "guarded", "team=payments", "--overwrite")
			if err != nil {
				t.Errorf("other labels must stay editable: %v\n%s", err, out)
			}
			// The agent's own writes pass: a deleted child comes back with
			// every ownership label.
			c.delete(t, "apps/v1", "Deployment", ns, "guarded")
			eventually(t, 20*time.Second, "the agent to recreate the Deployment", func() (bool, string) {
				d, err := c.get(t, "apps/v1", "Deployment", ns, "guarded")
				return err == nil && d.GetLabels()[v1alpha1.LabelInstanceName] == "guarded", fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("the agent does not take over an object it did not create", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// bob's ConfigMap has the name the instance's config takes.
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: taken-config, namespace: %s}, data: {owner: bob}}", ns))
			c.apply(t, webapp(ns, "taken", ", replicas: 1"))
			eventually(t, 20*time.Second, "the instance to report the refused apply", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "taken")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && cond.Reason == v1alpha1.ReasonApplyFailed &&
					strings.Contains(cond.Message, "ConfigMap "+ns+"/taken-config already exists in the local cluster and was not created by kro-agent (it has no kro.run/instance-id label): kro-agent leaves it as it is"), conditionSummary(inst)
			})
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "taken-config")
			if len(cm.GetLabels()) != 0 || cm.Object["data"].(map[string]any)["owner"] != "bob" {
				t.Errorf("bob's ConfigMap was changed: labels %v, data %v", cm.GetLabels(), cm.Object["data"])
			}
			// Deleting the instance leaves it, too.
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "taken")
			eventually(t, 20*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "taken")
				return err != nil, "still there"
			})
			if _, err := c.get(t, "v1", "ConfigMap", ns, "taken-config"); err != nil {
				t.Errorf("bob's ConfigMap after the instance's deletion: %v", err)
			}
			return ctx
		}).
		Assess("a renewed certificate keeps admission working", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			// A fresh Secret, so the agent issues a short-lived certificate.
			newClients(t, cfg).delete(t, "v1", "Secret", "kro-system", "kro-agent-webhook-certs")
			certValidity, certCheck = 30*time.Second, time.Second
			defer func() { certValidity, certCheck = 24*time.Hour, time.Hour }()
			startAgent(t, cfg)
			first := servingSerial(t)
			eventually(t, 40*time.Second, "the serving certificate to be renewed", func() (bool, string) {
				return servingSerial(t) != first, "still " + first
			})
			out, err := kubectl(t, cfg, brokenRGD, "apply", "-f", "-")
			if err == nil || !strings.Contains(out, "denied the request") {
				t.Errorf("admission after renewal: %v\n%s", err, out)
			}
			stopAgentNow(t)
			certValidity, certCheck = 24*time.Hour, time.Hour
			startAgent(t, cfg)
			// A Secret deleted under a running agent comes back at once,
			// long before the next check, with the CA it had: a new one
			// would not be in the bundle the API server holds.
			c := newClients(t, cfg)
			caOf := func() (string, error) {
				secret, err := c.get(t, "v1", "Secret", "kro-system", "kro-agent-webhook-certs")
				if err != nil {
					return "", err
				}
				ca, _, _ := unstructured.NestedString(secret.Object, "data", "ca.crt")
				return ca, nil
			}
			before, err := caOf()
			if err != nil {
				t.Fatal(err)
			}
			c.delete(t, "v1", "Secret", "kro-system", "kro-agent-webhook-certs")
			eventually(t, 20*time.Second, "the Secret to be written again", func() (bool, string) {
				_, err := caOf()
				return err == nil, fmt.Sprint(err)
			})
			if after, _ := caOf(); after != before {
				t.Errorf("the CA bundle of the Secret written again differs from the one deleted")
			}
			// A serving certificate taken out of the Secret (as another
			// replica's renewal changes it) is issued and served again at
			// once, by the same CA.
			served := servingSerial(t)
			secrets := c.resource(t, "v1", "Secret")
			if _, err := secrets.Namespace("kro-system").Patch(ctx, "kro-agent-webhook-certs", types.JSONPatchType,
				[]byte(`[{"op":"remove","path":"/data/tls.crt"},{"op":"remove","path":"/data/tls.key"}]`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "a new serving certificate to be served", func() (bool, string) {
				return servingSerial(t) != served, "still " + served
			})
			if after, _ := caOf(); after != before {
				t.Errorf("the CA bundle changed when only the serving certificate was taken out")
			}
			if out, err := kubectl(t, cfg, brokenRGD, "apply", "-f", "-"); err == nil || !strings.Contains(out, "denied the request") {
				t.Errorf("admission after the serving certificate was issued again: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("with the agent stopped, objects it does not own still create", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			defer startAgent(t, cfg)
			c := newClients(t, cfg)
			namespace(t, c, "bystander")
			c.apply(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: unrelated, namespace: bystander}, data: {a: b}}")
			// Instances too: their webhook fails open; the agent labels
			// them when it is back.
			c.apply(t, webapp(ns, "while-down", ""))
			// One suspended, which the agent does not label until it is
			// resumed.
			c.apply(t, fmt.Sprintf(`{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: paused-while-down, namespace: %s, annotations: {kro.run/reconcile: suspended}}, spec: {name: paused-while-down, replicas: 1}}`, ns))
			patch := []byte(`{"metadata":{"labels":{"team":"x"}}}`)
			if _, err := c.resource(t, "v1", "ConfigMap").Namespace("bystander").Patch(ctx, "unrelated", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("updating an unrelated ConfigMap with the agent down: %v", err)
			}
			// An RGD's metadata stays writable (a label, another tool's
			// finalizer, which would otherwise hold its deletion): the RGD
			// webhook fails closed, but is not called when the spec stays
			// as it is. A change of the spec still waits for the agent.
			rgds := c.resource(t, "kro.run/v1alpha1", "ResourceGraphDefinition")
			if _, err := rgds.Patch(ctx, "webapp", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("labelling an RGD with the agent down: %v", err)
			}
			specPatch := []byte(`{"spec":{"schema":{"spec":{"greeting":"string | default=\"changed while down\""}}}}`)
			if _, err := rgds.Patch(ctx, "webapp", types.MergePatchType, specPatch, metav1.PatchOptions{}); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
				t.Errorf("a change of an RGD's spec with the agent down: %v; want it refused, the webhook unreachable", err)
			}
			// Nothing of that instance exists yet, and tools that judge
			// health by kstatus (Flux, cli-utils) must not take it for
			// Current: its CRD's defaults give it a status not yet observed.
			inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "while-down")
			observed, found, _ := unstructured.NestedInt64(inst.Object, "status", "observedGeneration")
			if res, err := kstatus.Compute(inst); err != nil || res.Status != kstatus.InProgressStatus || !found || observed != 0 {
				t.Errorf("an instance no agent has seen: kstatus %+v (%v), status %v; want InProgress, observedGeneration 0", res, err, inst.Object["status"])
			}
			startAgent(t, cfg)
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "while-down", v1alpha1.InstanceActive)
			if res, err := kstatus.Compute(c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "while-down")); err != nil || res.Status != kstatus.CurrentStatus {
				t.Errorf("the instance ACTIVE once the agent is back: kstatus %+v (%v), want Current", res, err)
			}
			// Its author's update of the suspended one (resuming it) is
			// admitted, though the webhook is back and the instance still
			// has none of the ownership labels the guard policy lets only
			// the agent add: the webhook leaves them for the agent.
			eventually(t, 20*time.Second, "the suspended instance to say so", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "paused-while-down")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && cond.Reason == "Suspended", conditionSummary(inst)
			})
			if l := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "paused-while-down").GetLabels(); l[v1alpha1.LabelOwned] != "" {
				t.Fatalf("a suspended instance created while the agent was down got labels: %v; the test needs one without", l)
			}
			if out, err := kubectl(t, cfg, "", "--as", "alice", "--as-group", "system:masters", "-n", ns,
				"annotate", "webapp", "paused-while-down", v1alpha1.AnnotationReconcile+"-"); err != nil {
				t.Errorf("resuming a suspended instance the agent has not labelled yet: %v\n%s", err, out)
			}
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "paused-while-down", v1alpha1.InstanceActive)
			if l := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "paused-while-down").GetLabels(); l[v1alpha1.LabelOwned] != "true" {
				t.Errorf("labels once resumed: %v; want the agent's", l)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A kind whose registration with the mutating webhook failed is registered
// once the API server takes writes again, without waiting for another kind.
func TestFailedWebhookRegistrationIsRetried(t *testing.T) {
	f := features.New("a failed webhook registration is retried").
		Assess("the new kind reaches the mutating webhook", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgent(t, cfg)
			c := newClients(t, cfg)
			registered := func() (bool, string) { return c.instanceWebhookCovers(t, "retriedregs") }
			failRegistrations.Store(true)
			defer failRegistrations.Store(false)
			c.apply(t, noteRGD("retriedregs", "RetriedReg", "", `"${schema.spec.text}"`))
			c.waitRGDActive(t, "retriedregs")
			if ok, _ := registered(); ok {
				t.Fatal("the kind was registered while the API server refused the agent's writes: the test injects nothing")
			}
			failRegistrations.Store(false)
			eventually(t, 20*time.Second, "the mutating webhook to cover retriedregs", registered)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// What the agent registers and someone deletes or edits comes back at
// once, without a restart: the agent watches it, and an hour's periodic
// check would be far too late here. While it is intact nothing is written.
func TestDeletedRegistrationsAreRestored(t *testing.T) {
	f := features.New("webhook configurations and guard policies deleted by hand come back").
		Assess("a deleted mutating configuration, guard policy and binding are registered again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			defer stopAgentNow(t) // the next test starts the usual agent
			startAgentWith(t, cfg, func(o *agent.Options) { o.Webhooks.RegistrationCheck = time.Hour })
			c := newClients(t, cfg)
			admission := func(kind string) dynamic.ResourceInterface {
				return c.resource(t, "admissionregistration.k8s.io/v1", kind)
			}
			// The agent is up once its validating configuration is; the
			// guard policies are registered a moment after. The API server
			// type-checks a policy after each change and writes what it
			// found to its status: not someone else's edit.
			eventually(t, 10*time.Second, "the guard policy to be registered and type-checked", func() (bool, string) {
				vap, err := admission("ValidatingAdmissionPolicy").Get(ctx, guard.LabelsPolicyName, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				checked, _, _ := unstructured.NestedInt64(vap.Object, "status", "observedGeneration")
				return checked == vap.GetGeneration(), fmt.Sprintf("generation %d, type-checked %d", vap.GetGeneration(), checked)
			})
			// The registrations that do not depend on the kinds served.
			// The mutating configuration is left out: it follows the RGDs
			// in the cluster, and earlier tests' RGDs may still be going
			// away while this test runs, each one a legitimate write.
			registrations := func() []string {
				var writes []string
				for _, w := range writeRequestsIn("") {
					if strings.Contains(w, "/apis/admissionregistration.k8s.io/") && !strings.Contains(w, "/mutatingwebhookconfigurations") {
						writes = append(writes, w)
					}
				}
				return writes
			}
			var before int
			eventually(t, 20*time.Second, "the agent to be done registering", func() (bool, string) {
				n := len(registrations())
				time.Sleep(time.Second)
				before = len(registrations())
				return before == n, fmt.Sprint(registrations()[n:])
			})
			// Intact, whatever the status says: nothing is written again.
			warning := []byte(`{"status":{"typeChecking":{"expressionWarnings":[{"fieldRef":"spec.validations[0].expression","warning":"written by a test"}]}}}`)
			if _, err := admission("ValidatingAdmissionPolicy").Patch(ctx, guard.LabelsPolicyName, types.MergePatchType, warning, metav1.PatchOptions{FieldManager: "someone"}, "status"); err != nil {
				t.Fatal(err)
			}
			never(t, 2*time.Second, "the intact registrations were written again", func() bool {
				if writes := registrations()[before:]; len(writes) > 0 {
					t.Logf("written: %v", writes)
					return true
				}
				return false
			})
			for _, o := range []struct{ kind, name string }{
				{"MutatingWebhookConfiguration", webhook.ConfigName},
				{"ValidatingAdmissionPolicy", guard.LabelsPolicyName},
				{"ValidatingAdmissionPolicyBinding", guard.NoTakeoverPolicyName},
			} {
				if err := admission(o.kind).Delete(ctx, o.name, metav1.DeleteOptions{}); err != nil {
					t.Fatalf("deleting %s %s: %v", o.kind, o.name, err)
				}
				eventually(t, 10*time.Second, o.kind+" "+o.name+" to be registered again", func() (bool, string) {
					_, err := admission(o.kind).Get(ctx, o.name, metav1.GetOptions{})
					return err == nil, fmt.Sprint(err)
				})
			}
			// An edit is undone too: a webhook that gives up after 30 s
			// holds up every RGD write that long when the agent is gone,
			// and a binding that only warns is a guard that does not guard.
			for _, e := range []struct {
				kind, name, undone string
				patchType          types.PatchType
				patch              string
				// restored reads the edited field back.
				restored func(*unstructured.Unstructured) (bool, string)
			}{{
				kind: "ValidatingWebhookConfiguration", name: webhook.ConfigName, undone: "the RGD webhook's timeout to be 10 s again",
				patchType: types.JSONPatchType, patch: `[{"op":"replace","path":"/webhooks/0/timeoutSeconds","value":30}]`,
				restored: func(vwc *unstructured.Unstructured) (bool, string) {
					hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
					if len(hooks) == 0 {
						return false, "no webhooks"
					}
					seconds, _, _ := unstructured.NestedInt64(hooks[0].(map[string]any), "timeoutSeconds")
					return seconds == 10, fmt.Sprint(seconds)
				},
			}, {
				kind: "ValidatingAdmissionPolicyBinding", name: guard.LabelsPolicyName, undone: "the binding to deny again",
				patchType: types.MergePatchType, patch: `{"spec":{"validationActions":["Warn"]}}`,
				restored: func(b *unstructured.Unstructured) (bool, string) {
					actions, _, _ := unstructured.NestedStringSlice(b.Object, "spec", "validationActions")
					return slices.Equal(actions, []string{"Deny"}), fmt.Sprint(actions)
				},
			}} {
				if _, err := admission(e.kind).Patch(ctx, e.name, e.patchType, []byte(e.patch), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
					t.Fatal(err)
				}
				eventually(t, 10*time.Second, e.undone, func() (bool, string) {
					obj, err := admission(e.kind).Get(ctx, e.name, metav1.GetOptions{})
					if err != nil {
						return false, err.Error()
					}
					return e.restored(obj)
				})
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

var gadgetCRD = exampleCRD("Gadget", "example.org")

func gadgetRGD(specFields string) string {
	return `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gadgetry}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Gadgetry
    spec: {` + specFields + `}
  resources:
  - id: gadget
    template:
      apiVersion: example.org/v1
      kind: Gadget
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`
}

// An RGD admitted once can become invalid without anyone touching it: the
// CRD of a kind it uses is uninstalled. Its metadata must stay editable, or
// a label could not be changed and a finalizer of another tool could not
// be removed, leaving the RGD stuck in deletion. Its spec is still checked.
func TestRGDWhoseKindIsGoneStaysEditable(t *testing.T) {
	f := features.New("an RGD whose kind is no longer served").
		Assess("takes metadata changes and its deletion, and still refuses an invalid spec", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgent(t, cfg)
			c := newClients(t, cfg)
			c.apply(t, gadgetCRD)
			eventually(t, 30*time.Second, "the RGD using Gadget to be admitted", func() (bool, string) {
				_, err := c.tryApply(t, gadgetRGD("size: integer"))
				return err == nil, fmt.Sprint(err)
			})
			c.waitRGDActive(t, "gadgetry")
			c.deleteCRD(t, "gadgets.example.org")
			// A fresh agent knows nothing of Gadget from before.
			stopAgentNow(t)
			startAgent(t, cfg)
			eventually(t, 30*time.Second, "the RGD to report Gadget unserved", func() (bool, string) {
				cond := rgdCondition(t, c, "gadgetry", "GraphAccepted")
				return cond != nil && cond.Status == metav1.ConditionFalse, fmt.Sprint(cond)
			})

			if out, err := kubectl(t, cfg, "", "label", "resourcegraphdefinition", "gadgetry", "team=payments"); err != nil {
				t.Errorf("labelling the RGD: %v\n%s", err, out)
			}
			out, err := kubectl(t, cfg, gadgetRGD("size: integer, color: string"), "apply", "-f", "-")
			if err == nil || !strings.Contains(out, "denied the request: ResourceGraphDefinition gadgetry is invalid") || !strings.Contains(out, "Gadget") {
				t.Errorf("a spec change using the unserved kind was not denied: %v\n%s", err, out)
			}

			// Another tool's finalizer holds the deletion until it lets go.
			if out, err := kubectl(t, cfg, "", "patch", "resourcegraphdefinition", "gadgetry", "--type", "merge",
				"-p", `{"metadata":{"finalizers":["example.org/hold"]}}`); err != nil {
				t.Fatalf("adding a finalizer: %v\n%s", err, out)
			}
			c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "gadgetry")
			if out, err := kubectl(t, cfg, "", "patch", "resourcegraphdefinition", "gadgetry", "--type", "merge",
				"-p", `{"metadata":{"finalizers":null}}`); err != nil {
				t.Errorf("removing the finalizer of the RGD being deleted: %v\n%s", err, out)
			}
			eventually(t, 20*time.Second, "the RGD to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "gadgetry")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// The usual way to ship an RGD with the CRD it uses is one file: kubectl
// sends the RGD a few milliseconds after the CRD, before the API server
// serves the new kind or has published its schema, and an RGD using
// another's kind before the agent has created its CRD. The RGD webhook
// waits for them rather than deny what is valid a moment later.
func TestRGDAppliedWithItsCRD(t *testing.T) {
	const ns = "with-crd"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: sprocketapps}
spec:
  schema:
    apiVersion: v1alpha1
    kind: SprocketApp
    spec: {size: integer | default=3}
  resources:
  - id: sprocket
    template:
      apiVersion: example.io/v1
      kind: Sprocket
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`
	// And an RGD using the kind the first generates, in the same file.
	const suite = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: sprocketsuites}
spec:
  schema:
    apiVersion: v1alpha1
    kind: SprocketSuite
    spec: {size: integer | default=3}
  resources:
  - id: app
    template:
      apiVersion: kro.run/v1alpha1
      kind: SprocketApp
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`
	f := features.New("a CRD and RGDs using it and each other in one kubectl apply").
		Assess("the RGDs are admitted and serve instances", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			if out, err := kubectl(t, cfg, exampleCRD("Sprocket", "example.io")+"\n---\n"+rgd+"\n---\n"+suite, "apply", "-f", "-"); err != nil {
				t.Fatalf("kubectl apply of the CRD and the RGDs: %v\n%s", err, out)
			}
			c.waitRGDActive(t, "sprocketapps")
			c.waitRGDActive(t, "sprocketsuites")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "SprocketApp", ns)
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: SprocketApp, metadata: {name: s1, namespace: "+ns+"}}")
			c.waitState(t, "kro.run/v1alpha1", "SprocketApp", ns, "s1", v1alpha1.InstanceActive)
			if size, _, _ := unstructured.NestedInt64(c.mustGet(t, "example.io/v1", "Sprocket", ns, "s1").Object, "spec", "size"); size != 3 {
				t.Errorf("Sprocket s1 spec.size = %d, want 3", size)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
