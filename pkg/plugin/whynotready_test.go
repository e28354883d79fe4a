package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// A resource waiting for a value its template reads is created once the
// value is there, unless the RGD reads it where it never comes (a
// Secret's stringData): then the RGD is what to change.
func TestMissingResourceAdviceForAValueThatNeverComes(t *testing.T) {
	s := &subject{instance: &unstructured.Unstructured{Object: map[string]any{}}}
	for _, tc := range []struct {
		pending error
		want    string
	}{
		{fmt.Errorf("data.ip: ${svc.status.loadBalancer.ingress[0].ip}: no such key: loadBalancer: %w", resolve.ErrPending),
			"kro-agent creates it once the value its template reads is there: a status field a controller has not written yet, or an item of another resource's list"},
		{fmt.Errorf("data.pw: ${secret.stringData.pw}: no such key: stringData; no Secret read back has stringData: the API server writes it into data, base64-encoded; read string(secret.data.pw): %w", resolve.ErrNeverComes),
			"the value its template reads never comes as the RGD reads it: change the RGD as said above, and kro-agent creates it"},
		{fmt.Errorf("data.tier: ${config.data.tier}: no such key: tier; config is an externalRef, which kro-agent reads and never writes: its owner supplies the value: %w", resolve.ErrExternalValue),
			"the value its template reads is missing from an object an externalRef reads, which is its owner's to supply: kro-agent creates it as soon as the value is there, or once the RGD reads it as optional, as said above"},
	} {
		tree := &Tree{Rows: []Row{{NodeID: "copy", Kind: "ConfigMap", Name: "c", Ready: VerdictMissing, pending: tc.pending}}}
		if d := (&cluster{}).blockingDiagnosis(context.Background(), s, tree, 0, &cluster{}, "Creds/c"); d.Advice != tc.want {
			t.Errorf("waiting for %v: advice %q, want %q", tc.pending, d.Advice, tc.want)
		}
	}
}

// A webhook that did not answer is named with where to look, for
// namespaced and cluster-scoped resources alike, and for what a
// Deployment makes; one configured with a URL has no Service to look at.
func TestAdmissionAdviceForAWebhookThatDidNotAnswer(t *testing.T) {
	const viaService = `applying ConfigMap app (resource config) in the local cluster: Internal error occurred: failed calling webhook "v.policy.example.com": failed to call webhook: Post "https://policy.policy-system.svc:443/validate?timeout=10s": no endpoints available for service "policy"`
	const viaURL = `Internal error occurred: failed calling webhook "u.example.com": failed to call webhook: Post "https://hooks.example.com/v?timeout=10s": dial tcp: lookup hooks.example.com: no such host`
	for _, tc := range []struct {
		message string
		row     Row
		made    bool
		want    []string
	}{
		{viaService, Row{NodeID: "config", Kind: "ConfigMap", Name: "app", Namespace: "team"}, false, []string{
			`admission webhook "v.policy.example.com", served by Service policy in namespace policy-system, did not answer the API server, and its failure policy refuses what it cannot check, ConfigMap app among it: bring its pods back (kubectl get endpointslices -n policy-system -l kubernetes.io/service-name=policy shows its endpoints)`,
			"; kro-agent creates it within seconds of either change",
		}},
		{viaService, Row{NodeID: "ns", Kind: "Namespace", Name: "app"}, false, []string{
			"its failure policy refuses what it cannot check, Namespace app among it:",
		}},
		{viaService, Row{NodeID: "deployment", Kind: "Deployment", Name: "app", Namespace: "team"}, true, []string{
			"what Deployment app makes among it",
			"; its controller makes it again at its next try after either change",
		}},
		{viaURL, Row{NodeID: "config", Kind: "ConfigMap", Name: "app", Namespace: "team"}, false, []string{
			`admission webhook "u.example.com" did not answer the API server at https://hooks.example.com/v?timeout=10s, and its failure policy refuses what it cannot check, ConfigMap app among it: make it answer`,
			"; kro-agent tries again within seconds of a change of the webhook configuration, and with backoff until then",
		}},
	} {
		got := admissionAdvice(tc.message, &tc.row, tc.made)
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("advice for %s %s (made %v):\n%s\nwant it to say:\n%s", tc.row.Kind, tc.row.Name, tc.made, got, want)
			}
		}
	}
	if got := admissionAdvice(`admission webhook "v.example.com" denied the request: no`, &Row{Kind: "ConfigMap", Name: "a", Namespace: "team"}, false); got != "" {
		t.Errorf("advice for a webhook that answered and denied: %q; want none (its message says why)", got)
	}
}

// A refused breaking change goes through once no instance is left, which
// deleting them brings about only while they are served with the graph of
// before: held ones wait on the RGD to be deleted.
func TestBreakingChangeAdvice(t *testing.T) {
	refused := metav1.Condition{Type: v1alpha1.ConditionKindReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonBreakingChange, Message: "the new schema would break stored instances (spec.owner was removed)"}
	for _, tc := range []struct {
		served      metav1.ConditionStatus
		whenNoneOut bool
	}{
		{metav1.ConditionTrue, true},
		{metav1.ConditionUnknown, false},
	} {
		rgd := &v1alpha1.ResourceGraphDefinition{}
		rgd.Name = "notes"
		rgd.Status.State = v1alpha1.StateInactive
		rgd.Status.Conditions = []metav1.Condition{refused, {Type: v1alpha1.ConditionControllerReady, Status: tc.served}}
		d := rgdNotActive(rgd, nil)
		if !strings.Contains(d.Advice, "kubectl annotate rgd notes kro.run/allow-breaking-changes=true applies it") {
			t.Errorf("ControllerReady %s: advice %q does not say how to force the change", tc.served, d.Advice)
		}
		if got := strings.Contains(d.Advice, "once no instance is left"); got != tc.whenNoneOut {
			t.Errorf("ControllerReady %s: advice %q says the change goes through once no instance is left: %v, want %v", tc.served, d.Advice, got, tc.whenNoneOut)
		}
	}
}

// An RGD whose kind the agent may not list is fixed by a grant, not by an
// edit of the RGD.
func TestKindNotWatchedAdvice(t *testing.T) {
	rgd := &v1alpha1.ResourceGraphDefinition{}
	rgd.Name = "budgets"
	rgd.Status.State = v1alpha1.StateInactive
	rgd.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionControllerReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonKindNotWatched,
		Message: "serving instances of kro.run/v1alpha1 Budget, but kro-agent may not list poddisruptionbudgets.policy in the local cluster"}}
	d := rgdNotActive(rgd, nil)
	if !strings.HasPrefix(d.Advice, "grant kro-agent the kind named above") || len(d.Details) != 1 || !strings.Contains(d.Details[0], "poddisruptionbudgets.policy") {
		t.Errorf("diagnosis %+v", d)
	}
}

// An apply the authorizer denied, or refused as granting more than the
// agent holds, is fixed by a grant, which the agent follows; a selector its
// pods do not match, in the RGD; any other refusal by what the message
// names.
func TestCreationBlockedAdviceForADeniedWrite(t *testing.T) {
	instance := func(message string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": v1alpha1.ConditionResourcesReady, "status": "False", "reason": v1alpha1.ReasonApplyFailed, "message": message},
		}}}}
	}
	denied := `applying Namespace other (resource ns) in the local cluster: namespaces "other" is forbidden: User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "namespaces" in API group "" in the namespace "other"; grant kro-agent get, list, watch, create, update, patch and delete on namespaces in a ClusterRole labelled kro.run/aggregate-to-agent: "true" (see manifests/agent/rbac.yaml)`
	cond, advice := creationBlocked(instance(denied))
	if cond == nil || !strings.HasPrefix(advice, "kro-agent's roles do not allow it this write: grant it what the message above names") {
		t.Errorf("advice for a denied write: %q", advice)
	}
	// A binding of a role that grants more than kro-agent holds.
	_, advice = creationBlocked(instance(`applying RoleBinding team-edit (resource binding) in the local cluster: rolebindings.rbac.authorization.k8s.io "team-edit" is forbidden: user "system:serviceaccount:kro-system:kro-agent" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held: 69 rules, the first {APIGroups:[""], Resources:["bindings"], Verbs:["get" "list" "watch"]}; to bind a role granting what it does not hold itself, the writer needs the verb bind on that role (a rule on rbac.authorization.k8s.io clusterroles or roles naming it in resourceNames)`))
	if !strings.HasPrefix(advice, "kro-agent's roles do not allow it this write: grant it what the message above names") {
		t.Errorf("advice for a binding refused as an escalation: %q", advice)
	}
	_, advice = creationBlocked(instance(`applying ConfigMap a (resource config) in the local cluster: configmaps "a" is forbidden: admission webhook "deny.example.com" denied the request: no`))
	if !strings.HasPrefix(advice, "the API server refuses kro-agent's apply") {
		t.Errorf("advice for a write an admission webhook denied: %q", advice)
	}
	// A workload whose selector its pods' labels do not match: the RGD's.
	_, advice = creationBlocked(instance("applying Deployment shop/shop (resource deploy) in the local cluster: Deployment.apps \"shop\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"))
	if !strings.HasPrefix(advice, "the RGD's template selects pods by labels its pod template does not give them: make spec.template.metadata.labels hold every label of spec.selector.matchLabels") {
		t.Errorf("advice for a selector its pods do not match: %q", advice)
	}
}

// A diagnosis of an instance that is not Ready names it first, so that
// several in a row can be told apart; one of an RGD has no instance.
func TestDiagnosisNamesItsInstance(t *testing.T) {
	var out bytes.Buffer
	printDiagnosis(&out, &Diagnosis{Instance: "WebApp team-a/shop", Cause: "resource deployment (Deployment shop) is not ready"}, palette{})
	if want := "Not ready: WebApp team-a/shop\nRoot cause: resource deployment (Deployment shop) is not ready\n"; out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printDiagnosis(&out, &Diagnosis{Cause: "ResourceGraphDefinition webapp is not Active"}, palette{})
	if want := "Root cause: ResourceGraphDefinition webapp is not Active\n"; out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

// gaugeRGD declares three conditions counting toward Ready (one of
// negative polarity) and one that does not.
const gaugeRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gauges}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Gauge
    spec: {limit: integer}
    status:
      conditions:
      - {type: Informational, status: "${size(settings.data) > 0}", reason: Counted, countsTowardReady: false}
      - {type: Pressure, status: "${size(settings.data) > schema.spec.limit}", reason: Measured, polarity: Negative}
      - {type: Configured, status: "${has(settings.data.mode)}", reason: Checked}
  resources:
  - id: settings
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}"}
`

// why-not-ready names the declared condition that holds Ready back: one
// whose status is bad for it comes before one with no status yet, a
// condition that does not count toward Ready is passed over, and True is
// bad for one of negative polarity.
func TestCustomConditionDiagnosis(t *testing.T) {
	g := compileRGD(t, gaugeRGD)
	rgd := &v1alpha1.ResourceGraphDefinition{}
	rgd.Name = "gauges"
	subject := func(conds ...metav1.Condition) *subject {
		inst := &unstructured.Unstructured{Object: map[string]any{}}
		var raw []any
		for _, c := range conds {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, m)
		}
		if err := unstructured.SetNestedSlice(inst.Object, raw, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		return &subject{instance: inst, rgd: rgd, graph: g}
	}
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason + " says so"}
	}
	for _, tc := range []struct {
		name          string
		conds         []metav1.Condition
		cause, advice string
	}{
		{"all good", []metav1.Condition{cond("Informational", metav1.ConditionFalse, "Counted"), cond("Pressure", metav1.ConditionFalse, "Measured"), cond("Configured", metav1.ConditionTrue, "Checked")}, "", ""},
		{"negative polarity True", []metav1.Condition{cond("Pressure", metav1.ConditionTrue, "Measured"), cond("Configured", metav1.ConditionTrue, "Checked")},
			"Gauge/g1's condition Pressure is True: ResourceGraphDefinition gauges declares it with negative polarity (True is bad), counting toward Ready",
			"the condition is the RGD's verdict on what its status expression reads (schema, settings): Ready follows once that makes it False"},
		{"bad before unknown", []metav1.Condition{cond("Pressure", metav1.ConditionUnknown, "WaitingForDependency"), cond("Configured", metav1.ConditionFalse, "Checked")},
			"Gauge/g1's condition Configured is False: ResourceGraphDefinition gauges declares it, counting toward Ready",
			"set countsTowardReady: false on it in ResourceGraphDefinition gauges"},
		{"unknown", []metav1.Condition{cond("Pressure", metav1.ConditionUnknown, "EvaluationFailed"), cond("Configured", metav1.ConditionTrue, "Checked")},
			"Gauge/g1's condition Pressure is Unknown",
			"its status expression (schema, settings) gives no value yet"},
	} {
		d := customConditionDiagnosis(subject(tc.conds...), "Gauge/g1")
		switch {
		case tc.cause == "" && d != nil:
			t.Errorf("%s: diagnosed %q", tc.name, d.Cause)
		case tc.cause == "":
		case d == nil:
			t.Errorf("%s: no diagnosis", tc.name)
		case !strings.HasPrefix(d.Cause, tc.cause) || !strings.Contains(d.Advice, tc.advice):
			t.Errorf("%s:\ncause  %q\nadvice %q\nwant   %q and %q", tc.name, d.Cause, d.Advice, tc.cause, tc.advice)
		case len(d.Details) != 2 || !strings.HasPrefix(d.Details[1], "its status: ${size(settings.data)") && !strings.HasPrefix(d.Details[1], "its status: ${has("):
			t.Errorf("%s: details %q, want the condition and its expression", tc.name, d.Details)
		}
	}
}

// An instance whose status expression fails is diagnosed as such, not as a
// resource that cannot be rendered: what to change is the instance's value
// or the RGD's status, and its resources are in place.
func TestStatusDiagnosis(t *testing.T) {
	rgd := &v1alpha1.ResourceGraphDefinition{}
	rgd.Name = "client-secret"
	subject := func(reason string) *subject {
		inst := &unstructured.Unstructured{}
		inst.SetName("app")
		inst.SetNamespace("team-a")
		cond, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.Condition{Type: v1alpha1.ConditionGraphResolved, Status: metav1.ConditionFalse, Reason: reason,
			Message: `projecting status: port: ${int(schema.spec.port)}: type conversion error from 'string' to 'int'; it read schema.spec.port = "eighty"`})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedSlice(inst.Object, []any{cond}, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		return &subject{instance: inst, rgd: rgd, mapping: &meta.RESTMapping{GroupVersionKind: schema.GroupVersionKind{Kind: "ClientSecret"}}}
	}
	d := statusDiagnosis(subject(v1alpha1.ReasonStatusFailed), "ClientSecret/app")
	if d == nil {
		t.Fatal("no diagnosis of a status that fails")
	}
	for _, want := range []string{"ClientSecret/app's status cannot be computed", "ResourceGraphDefinition client-secret"} {
		if !strings.Contains(d.Cause, want) {
			t.Errorf("cause %q does not say %q", d.Cause, want)
		}
	}
	if len(d.Details) != 1 || !strings.Contains(d.Details[0], `it read schema.spec.port = "eighty"`) {
		t.Errorf("details %q do not quote the condition", d.Details)
	}
	if !strings.Contains(d.Advice, "kubectl edit clientsecret app -n team-a") || !strings.Contains(d.Advice, "spec.schema.status") {
		t.Errorf("advice %q", d.Advice)
	}
	if d := statusDiagnosis(subject(v1alpha1.ReasonResolveFailed), "ClientSecret/app"); d != nil {
		t.Errorf("a template that fails diagnosed as a status: %q", d.Cause)
	}
	d = statusDiagnosis(subject(v1alpha1.ReasonStatusTooLarge), "ClientSecret/app")
	if d == nil || !strings.Contains(d.Cause, "ClientSecret/app's status is too large to store") ||
		!strings.Contains(d.Advice, "project less into the fields the message names") || !strings.Contains(d.Advice, "kubectl edit clientsecret app -n team-a") {
		t.Errorf("diagnosis of a status too large: %+v", d)
	}
}

// A suspended instance changed since kro-agent last applied it says the
// change waits for it to be resumed; one unchanged says no more than that
// it is suspended.
func TestSuspendedDiagnosisTellsOfAChangeWaiting(t *testing.T) {
	rgd := &v1alpha1.ResourceGraphDefinition{}
	rgd.Name, rgd.Status.State = "webapp", v1alpha1.StateActive
	mapping := &meta.RESTMapping{GroupVersionKind: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}}
	suspended := func(generation, applied int64) *subject {
		inst := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "shop", "namespace": "prod", "generation": generation,
				"annotations": map[string]any{v1alpha1.AnnotationReconcile: v1alpha1.ReconcileSuspended}},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "GraphResolved", "status": "True", "reason": "Resolved", "observedGeneration": applied},
				map[string]any{"type": "Ready", "status": "Unknown", "reason": "Suspended", "observedGeneration": generation},
			}},
		}}
		return &subject{instance: inst, mapping: mapping, rgd: rgd}
	}
	d := (&cluster{}).diagnose(context.Background(), suspended(3, 2))
	if want := "the instance changed since kro-agent last applied it (generation 2; it is at 3): the change is applied once it is resumed"; !strings.HasPrefix(d.Cause, "WebApp/shop is suspended") ||
		len(d.Details) != 1 || d.Details[0] != want {
		t.Errorf("changed while suspended: %q %q, want the detail %q", d.Cause, d.Details, want)
	}
	if want := "kubectl annotate webapp shop -n prod kro.run/reconcile- to resume"; d.Advice != want {
		t.Errorf("advice %q, want %q", d.Advice, want)
	}
	if d := (&cluster{}).diagnose(context.Background(), suspended(2, 2)); !strings.HasPrefix(d.Cause, "WebApp/shop is suspended") || len(d.Details) != 0 {
		t.Errorf("unchanged while suspended: %q %q", d.Cause, d.Details)
	}
}

// An instance whose RGD the user may not read is diagnosed from its own
// conditions, which kro-agent wrote knowing the graph, and the advice says
// what reading the RGD would add.
func TestDiagnosisWithoutTheRGD(t *testing.T) {
	instance := func(generation int64, ready map[string]any) *unreadableRGDError {
		conds := []any{
			map[string]any{"type": "ResourcesReady", "status": "False", "reason": "ResourceNotReady", "message": "deployment (Deployment shop) is not ready", "observedGeneration": int64(2)},
			map[string]any{"type": "GraphResolved", "status": "True", "reason": "Resolved", "observedGeneration": int64(2)},
		}
		if ready != nil {
			conds = append(conds, ready)
		}
		inst := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "shop", "namespace": "prod", "generation": generation},
			"status":   map[string]any{"conditions": conds},
		}}
		return &unreadableRGDError{graphless{instance: inst, kind: "WebApp", rgd: "webapp"}, errors.New("forbidden")}
	}
	d := diagnoseUnreadable(instance(2, map[string]any{"type": "Ready", "status": "False", "reason": "ResourceNotReady",
		"message": "deployment (Deployment shop) is not ready", "observedGeneration": int64(2)}))
	if d.Ready || d.Cause != "WebApp/shop is not Ready, as kro-agent reports: deployment (Deployment shop) is not ready" ||
		!slices.Equal(d.Details, []string{"ResourcesReady=False (ResourceNotReady): deployment (Deployment shop) is not ready"}) ||
		!strings.HasPrefix(d.Advice, "ResourceGraphDefinition webapp, which says how shop's resources depend on each other and when each is ready, cannot be read: you may not read resourcegraphdefinitions.kro.run") {
		t.Errorf("not ready: %+v", d)
	}
	d = diagnoseUnreadable(instance(3, map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": int64(2)}))
	if d.Ready || d.Cause != "WebApp/shop changed since kro-agent last reported on it (it is at generation 3, its Ready condition at 2): Ready=True, as it was then" {
		t.Errorf("ready, but at an earlier generation: %+v", d)
	}
	if d := diagnoseUnreadable(instance(2, map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": int64(2)})); !d.Ready || d.Cause != "WebApp/shop is Ready" {
		t.Errorf("ready: %+v", d)
	}
	if d := diagnoseUnreadable(instance(2, nil)); d.Ready || d.Cause != "WebApp/shop has no Ready condition: kro-agent has not processed it" {
		t.Errorf("no Ready condition: %+v", d)
	}
}

// Every object in the instance's way that can be handed over is named in
// one kubectl annotate command per namespace, so that they are handed over
// together rather than found one after another.
func TestHandOverCommandNamesEveryObjectByNamespace(t *testing.T) {
	obj := namedObject
	inst := ownership.Instance{Name: "shop", Namespace: "prod"}
	got := handOverCommand([]*unstructured.Unstructured{
		obj("v1", "ConfigMap", "prod", "shop-config"),
		obj("apps/v1", "Deployment", "prod", "shop"),
		obj("v1", "ConfigMap", "shared", "shop-settings"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "shop-reader"),
	}, inst)
	want := "kubectl annotate configmap/shop-config deployment.apps/shop -n prod kro.run/adopt-by=prod/shop; " +
		"kubectl annotate configmap/shop-settings -n shared kro.run/adopt-by=prod/shop; " +
		"kubectl annotate clusterrole.rbac.authorization.k8s.io/shop-reader kro.run/adopt-by=prod/shop"
	if got != want {
		t.Errorf("handOverCommand\n got: %s\nwant: %s", got, want)
	}
}

// A condition with no message is printed without a dangling colon.
func TestConditionLineLeavesOutAnEmptyMessage(t *testing.T) {
	for _, tc := range []struct {
		c    metav1.Condition
		want string
	}{
		{metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"}, "Ready=True (Ready)"},
		{metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Deleting", Message: "deleting"}, "Ready=False (Deleting): deleting"},
	} {
		if got := conditionLine(tc.c); got != tc.want {
			t.Errorf("conditionLine = %q, want %q", got, tc.want)
		}
	}
}

// An object's namespace is found among the rows when the graph makes it.
func TestNamespaceRow(t *testing.T) {
	rows := []Row{
		{NodeID: "settings", Kind: "ConfigMap", Name: "settings", Namespace: "tenant-a"},
		{NodeID: "elsewhere", Kind: "ConfigMap", Name: "other", Namespace: "default"},
		{NodeID: "ns", Kind: "Namespace", Name: "tenant-a"},
	}
	for i, want := range []int{2, -1, -1} {
		if got := namespaceRow(rows, &rows[i]); got != want {
			t.Errorf("namespaceRow of %s = %d, want %d", rows[i].NodeID, got, want)
		}
	}
}

// A detail of several lines (a refusal quoting a diff, the refusals told
// after it) keeps its lines, indented under its first.
func TestDiagnosisDetailsKeepTheirLines(t *testing.T) {
	var out strings.Builder
	printDiagnosis(&out, &Diagnosis{Cause: "resource claim is not updated", Details: []string{
		"ResourcesReady=False (ApplyFailed): applying claim: refused\n@@ -1 +1 @@\n-  \"storage\": \"1Gi\"\n+  \"storage\": \"2Gi\"\n\nAlso: applying job: refused\n",
	}}, palette{})
	want := "Root cause: resource claim is not updated\n" +
		"  ResourcesReady=False (ApplyFailed): applying claim: refused\n" +
		"    @@ -1 +1 @@\n" +
		"    -  \"storage\": \"1Gi\"\n" +
		"    +  \"storage\": \"2Gi\"\n" +
		"    Also: applying job: refused\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// A StatefulSet whose change is refused can be deleted alone, its Pods and
// claims kept for the one made again; other kinds get no such advice.
func TestOrphanAdviceIsForStatefulSets(t *testing.T) {
	if got, want := orphanAdvice(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "pg", "data"), "; kubectl delete statefulset pg -n data --cascade=orphan deletes the StatefulSet alone"; !strings.HasPrefix(got, want) {
		t.Errorf("StatefulSet: %q, want it to start %q", got, want)
	}
	for _, other := range []schema.GroupKind{{Group: "batch", Kind: "Job"}, {Group: "apps.kruise.io", Kind: "StatefulSet"}} {
		if got := orphanAdvice(other, "x", "data"); got != "" {
			t.Errorf("%s: %q, want none", other, got)
		}
	}
}
