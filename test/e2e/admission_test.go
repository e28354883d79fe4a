//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/plugin"
)

// refusingPolicy is a ValidatingAdmissionPolicy and its binding, both
// named name, that refuse ConfigMaps in namespace ns whose data.key starts
// with "refused".
func refusingPolicy(name, ns, key string) []string {
	return configMapPolicy(name, ns, "CREATE, UPDATE",
		fmt.Sprintf(`!has(object.data) || !('%[1]s' in object.data) || !object.data['%[1]s'].startsWith('refused')`, key),
		"this ConfigMap is refused by policy "+name)
}

// configMapPolicy is a ValidatingAdmissionPolicy and its binding, both
// named name, that deny the operations (a YAML list's items) on
// ConfigMaps in namespace ns unless expression holds, with message.
func configMapPolicy(name, ns, operations, expression, message string) []string {
	return []string{fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [%s], resources: [configmaps]}
  validations:
    - expression: %q
      message: %s`, name, ns, operations, expression, message), fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]`, name)}
}

// applyPolicy applies a ValidatingAdmissionPolicy and its binding, both
// named name, in the cluster of c, and removes them when the test ends.
func applyPolicy(t *testing.T, c *clients, name string, policyAndBinding []string) {
	t.Helper()
	for _, doc := range policyAndBinding {
		c.apply(t, doc)
	}
	t.Cleanup(func() {
		for _, kind := range []string{"ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"} {
			_ = c.resource(t, "admissionregistration.k8s.io/v1", kind).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
}

// applyRefusingPolicy applies refusingPolicy in the cluster of c, removes
// it when the test ends, and waits until the API server enforces it.
func applyRefusingPolicy(t *testing.T, c *clients, name, ns, key string) {
	t.Helper()
	applyPolicy(t, c, name, refusingPolicy(name, ns, key))
	probe := fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: policy-probe, namespace: %s}, data: {%s: refused}}", ns, key)
	eventually(t, 30*time.Second, "policy "+name+" to be enforced", func() (bool, string) {
		_, err := c.tryApply(t, probe)
		if err == nil {
			_ = c.resource(t, "v1", "ConfigMap").Namespace(ns).Delete(context.Background(), "policy-probe", metav1.DeleteOptions{})
		}
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), fmt.Sprintf("a refused ConfigMap: %v", err)
	})
}

// refuseRepeatedly has the agent try an instance the API server refuses n
// more times, changing its spec with patch(i) and waiting each time for
// the refusal of the new generation, whose condition says refusal. Each
// refusal doubles the work queue's wait before its next retry: after 14 it
// is more than a minute. The work queue keeps the earliest retry it was
// asked for, though: one an early refusal scheduled seconds later. Once
// that has come and been refused, the instance's next retry is minutes
// away, and what brings it back sooner is what the test is about. It
// comes within 30 s, unless it came in the second before the count of
// refusals is read.
func refuseRepeatedly(t *testing.T, c *clients, kind, ns, name string, n int, refusal string, patch func(i int) string) {
	t.Helper()
	ri := c.resource(t, "kro.run/v1alpha1", kind).Namespace(ns)
	for i := range n {
		u, err := ri.Patch(context.Background(), name, types.MergePatchType, []byte(patch(i)), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		generation := u.GetGeneration()
		eventually(t, 10*time.Second, fmt.Sprintf("generation %d of %s to be refused", generation, name), func() (bool, string) {
			u, err := c.get(t, "kro.run/v1alpha1", kind, ns, name)
			if err != nil {
				return false, err.Error()
			}
			cond := condition(u, v1alpha1.ConditionResourcesReady)
			return cond != nil && cond.ObservedGeneration == generation && cond.Reason == v1alpha1.ReasonApplyFailed &&
				strings.Contains(cond.Message, refusal), conditionSummary(u)
		})
	}
	time.Sleep(time.Second)
	refused := instanceReconcileErrors(t)
	for deadline := time.Now().Add(30 * time.Second); instanceReconcileErrors(t) == refused && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
}

// soon is how quickly an instance is ACTIVE once what refused it changed.
const soon = 20 * time.Second

// activeSoonAfter waits for an instance to be ACTIVE, and fails the test
// if that took longer than soon from since.
func (c *clients) activeSoonAfter(t *testing.T, kind, ns, name string, since time.Time, what string) {
	t.Helper()
	c.activeWithin(t, kind, ns, name, since, soon, what)
}

// activeWithin waits for an instance to be ACTIVE, and fails the test if
// that took longer than within from since.
func (c *clients) activeWithin(t *testing.T, kind, ns, name string, since time.Time, within time.Duration, what string) {
	t.Helper()
	c.waitState(t, "kro.run/v1alpha1", kind, ns, name, v1alpha1.InstanceActive)
	if waited := time.Since(since); waited > within {
		t.Errorf("%s %s became ACTIVE %s after %s", kind, name, waited.Round(time.Second), what)
	}
}

const moodRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: mood}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Mood
    spec: {mood: string}
  resources:
    - id: config
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}"}
        data: {mood: "${schema.spec.mood}"}
`

// moodsIn starts the agent, makes namespace ns and serves Moods (moodRGD),
// their webhook registered.
func moodsIn(t *testing.T, cfg *envconf.Config, ns string) *clients {
	t.Helper()
	c := agentIn(t, cfg, ns)
	c.apply(t, moodRGD)
	c.waitRGDActive(t, "mood")
	c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Mood", ns)
	return c
}

// activeMoodIn creates the Mood name in ns, with moodsIn's agent and RGD,
// and waits until it is ACTIVE.
func activeMoodIn(t *testing.T, cfg *envconf.Config, ns, name, mood string) *clients {
	t.Helper()
	c := moodsIn(t, cfg, ns)
	c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: %s, namespace: %s}, spec: {mood: %s}}", name, ns, mood))
	c.waitState(t, "kro.run/v1alpha1", "Mood", ns, name, v1alpha1.InstanceActive)
	return c
}

// refusedMoodIn creates the Mood sulky in ns, whose ConfigMap the
// admission policy named policy refuses, applied and enforced first.
func refusedMoodIn(t *testing.T, cfg *envconf.Config, ns, policy string) *clients {
	t.Helper()
	c := moodsIn(t, cfg, ns)
	applyRefusingPolicy(t, c, policy, ns, "mood")
	c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: sulky, namespace: %s}, spec: {mood: refused}}", ns))
	return c
}

func TestRefusedInstanceIsRetriedWhenAdmissionChanges(t *testing.T) {
	const ns = "refusals"
	f := features.New("an instance an admission policy refuses is tried again once the policy changes").
		Assess("refused many times, then admitted within seconds of the policy's removal", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := refusedMoodIn(t, cfg, ns, "refuse-moods")
			refuseRepeatedly(t, c, "Mood", ns, "sulky", 14, "is refused by policy", func(i int) string {
				return fmt.Sprintf(`{"spec":{"mood":"refused-%d"}}`, i)
			})
			c.delete(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", "refuse-moods")
			c.activeSoonAfter(t, "Mood", ns, "sulky", time.Now(), "the policy's binding was deleted")
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "sulky"); cm.Object["data"].(map[string]any)["mood"] != "refused-13" {
				t.Errorf("ConfigMap data: %v", cm.Object["data"])
			}
			c.delete(t, "kro.run/v1alpha1", "Mood", ns, "sulky")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A write the API server refuses until something changes is not sent again
// at once: the agent tries again a second later, then after twice as long
// each time. What usually ends a refusal brings the instance back through
// what the agent watches; client-go's pace, from 5 ms, would send some
// eight refused applies in the first second.
func TestLastingRefusalIsTriedAgainAfterASecond(t *testing.T) {
	const ns = "paced"
	f := features.New("an apply the API server refuses for good").
		Assess("is tried again a second later, not at once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := refusedMoodIn(t, cfg, ns, "refuse-paced")
			eventually(t, 30*time.Second, "the instance to be refused", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "Mood", ns, "sulky")
				cond := condition(u, v1alpha1.ConditionResourcesReady)
				return cond != nil && cond.Reason == v1alpha1.ReasonApplyFailed && strings.Contains(cond.Message, "is refused by policy"), conditionSummary(u)
			})
			before := len(writeRequestsIn(ns))
			// Retries come 1 s and 3 s after the first refusal, and are
			// refused the same: no status write. One more may come of the
			// policy's own creation, should the agent see it only after
			// the refusal (a retry two seconds after an admission change);
			// client-go's pace sends five or more here.
			time.Sleep(3 * time.Second)
			if tries := writeRequestsIn(ns)[before:]; len(tries) > 3 {
				t.Errorf("%d writes in the 3 s after the refusal, want at most 3:\n%s", len(tries), strings.Join(tries, "\n"))
			}
			c.delete(t, "kro.run/v1alpha1", "Mood", ns, "sulky")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A deleted instance whose object an admission policy will not let go
// stays DELETING and says which object and why, told once as a Warning;
// it goes once the policy does.
func TestRefusedDeletionSaysWhatItWaitsFor(t *testing.T) {
	const ns = "kept"
	f := features.New("a deletion an admission policy refuses").
		Assess("is named on the instance, and goes on once the policy is gone", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := activeMoodIn(t, cfg, ns, "clingy", "stay")
			applyPolicy(t, c, "keep-configmaps", configMapPolicy("keep-configmaps", ns, "DELETE",
				"!has(oldObject.data) || !('mood' in oldObject.data)", "ConfigMaps with a mood are kept by policy keep-configmaps"))
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: policy-probe, namespace: %s}, data: {mood: probe}}", ns))
			eventually(t, 30*time.Second, "policy keep-configmaps to be enforced", func() (bool, string) {
				err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Delete(context.Background(), "policy-probe", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
				return err != nil, fmt.Sprintf("a dry-run delete: %v", err)
			})

			c.delete(t, "kro.run/v1alpha1", "Mood", ns, "clingy")
			refused := "ConfigMap " + ns + "/clingy cannot be deleted: "
			eventually(t, 30*time.Second, "the deleted instance to say what cannot be deleted", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Mood", ns, "clingy")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && rr.Reason == v1alpha1.ReasonDeleting && strings.Contains(rr.Message, refused) &&
					strings.Contains(rr.Message, "ConfigMaps with a mood are kept by policy keep-configmaps"), conditionSummary(inst)
			})
			eventually(t, 10*time.Second, "the refused deletion to be told", func() (bool, string) {
				events := eventsAbout(t, c, ns, "clingy", "DeleteFailed")
				return len(events) == 1 && strings.Contains(fmt.Sprint(events[0].Object["note"]), refused), fmt.Sprint(len(events), " events")
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "mood", "clingy", "-n", ns)
			if err == nil || !strings.Contains(out, "the API server refuses the deletion the condition above names") {
				t.Errorf("why-not-ready for a refused deletion: %v\n%s", err, out)
			}
			c.delete(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", "keep-configmaps")
			c.deleteAll(t, "kro.run/v1alpha1", "Mood", ns, "clingy")
			c.delete(t, "v1", "ConfigMap", ns, "policy-probe")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A deletion with propagationPolicy Orphan that an admission policy keeps
// from freeing an object stays DELETING, says which object and why, and
// why-not-ready says the resources are being left in place; it finishes,
// the object kept, once the policy goes, though the garbage collector
// took the finalizer "orphan" off long before.
func TestRefusedOrphaningSaysWhatItWaitsFor(t *testing.T) {
	const ns = "orphanrefused"
	f := features.New("an orphaning deletion an admission policy refuses").
		Assess("is named on the instance, and goes on once the policy is gone", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := activeMoodIn(t, cfg, ns, "loyal", "stay")
			applyPolicy(t, c, "keep-labels", configMapPolicy("keep-labels", ns, "UPDATE",
				"!('kro.run/node-id' in oldObject.metadata.?labels.orValue({})) || ('kro.run/node-id' in object.metadata.?labels.orValue({}))",
				"ConfigMaps keep their labels by policy keep-labels"))
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: policy-probe, namespace: %s, labels: {kro.run/node-id: probe}}}", ns))
			eventually(t, 30*time.Second, "policy keep-labels to be enforced", func() (bool, string) {
				_, err := c.resource(t, "v1", "ConfigMap").Namespace(ns).Patch(context.Background(), "policy-probe", types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"kro.run/node-id":null}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
				return err != nil, fmt.Sprintf("a dry-run relabel: %v", err)
			})
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "loyal")

			if out, err := kubectl(t, cfg, "", "-n", ns, "delete", "mood", "loyal", "--cascade=orphan", "--wait=false"); err != nil {
				t.Fatalf("kubectl delete --cascade=orphan: %v\n%s", err, out)
			}
			eventually(t, 30*time.Second, "the deleted instance to say what cannot be left in place", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Mood", ns, "loyal")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && rr.Reason == v1alpha1.ReasonDeleting && v1alpha1.QuotesOrphaning(rr.Message) &&
					strings.Contains(rr.Message, "ConfigMap "+ns+"/loyal cannot be released: ") &&
					strings.Contains(rr.Message, "ConfigMaps keep their labels by policy keep-labels"), conditionSummary(inst)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "mood", "loyal", "-n", ns)
			if err == nil || !strings.Contains(out, "What to do: the deletion asked to leave its resources in place (propagationPolicy Orphan)") {
				t.Errorf("why-not-ready for a refused orphaning: %v\n%s", err, out)
			}
			c.delete(t, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", "keep-labels")
			eventually(t, 30*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "Mood", ns, "loyal")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			if now, err := c.get(t, "v1", "ConfigMap", ns, "loyal"); err != nil || now.GetUID() != cm.GetUID() || now.GetLabels()[v1alpha1.LabelInstanceID] != "" {
				t.Errorf("the ConfigMap after the orphaning: %v %v", err, now)
			}
			c.delete(t, "v1", "ConfigMap", ns, "policy-probe")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// An instance refused because another owner's object holds a name its
// graph renders is tried again as soon as that object is deleted, however
// many times it was refused before: what why-not-ready advises (delete it
// if nothing needs it) takes effect at once.
func TestNameIsTakenOnceItsHolderIsDeleted(t *testing.T) {
	const ns = "heldnames"
	f := features.New("a name another owner's object holds").
		Assess("is taken within seconds of that object's deletion", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := moodsIn(t, cfg, ns)
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: taken, namespace: %s}, data: {owner: bob}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: taken, namespace: %s}, spec: {mood: patient}}", ns))
			refuseRepeatedly(t, c, "Mood", ns, "taken", 14, "ConfigMap "+ns+"/taken already exists in the local cluster and was not created by kro-agent", func(i int) string {
				return fmt.Sprintf(`{"spec":{"mood":"patient-%d"}}`, i)
			})
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "taken"); cm.Object["data"].(map[string]any)["owner"] != "bob" {
				t.Fatalf("bob's ConfigMap was changed: %v", cm.Object["data"])
			}
			c.delete(t, "v1", "ConfigMap", ns, "taken")
			c.activeSoonAfter(t, "Mood", ns, "taken", time.Now(), "the ConfigMap holding its name was deleted")
			cm := c.mustGet(t, "v1", "ConfigMap", ns, "taken")
			if cm.Object["data"].(map[string]any)["mood"] != "patient-13" || cm.GetLabels()[v1alpha1.LabelInstanceName] != "taken" {
				t.Errorf("the instance's ConfigMap: labels %v, data %v", cm.GetLabels(), cm.Object["data"])
			}
			c.delete(t, "kro.run/v1alpha1", "Mood", ns, "taken")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// quotaManifest is a ResourceQuota named name in ns with the hard limits
// hard ("resource: quantity, ...").
func quotaManifest(ns, name, hard string) string {
	return fmt.Sprintf(`{apiVersion: v1, kind: ResourceQuota, metadata: {name: %s, namespace: %s}, spec: {hard: {%s}}}`, name, ns, hard)
}

// applyCountedQuota applies a ResourceQuota and waits for the quota
// controller to count its limit and usage of resource: until then the API
// server refuses what the quota counts for its unknown usage, not for the
// limit a test means.
func applyCountedQuota(t *testing.T, c *clients, ns, name, hard, resource string) {
	t.Helper()
	c.apply(t, quotaManifest(ns, name, hard))
	eventually(t, 30*time.Second, "the quota controller to count the quota's usage of "+resource, func() (bool, string) {
		q := c.mustGet(t, "v1", "ResourceQuota", ns, name)
		want, _, _ := unstructured.NestedString(q.Object, "spec", "hard", resource)
		limit, _, _ := unstructured.NestedString(q.Object, "status", "hard", resource)
		_, counted, _ := unstructured.NestedString(q.Object, "status", "used", resource)
		return limit == want && counted, fmt.Sprint(q.Object["status"])
	})
}

func TestQuotaRefusalIsRetriedWhenTheQuotaChanges(t *testing.T) {
	const ns = "quotas"
	f := features.New("a write a ResourceQuota has no room for").
		Assess("says which quota, and is applied within seconds of the quota's change", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := moodsIn(t, cfg, ns)
			// No room for any ConfigMap (each namespace has one already,
			// kube-root-ca.crt), counted before the instance comes.
			applyCountedQuota(t, c, ns, "room", `count/configmaps: "0"`, "count/configmaps")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: cramped, namespace: %s}, spec: {mood: waiting}}", ns))
			refuseRepeatedly(t, c, "Mood", ns, "cramped", 14, "exceeded quota: room", func(i int) string {
				return fmt.Sprintf(`{"spec":{"mood":"waiting-%d"}}`, i)
			})
			u := c.mustGet(t, "kro.run/v1alpha1", "Mood", ns, "cramped")
			if msg := condition(u, v1alpha1.ConditionResourcesReady).Message; !strings.HasSuffix(msg, "; it is applied as soon as ResourceQuota "+ns+"/room allows it") {
				t.Errorf("the refusal says %q; want it to name the quota it waits on", msg)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "mood", "cramped", "-n", ns)
			if !strings.Contains(out, "What to do: ResourceQuota room in namespace "+ns+" has no room for ConfigMap cramped: raise its limits (kubectl edit resourcequota room -n "+ns+")") {
				t.Errorf("why-not-ready of a resource a quota refuses (err %v):\n%s", err, out)
			}
			c.apply(t, quotaManifest(ns, "room", `count/configmaps: "10"`))
			c.activeSoonAfter(t, "Mood", ns, "cramped", time.Now(), "its quota was raised")
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "cramped"); cm.Object["data"].(map[string]any)["mood"] != "waiting-13" {
				t.Errorf("ConfigMap data: %v", cm.Object["data"])
			}
			c.delete(t, "kro.run/v1alpha1", "Mood", ns, "cramped")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A Pod that admission refuses for what the namespace asks of Pods (the
// requests a ResourceQuota limits, its Pod Security level, its
// LimitRanges) waits on what refused it: changing that lets it be created
// within seconds, however many times it was refused before.
func TestRefusedPodIsRetriedWhenWhatRefusedItChanges(t *testing.T) {
	f := features.New("a Pod admission refuses for what its namespace asks of Pods")
	for _, tc := range []struct {
		ns, what string
		// refuse sets the namespace up to refuse the Pod; admit changes
		// it to let the Pod in.
		refuse, admit            func(t *testing.T, c *clients, ns string)
		refusal, waitsOn, advice string
		// within is how soon after admit the instance is ACTIVE; soon
		// when zero.
		within time.Duration
	}{{
		ns: "podquotas", what: "a ResourceQuota limiting what it does not specify",
		refuse: func(t *testing.T, c *clients, ns string) {
			applyCountedQuota(t, c, ns, "compute", `limits.cpu: "2", pods: "10"`, "limits.cpu")
		},
		admit: func(t *testing.T, c *clients, ns string) {
			c.apply(t, quotaManifest(ns, "compute", `pods: "10"`))
		},
		refusal: "failed quota: compute: must specify limits.cpu for: app",
		waitsOn: "; it is applied as soon as ResourceQuota podquotas/compute allows it",
		advice:  "What to do: ResourceQuota compute in namespace podquotas limits what Pod unbounded does not specify (above): set those requests and limits in resource pod's template, or take them out of the quota's hard limits (kubectl edit resourcequota compute -n podquotas)",
	}, {
		ns: "podlevels", what: "its namespace's Pod Security level",
		refuse: func(t *testing.T, c *clients, ns string) {
			c.apply(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s, labels: {pod-security.kubernetes.io/enforce: restricted}}}`, ns))
		},
		admit: func(t *testing.T, c *clients, ns string) {
			c.apply(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s, labels: {pod-security.kubernetes.io/enforce: baseline}}}`, ns))
		},
		refusal: `violates PodSecurity "restricted:latest"`,
		waitsOn: "; it is applied as soon as the template, or the label pod-security.kubernetes.io/enforce of namespace podlevels, allows it",
		advice:  "What to do: namespace podlevels enforces the restricted Pod Security Standard (its label pod-security.kubernetes.io/enforce), which Pod unbounded does not meet: set in resource pod's template what the message asks",
	}, {
		ns: "podlimits", what: "a LimitRange of its namespace",
		refuse: func(t *testing.T, c *clients, ns string) {
			c.apply(t, fmt.Sprintf(`{apiVersion: v1, kind: LimitRange, metadata: {name: small, namespace: %s}, spec: {limits: [{type: Pod, max: {cpu: 100m}}]}}`, ns))
		},
		admit: func(t *testing.T, c *clients, ns string) {
			c.delete(t, "v1", "LimitRange", ns, "small")
		},
		refusal: "maximum cpu usage per Pod is 100m.  No limit is specified",
		// The API server's LimitRanger may go on refusing by a LimitRange
		// just deleted for 30 s, when it had listed them itself.
		within:  40 * time.Second,
		waitsOn: "; it is applied as soon as the template, or the LimitRanges of namespace podlimits, allows it",
		advice:  "What to do: a LimitRange of namespace podlimits does not allow what Pod unbounded asks for (kubectl describe limitrange -n podlimits shows them): change the values in resource pod's template (or the instance's fields they come from), or the LimitRange",
	}} {
		f = f.Assess("says what refused it, and is applied within seconds of its change: "+tc.what, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, tc.ns)
			c.apply(t, sleeperRGD)
			c.waitRGDActive(t, "sleeper")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "Sleeper", tc.ns)
			tc.refuse(t, c, tc.ns)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Sleeper, metadata: {name: unbounded, namespace: %s}, spec: {note: waiting}}", tc.ns))
			refuseRepeatedly(t, c, "Sleeper", tc.ns, "unbounded", 14, tc.refusal, func(i int) string {
				return fmt.Sprintf(`{"spec":{"note":"waiting-%d"}}`, i)
			})
			u := c.mustGet(t, "kro.run/v1alpha1", "Sleeper", tc.ns, "unbounded")
			if msg := condition(u, v1alpha1.ConditionResourcesReady).Message; !strings.HasSuffix(msg, tc.waitsOn) {
				t.Errorf("the refusal says %q; want it to end %q", msg, tc.waitsOn)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "sleeper", "unbounded", "-n", tc.ns)
			if !strings.Contains(out, tc.advice) {
				t.Errorf("why-not-ready of the refused Pod (err %v) lacks %q:\n%s", err, tc.advice, out)
			}
			tc.admit(t, c, tc.ns)
			within := tc.within
			if within == 0 {
				within = soon
			}
			c.activeWithin(t, "Sleeper", tc.ns, "unbounded", time.Now(), within, "what refused it changed")
			if pod := c.mustGet(t, "v1", "Pod", tc.ns, "unbounded"); pod.GetAnnotations()["note"] != "waiting-13" {
				t.Errorf("Pod annotations: %v", pod.GetAnnotations())
			}
			c.delete(t, "kro.run/v1alpha1", "Sleeper", tc.ns, "unbounded")
			return ctx
		})
	}
	testenv.Test(t, f.Feature())
}

const sleeperRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: sleeper}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Sleeper
    spec: {note: string}
  resources:
    - id: pod
      template:
        apiVersion: v1
        kind: Pod
        metadata:
          name: "${schema.metadata.name}"
          annotations: {note: "${schema.spec.note}"}
        spec:
          containers:
            - {name: app, image: busybox}
`

// A Deployment whose Pods admission refuses (a ResourceQuota, Pod
// Security) is applied, but never available: the refusal is in its
// ReplicaFailure condition, which why-not-ready shows with what to change.
func TestWhyNotReadyNamesWhatRefusesADeploymentsPods(t *testing.T) {
	f := features.New("a Deployment whose Pods admission refuses")
	for _, tc := range []struct {
		ns, what string
		// admit sets the namespace up to refuse the Pods.
		admit func(t *testing.T, c *clients, ns string)
		want  []string
	}{{
		ns: "podroom", what: "a ResourceQuota",
		admit: func(t *testing.T, c *clients, ns string) {
			applyCountedQuota(t, c, ns, "room", `pods: "0"`, "pods")
		},
		want: []string{
			"is forbidden: exceeded quota: room, requested: pods=1, used: pods=0, limited: pods=0",
			"What to do: ResourceQuota room in namespace podroom has no room for what Deployment crowded makes: raise its limits (kubectl edit resourcequota room -n podroom)",
		},
	}, {
		ns: "podsecurity", what: "Pod Security",
		admit: func(t *testing.T, c *clients, ns string) {
			c.apply(t, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s, labels: {pod-security.kubernetes.io/enforce: restricted}}}`, ns))
		},
		want: []string{
			`is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`,
			"What to do: namespace podsecurity enforces the restricted Pod Security Standard (its label pod-security.kubernetes.io/enforce), which what Deployment crowded makes does not meet: set in resource deployment's template what the message asks",
		},
	}} {
		f = f.Assess("why-not-ready shows the refusal and what to change: "+tc.what, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, tc.ns)
			c.apply(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "WebApp", tc.ns)
			tc.admit(t, c, tc.ns)
			c.apply(t, webapp(tc.ns, "crowded", ", replicas: 1"))
			var out string
			var err error
			eventually(t, 30*time.Second, "why-not-ready to show the Deployment's ReplicaFailure", func() (bool, string) {
				out, err = kro(t, cfg, nil, "why-not-ready", "webapp", "crowded", "-n", tc.ns)
				return strings.Contains(out, "ReplicaFailure=True"), out
			})
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("exit: %v, want not ready", err)
			}
			sayAll(t, "why-not-ready", out, append([]string{
				"Root cause: resource deployment (Deployment crowded) is not ready",
				"ReplicaFailure=True (FailedCreate): pods \"crowded-",
			}, tc.want...)...)
			c.delete(t, "kro.run/v1alpha1", "WebApp", tc.ns, "crowded")
			return ctx
		})
	}
	testenv.Test(t, f.Feature())
}
