//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/plugin"
)

// When a namespace is deleted, the namespace controller deletes an
// instance's objects and the instance itself in no particular order. An
// object gone before its instance cannot be created again in a terminating
// namespace; the agent says so and waits for the instance's deletion
// instead of reporting a failure and retrying.
func TestInstanceInADeletedNamespace(t *testing.T) {
	const ns = "doomed"
	f := features.New("an instance whose namespace is being deleted").
		Assess("waits for its deletion without failing", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := activeMoodIn(t, cfg, ns, "last", "calm")
			// A policy refusing the instance's deletion holds the namespace
			// in Terminating with the instance in it and its ConfigMap gone:
			// the moment the namespace controller may leave it in otherwise.
			applyPolicy(t, c, "keep-moods", []string{`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: keep-moods}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: doomed}}
    resourceRules:
      - {apiGroups: [kro.run], apiVersions: ["*"], operations: [DELETE], resources: [moods]}
  validations:
    - {expression: "false", message: kept by the test}`,
				`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: keep-moods}, spec: {policyName: keep-moods, validationActions: [Deny]}}`})
			moods := c.resource(t, "kro.run/v1alpha1", "Mood").Namespace(ns)
			eventually(t, 30*time.Second, "the policy to be enforced", func() (bool, string) {
				err := moods.Delete(context.Background(), "last", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
				return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), fmt.Sprintf("a dry-run delete: %v", err)
			})
			c.delete(t, "v1", "Namespace", "", ns)
			eventually(t, 60*time.Second, "the instance to wait for its namespace's deletion", func() (bool, string) {
				u, err := c.get(t, "kro.run/v1alpha1", "Mood", ns, "last")
				if err != nil {
					return false, err.Error()
				}
				cond := condition(u, v1alpha1.ConditionResourcesReady)
				state, _, _ := unstructured.NestedString(u.Object, "status", "state")
				waiting := cond != nil && cond.Reason == v1alpha1.ReasonResourceDeleting &&
					strings.Contains(cond.Message, "namespace doomed is being deleted, with this instance: ConfigMap last (resource config) is not created again in it")
				return state == string(v1alpha1.InstanceInProgress) && waiting, fmt.Sprintf("state %s, %s", state, conditionSummary(u))
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A resource whose namespace does not exist yet is applied as soon as the
// namespace is created, however many times it was refused before: the
// agent follows namespaces, rather than waiting for the work queue's
// backoff (more than a minute after 14 refusals).
func TestResourceWaitsForItsNamespace(t *testing.T) {
	const ns = "elsewhere"
	f := features.New("a resource whose namespace does not exist").
		Assess("says so and is applied within seconds of the namespace's creation", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: elsewhere}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Elsewhere
    spec: {target: string}
  resources:
    - id: note
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}", namespace: "${schema.spec.target}"}
        data: {from: "${schema.metadata.namespace}"}
`)
			c.waitRGDActive(t, "elsewhere")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Elsewhere", ns)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Elsewhere, metadata: {name: away, namespace: %s}, spec: {target: not-yet}}", ns))
			refuseRepeatedly(t, c, "Elsewhere", ns, "away", 14, "does not exist: it is applied as soon as the namespace is created", func(i int) string {
				return fmt.Sprintf(`{"spec":{"target":"not-yet-%d"}}`, i)
			})
			u := c.mustGet(t, "kro.run/v1alpha1", "Elsewhere", ns, "away")
			if want := "applying ConfigMap not-yet-13/away (resource note) in the local cluster: namespace not-yet-13 does not exist: it is applied as soon as the namespace is created"; condition(u, v1alpha1.ConditionResourcesReady).Message != want {
				t.Errorf("the refusal says %q, want %q", condition(u, v1alpha1.ConditionResourcesReady).Message, want)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "elsewhere", "away", "-n", ns)
			if !strings.Contains(out, "Root cause: resource note (ConfigMap away) is not created: the API server refuses it") ||
				!strings.Contains(out, "What to do: namespace not-yet-13 does not exist: create it (kubectl create namespace not-yet-13), or have the instance name one that does; kro-agent creates ConfigMap away within seconds of the namespace's creation") {
				t.Errorf("why-not-ready of a resource whose namespace does not exist (err %v):\n%s", err, out)
			}
			file := filepath.Join(t.TempDir(), "away.yaml")
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Elsewhere, metadata: {name: away, namespace: %s}, spec: {target: not-yet-13}}", ns))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(out, "note: ConfigMap not-yet-13/away INVALID\n"+
				"  namespace not-yet-13 does not exist: create it (kubectl create namespace not-yet-13), or have the instance name one that does; kro-agent applies it as soon as the namespace is created\n") {
				t.Errorf("dry-run of a resource whose namespace does not exist: %v\n%s", err, out)
			}
			c.apply(t, "{apiVersion: v1, kind: Namespace, metadata: {name: not-yet-13}}")
			t.Cleanup(func() { c.delete(t, "v1", "Namespace", "", "not-yet-13") })
			c.activeSoonAfter(t, "Elsewhere", ns, "away", time.Now(), "its namespace was created")
			if cm := c.mustGet(t, "v1", "ConfigMap", "not-yet-13", "away"); cm.Object["data"].(map[string]any)["from"] != ns {
				t.Errorf("ConfigMap data: %v", cm.Object["data"])
			}
			c.delete(t, "kro.run/v1alpha1", "Elsewhere", ns, "away")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
