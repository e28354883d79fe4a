//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

// budgetRGD manages a kind manifests/agent/rbac.yaml does not grant: a
// PodDisruptionBudget, beside a ConfigMap.
const budgetRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: budgets}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Budget
    spec: {app: string}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-budget"}
      data: {app: "${schema.spec.app}"}
  - id: budget
    template:
      apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: "${config.metadata.name}"}
      spec:
        maxUnavailable: 1
        selector: {matchLabels: {app: "${schema.spec.app}"}}
`

// agentGrant is a ClusterRole of the given rules (YAML) aggregated into the
// agent's role, as a platform team grants the kinds of its RGDs.
func agentGrant(name, rules string) string {
	return fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s
  labels: {kro.run/aggregate-to-agent: "true"}
rules:
%s`, name, rules)
}

// templateReaderRGD reads a PodTemplate, a kind the shipped roles do not
// grant, by name.
const templateReaderRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: templatereaders}
spec:
  schema:
    apiVersion: v1alpha1
    kind: TemplateReader
    spec: {}
  resources:
  - id: base
    externalRef:
      apiVersion: v1
      kind: PodTemplate
      metadata: {name: base}
  - id: image
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-image"}
      data: {image: "${base.template.spec.containers[0].image}"}
`

// budgetGrant grants the agent PodDisruptionBudgets.
var budgetGrant = agentGrant("e2e-budgets", `
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update, patch, delete]
`)

// agentWithShippedRoles applies the agent's namespace and roles from
// manifests/agent, runs the agent as their ServiceAccount in place of the
// suite's agent, which runs as the cluster's admin, and makes namespace
// ns. Stop it with stopAgentNow when the test is done: the next test
// starts the suite's agent again.
func agentWithShippedRoles(ctx context.Context, t *testing.T, cfg *envconf.Config, ns string) {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(root, "manifests", "agent")
	apply := func(when string) {
		if out, err := kubectl(t, cfg, "", "apply", "--server-side", "--field-manager=e2e",
			"-f", filepath.Join(manifests, "namespace.yaml"), "-f", filepath.Join(manifests, "rbac.yaml")); err != nil {
			t.Fatalf("applying the agent's namespace and roles %s: %v\n%s", when, err, out)
		}
	}
	apply("")
	// Applied again, as an upgrade does, once the aggregation
	// controller has written the aggregated role's rules.
	c := newClients(t, cfg)
	eventually(t, 30*time.Second, "the agent's aggregated role to have rules", func() (bool, string) {
		role := c.mustGet(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "kro-agent-managed-resources")
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		return len(rules) > 0, fmt.Sprint(role.Object["rules"])
	})
	apply("again, over the aggregation controller's rules")
	admin := cfg.Client().RESTConfig()
	core, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	token, err := core.CoreV1().ServiceAccounts("kro-system").CreateToken(ctx, "kro-agent",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asAgent := rest.AnonymousClientConfig(admin)
	asAgent.BearerToken = token.Status.Token
	asAgent.Wrap(countWatches)
	stopAgentNow(t)
	startAgentWith(t, cfg, func(o *agent.Options) {
		o.Config = asAgent
		o.GrantsRole = "kro-agent-managed-resources"
	})
	namespace(t, c, ns)
	// The guard policies name the agent by its username, and the agent
	// just started writes them for its new one in its own time: until the
	// API server enforces them, the admin running the test is still the
	// agent to them, and the agent's own label writes are refused.
	c.waitLabelsGuard(t, ns)
}

// The agent runs as the ServiceAccount manifests/agent ships, with its
// roles and nothing else: what it does for the examples' kinds it may do,
// and a kind its roles do not grant is named, with what to grant, on the
// RGD and on the instances until it is granted.
func TestAgentWithTheShippedRoles(t *testing.T) {
	const ns = "shipped-roles"
	f := features.New("the agent runs with the roles of manifests/agent").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			agentWithShippedRoles(ctx, t, cfg, ns)
			return ctx
		}).
		Teardown(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The next test starts the agent of the suite again.
			stopAgentNow(t)
			_, _ = kubectl(t, cfg, "", "delete", "rgd", "budgets", "allowances", "rolegadgets", "crews", "templatereaders", "--ignore-not-found")
			_, _ = kubectl(t, cfg, "", "delete", "clusterrole", "e2e-budgets", "e2e-gadgets", "e2e-quotas", "e2e-bindings", "e2e-templates", "--ignore-not-found")
			return ctx
		}).
		Assess("an RGD of the kinds the roles grant serves its instances, and deletes them", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Its kinds are granted: the RGD is admitted without a warning.
			if out, err := kubectl(t, cfg, example(t, "webapp", "rgd.yaml"), "apply", "--server-side", "-f", "-"); err != nil || strings.Contains(out, "Warning") {
				t.Errorf("applying the webapp RGD: %v\n%s", err, out)
			}
			c.waitRGDActive(t, "webapp")
			c.apply(t, webapp(ns, "granted", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "granted", v1alpha1.InstanceActive)
			c.mustGet(t, "apps/v1", "Deployment", ns, "granted")
			// The guard lets the agent alone change ownership labels: the
			// cluster admin running this test is not the agent now.
			out, err := kubectl(t, cfg, "", "-n", ns, "label", "deployment", "granted", "kro.run/instance-name=someone-else", "--overwrite")
			if err == nil || !strings.Contains(out, "only kro-agent may change or remove it") {
				t.Errorf("the admin's edit of an ownership label was not denied: %v\n%s", err, out)
			}
			c.deleteAll(t, "kro.run/v1alpha1", "WebApp", ns, "granted")
			if _, err := c.get(t, "apps/v1", "Deployment", ns, "granted"); !apierrors.IsNotFound(err) {
				t.Errorf("the Deployment of the deleted instance: %v", err)
			}
			return ctx
		}).
		Assess("a Service's EndpointSlices follow its labels", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// Their controller copies the Service's labels onto them, so
			// they carry an instance's labels without being kro-agent's;
			// the guard must let it take them off when the Service is
			// released (or relabel them when kro-agent's version changes),
			// or it no longer updates the Service's endpoints.
			c := newClients(t, cfg)
			c.apply(t, webapp(ns, "released", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "released", v1alpha1.InstanceActive)
			if out, err := kubectl(t, cfg, "", "-n", ns, "delete", "webapp", "released", "--cascade=orphan"); err != nil {
				t.Fatalf("kubectl delete --cascade=orphan: %v\n%s", err, out)
			}
			eventually(t, 30*time.Second, "the Service's EndpointSlices to lose kro-agent's labels with it", func() (bool, string) {
				slices, err := c.resource(t, "discovery.k8s.io/v1", "EndpointSlice").Namespace(ns).List(ctx,
					metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=released"})
				if err != nil || len(slices.Items) == 0 {
					return false, fmt.Sprintf("EndpointSlices of Service released: %v", err)
				}
				for _, s := range slices.Items {
					for k := range s.GetLabels() {
						if ownership.IsOwnershipKey(k) {
							return false, fmt.Sprintf("EndpointSlice %s keeps %s: %v", s.GetName(), k, s.GetLabels())
						}
					}
				}
				return true, ""
			})
			c.deleteAll(t, "v1", "Service", ns, "released")
			c.deleteAll(t, "apps/v1", "Deployment", ns, "released")
			c.deleteAll(t, "v1", "ConfigMap", ns, "released-config")
			return ctx
		}).
		Assess("a kind the roles do not grant is named on the RGD and its instances until it is granted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Warned of as it is admitted.
			out, err := kubectl(t, cfg, budgetRGD, "apply", "--server-side", "-f", "-")
			const warned = `Warning: kro-agent may not get, list, watch, create, update, patch or delete poddisruptionbudgets.policy (resource budget), so the instances cannot be reconciled until it may: grant it`
			if err != nil || !strings.Contains(out, warned) || strings.Contains(out, "configmaps") {
				t.Errorf("applying an RGD of a kind the roles do not grant: %v\n%s", err, out)
			}
			// Also behind more hints than the API server passes on whole.
			var slips strings.Builder
			for i := range 60 {
				fmt.Fprintf(&slips, "  - id: slip%d\n    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: \"${schema.metadata.name}-%d\"}, data: {n: \"1\"}}\n", i, i)
			}
			out, err = kubectl(t, cfg, budgetRGD+slips.String(), "apply", "--server-side", "--dry-run=server", "-f", "-")
			if err != nil || !strings.Contains(out, warned) || !strings.Contains(out, "more warnings like those above are left out") {
				t.Errorf("applying an RGD of a kind the roles do not grant, and of 60 keys YAML reads as false: %v\n%s", err, out)
			}
			const notListed = "kro-agent may not list poddisruptionbudgets.policy in the local cluster"
			const grant = `grant get, list, watch, create, update, patch and delete on poddisruptionbudgets.policy in a ClusterRole labelled kro.run/aggregate-to-agent: "true"`
			refusedSince := time.Now()
			eventually(t, 30*time.Second, "the RGD to say which kind it cannot list", func() (bool, string) {
				rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "budgets")
				cr := condition(rgd, v1alpha1.ConditionControllerReady)
				return cr != nil && cr.Status == metav1.ConditionFalse && cr.Reason == v1alpha1.ReasonKindNotWatched &&
					strings.Contains(cr.Message, notListed) && strings.Contains(cr.Message, grant), conditionSummary(rgd)
			})
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Budget, metadata: {name: b1, namespace: %s}, spec: {app: web}}", ns))
			eventually(t, 30*time.Second, "the instance to say which kind cannot be listed", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Budget", ns, "b1")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				state, _, _ := unstructured.NestedString(inst.Object, "status", "state")
				return rr != nil && rr.Reason == v1alpha1.ReasonKindNotWatched && strings.Contains(rr.Message, notListed) &&
					state == string(v1alpha1.InstanceError), conditionSummary(inst)
			})
			out, err = kro(t, cfg, nil, "why-not-ready", "budget", "b1", "-n", ns)
			if err == nil || !strings.Contains(out, notListed) || !strings.Contains(out, "grant kro-agent the kind named above") {
				t.Errorf("why-not-ready while the kind is not granted: %v\n%s", err, out)
			}
			// Nothing of the graph is applied while its objects of a kind
			// cannot be seen.
			if _, err := c.get(t, "v1", "ConfigMap", ns, "b1-budget"); err == nil {
				t.Error("the ConfigMap was applied while the instance's PodDisruptionBudgets cannot be listed")
			}
			// Nor is an instance's finalizer taken off while its objects of
			// a kind cannot be seen: some could be left behind.
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Budget, metadata: {name: b2, namespace: %s}, spec: {app: db}}", ns))
			c.delete(t, "kro.run/v1alpha1", "Budget", ns, "b2")
			eventually(t, 30*time.Second, "the deleted instance to say what it waits for", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Budget", ns, "b2")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && rr.Reason == v1alpha1.ReasonDeleting && strings.Contains(rr.Message, notListed), conditionSummary(inst)
			})
			never(t, 2*time.Second, "the instance was let go while its PodDisruptionBudgets cannot be listed", func() bool {
				_, err := c.get(t, "kro.run/v1alpha1", "Budget", ns, "b2")
				return err != nil
			})
			// Refused for 25 s, the informer's reflector tries again 12.8
			// to 30 s apart; the grant has it list at once.
			time.Sleep(time.Until(refusedSince.Add(25 * time.Second)))
			c.apply(t, budgetGrant)
			eventually(t, 5*time.Second, "b1 to be ACTIVE once the kind is granted", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Budget", ns, "b1")
				state, _, _ := unstructured.NestedString(inst.Object, "status", "state")
				return state == string(v1alpha1.InstanceActive), conditionSummary(inst)
			})
			c.mustGet(t, "policy/v1", "PodDisruptionBudget", ns, "b1-budget")
			eventually(t, 30*time.Second, "the RGD to be Active once the kind is granted", func() (bool, string) {
				rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "budgets")
				cr := condition(rgd, v1alpha1.ConditionControllerReady)
				return cr != nil && cr.Status == metav1.ConditionTrue, conditionSummary(rgd)
			})
			c.deleteAll(t, "kro.run/v1alpha1", "Budget", ns, "b1", "b2")
			return ctx
		}).
		Assess("an instance whose writes were forbidden is tried again as soon as a grant comes", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The agent may list and watch ResourceQuotas (it follows those
			// that refuse writes), not create them.
			c := newClients(t, cfg)
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: allowances}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Allowance
    spec: {cpu: string}
  resources:
  - id: quota
    template:
      apiVersion: v1
      kind: ResourceQuota
      metadata: {name: "${schema.metadata.name}"}
      spec: {hard: {cpu: "${schema.spec.cpu}"}}
`)
			c.waitRGDActive(t, "allowances")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Allowance, metadata: {name: a1, namespace: %s}, spec: {cpu: '1'}}", ns))
			// Refused often enough that the queue's backoff would wait
			// longer than the test does.
			// The refusal says what to grant, and where.
			const denied = `resourcequotas "a1" is forbidden: User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "resourcequotas"`
			const grant = `; grant kro-agent get, list, watch, create, update, patch and delete on resourcequotas in a ClusterRole labelled kro.run/aggregate-to-agent: "true"`
			refuseRepeatedly(t, c, "Allowance", ns, "a1", 14, denied, func(i int) string {
				return fmt.Sprintf(`{"spec":{"cpu":"%d"}}`, i+2)
			})
			if rr := condition(c.mustGet(t, "kro.run/v1alpha1", "Allowance", ns, "a1"), v1alpha1.ConditionResourcesReady); !strings.Contains(rr.Message, grant) {
				t.Errorf("the denied write does not say what to grant: %s", rr.Message)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "allowance", "a1", "-n", ns)
			if err == nil || !strings.Contains(out, "kro-agent's roles do not allow it this write: grant it what the message above names") {
				t.Errorf("why-not-ready for a denied write: %v\n%s", err, out)
			}
			quotaGrant := func(moreVerbs string) string {
				return agentGrant("e2e-quotas", `
- apiGroups: [""]
  resources: [resourcequotas]
  verbs: [get, list, watch, create, update, patch`+moreVerbs+`]
`)
			}
			c.apply(t, quotaGrant(""))
			c.activeSoonAfter(t, "Allowance", ns, "a1", time.Now(), "a grant of ResourceQuotas was aggregated into the agent's role")
			// Granted all but delete: the instance's deletion waits, says
			// why, and goes on as soon as delete is granted too.
			c.delete(t, "kro.run/v1alpha1", "Allowance", ns, "a1")
			deleteDenied := "ResourceQuota " + ns + `/a1 cannot be deleted: resourcequotas "a1" is forbidden: User "system:serviceaccount:kro-system:kro-agent" cannot delete resource "resourcequotas"`
			eventually(t, 30*time.Second, "the deleted instance to say what it may not delete", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Allowance", ns, "a1")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && rr.Reason == v1alpha1.ReasonDeleting && strings.Contains(rr.Message, deleteDenied) && strings.Contains(rr.Message, grant), conditionSummary(inst)
			})
			eventually(t, 10*time.Second, "the refused deletion to be told", func() (bool, string) {
				events := eventsAbout(t, c, ns, "a1", "DeleteFailed")
				var notes []string
				for _, e := range events {
					notes = append(notes, fmt.Sprint(e.Object["note"]))
				}
				return len(events) == 1 && strings.Contains(notes[0], deleteDenied), strings.Join(notes, "\n")
			})
			out, err = kro(t, cfg, nil, "why-not-ready", "allowance", "a1", "-n", ns)
			if err == nil || !strings.Contains(out, "kro-agent's roles do not allow it the deletion the condition above names") {
				t.Errorf("why-not-ready for a refused deletion: %v\n%s", err, out)
			}
			c.apply(t, quotaGrant(", delete"))
			deleted := time.Now()
			c.deleteAll(t, "kro.run/v1alpha1", "Allowance", ns, "a1")
			if took := time.Since(deleted); took > soon {
				t.Errorf("the instance took %s to go once delete was granted; want it within %s", took, soon)
			}
			return ctx
		}).
		Assess("a binding of a role that grants more than the agent holds says to grant bind, and goes through once it is", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			bindingGrant := func(moreRules string) string {
				return agentGrant("e2e-bindings", `
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings]
  verbs: [get, list, watch, create, update, patch, delete]`+moreRules+`
`)
			}
			c.apply(t, bindingGrant(""))
			const crews = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: crews}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Crew
    spec: {group: string}
  resources:
  - id: binding
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: "${schema.metadata.name}-edit"}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
      subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "${schema.spec.group}"}]
`
			// kubectl apply warns of it at once.
			out, err := kubectl(t, cfg, crews, "apply", "--server-side", "--field-manager", testManager, "--dry-run=server", "-f", "-")
			if err != nil || !strings.Contains(out, "Warning: kro-agent may not bind ClusterRole edit (resource binding)") {
				t.Errorf("kubectl apply of an RGD binding a role the agent may not bind: %v\n%s", err, out)
			}
			c.apply(t, crews)
			c.waitRGDActive(t, "crews")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Crew, metadata: {name: blue, namespace: %s}, spec: {group: blue}}", ns))
			const grant = `is attempting to grant RBAC permissions not currently held`
			const what = `; grant kro-agent bind on clusterroles.rbac.authorization.k8s.io named edit (resourceNames: [edit]) in a ClusterRole labelled kro.run/aggregate-to-agent: "true"`
			eventually(t, 30*time.Second, "the refused binding to say what to grant", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Crew", ns, "blue")
				rr := condition(inst, v1alpha1.ConditionResourcesReady)
				return rr != nil && strings.Contains(rr.Message, grant) && strings.Contains(rr.Message, what), conditionSummary(inst)
			})
			out, err = kro(t, cfg, nil, "why-not-ready", "crew", "blue", "-n", ns)
			if err == nil || !strings.Contains(out, "kro-agent's roles do not allow it this write: grant it what the message above names") {
				t.Errorf("why-not-ready for a refused binding: %v\n%s", err, out)
			}
			c.apply(t, bindingGrant(`
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  verbs: [bind]
  resourceNames: [edit]`))
			c.activeSoonAfter(t, "Crew", ns, "blue", time.Now(), "bind on the ClusterRole edit was aggregated into the agent's role")
			return ctx
		}).
		Assess("instances of a group the roles do not grant are named on the RGD until it is granted", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			refusedSince := time.Now()
			out, err := kubectl(t, cfg, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: rolegadgets}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Gadget
    group: roles.example.com
    spec: {size: integer | default=1}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-gadget"}
      data: {size: "${string(schema.spec.size)}"}
`, "apply", "--server-side", "-f", "-")
			for _, want := range []string{
				"Warning: kro-agent may not get, list, watch, update or patch gadgets.roles.example.com (the instances)",
				"Warning: kro-agent may not update or patch gadgets.roles.example.com/status (the instances' status)",
			} {
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("applying an RGD whose instances' group the roles do not grant: %v\n%s\nwant %s", err, out, want)
				}
			}
			eventually(t, 30*time.Second, "the RGD to say it cannot list its instances", func() (bool, string) {
				rgd := c.mustGet(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "rolegadgets")
				cr := condition(rgd, v1alpha1.ConditionControllerReady)
				return cr != nil && cr.Status == metav1.ConditionFalse && cr.Reason == v1alpha1.ReasonKindNotWatched &&
					strings.Contains(cr.Message, "kro-agent may not list gadgets.roles.example.com in the local cluster, so it cannot see the instances") &&
					strings.Contains(cr.Message, "grant get, list, watch, update and patch on gadgets.roles.example.com and gadgets.roles.example.com/status"), conditionSummary(rgd)
			})
			c.apply(t, fmt.Sprintf("{apiVersion: roles.example.com/v1alpha1, kind: Gadget, metadata: {name: g1, namespace: %s}, spec: {}}", ns))
			gadgetsGrant := func(moreVerbs string) string {
				return agentGrant("e2e-gadgets", `
- apiGroups: [roles.example.com]
  resources: [gadgets, gadgets/status]
  verbs: [get, list, watch`+moreVerbs+`]
`)
			}
			// Granted to read them, not to write their status: the
			// status cannot say so, an event does. Refused for 25 s, the
			// instances' informer tries again 12.8 to 30 s apart; the grant
			// has it list at once.
			time.Sleep(time.Until(refusedSince.Add(25 * time.Second)))
			c.apply(t, gadgetsGrant(""))
			const statusDenied = `writing status: gadgets.roles.example.com "g1" is forbidden: User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "gadgets/status"`
			eventually(t, 5*time.Second, "the refused status write to be told", func() (bool, string) {
				events := eventsAbout(t, c, ns, "g1", v1alpha1.EventStatusWriteFailed)
				return len(events) == 1 && strings.Contains(fmt.Sprint(events[0].Object["note"]), statusDenied) &&
						strings.Contains(fmt.Sprint(events[0].Object["note"]), "grant kro-agent get, list, watch, update and patch on gadgets.roles.example.com and gadgets.roles.example.com/status"),
					fmt.Sprint(len(events), " events")
			})
			// The RGD tells its kind is listed again a moment after the
			// instance's informer has listed it.
			eventually(t, 10*time.Second, "why-not-ready to say the status may not be written", func() (bool, string) {
				out, err := kro(t, cfg, nil, "why-not-ready", "gadget", "g1", "-n", ns)
				return err != nil && strings.Contains(out, "Gadget/g1's status is not up to date: the API server refuses kro-agent's writes of it"), fmt.Sprintf("%v\n%s", err, out)
			})
			c.apply(t, gadgetsGrant(", update, patch"))
			granted := time.Now()
			c.waitState(t, "roles.example.com/v1alpha1", "Gadget", ns, "g1", v1alpha1.InstanceActive)
			if took := time.Since(granted); took > soon {
				t.Errorf("the instance took %s to be ACTIVE once its status was granted; want it within %s", took, soon)
			}
			c.waitRGDActive(t, "rolegadgets")
			c.deleteAll(t, "roles.example.com/v1alpha1", "Gadget", ns, "g1")
			return ctx
		}).
		Assess("an externalRef of a kind the agent may get but not list and watch is looked at again", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			templatesGrant := func(verbs string) string {
				return agentGrant("e2e-templates", `
- apiGroups: [""]
  resources: [podtemplates]
  verbs: [`+verbs+`]
`)
			}
			c.apply(t, templatesGrant("get"))
			c.apply(t, templateReaderRGD)
			refusedSince := time.Now()
			c.waitRGDActive(t, "templatereaders")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TemplateReader, metadata: {name: t1, namespace: %s}}", ns))
			eventually(t, 10*time.Second, "the instance to wait for the PodTemplate", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "TemplateReader", ns, "t1")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && strings.Contains(cond.Message, "does not exist yet"), conditionSummary(inst)
			})
			// No watch tells when it comes: the instance looks again
			// every 10 s.
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: PodTemplate, metadata: {name: base, namespace: %s}, template: {spec: {containers: [{name: c, image: nginx}]}}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "TemplateReader", ns, "t1", v1alpha1.InstanceActive)
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "t1-image"); cm.Object["data"].(map[string]any)["image"] != "nginx" {
				t.Errorf("ConfigMap t1-image: %v", cm.Object["data"])
			}
			// Refused for 25 s, the watch tries again 12.8 to 30 s apart;
			// a grant of list and watch has it start at once.
			time.Sleep(time.Until(refusedSince.Add(25 * time.Second)))
			c.apply(t, templatesGrant("get, list, watch"))
			eventually(t, 5*time.Second, "the agent to watch PodTemplates once granted", func() (bool, string) {
				return watching("/api/v1/podtemplates") > 0, "no watch open"
			})
			c.deleteAll(t, "kro.run/v1alpha1", "TemplateReader", ns, "t1")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
