//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
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
			c := agentIn(t, cfg, ns)
			c.apply(t, moodRGD)
			c.waitRGDActive(t, "mood")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Mood", ns)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: last, namespace: %s}, spec: {mood: calm}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Mood", ns, "last", v1alpha1.InstanceActive)
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
