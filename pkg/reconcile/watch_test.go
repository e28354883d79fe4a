package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Each kind is counted once per graph that manages it, however often a
// graph is served again, and an informer that has not listed its kind's
// objects is never retired: what it would find is not known. (Retiring a
// listed, empty one is shown against a cluster: TestKindsNoGraphManagesAreNotWatched.)
func TestManagedKindsAreCountedByGraph(t *testing.T) {
	w := unreachableInformers(t)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cogs := schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "cogs"}
	counts := func(want map[schema.GroupVersionResource]int) {
		t.Helper()
		w.mu.Lock()
		defer w.mu.Unlock()
		if !maps.Equal(w.managed, want) {
			t.Errorf("kinds managed %v, want %v", w.managed, want)
		}
	}

	w.use("a", []schema.GroupVersionResource{configMaps, cogs})
	w.use("a", []schema.GroupVersionResource{configMaps, cogs})
	w.use("b", []schema.GroupVersionResource{configMaps})
	counts(map[schema.GroupVersionResource]int{configMaps: 2, cogs: 1})
	w.use("a", []schema.GroupVersionResource{configMaps})
	counts(map[schema.GroupVersionResource]int{configMaps: 2})
	w.forget("b")
	w.forget("b")
	counts(map[schema.GroupVersionResource]int{configMaps: 1})
	w.forget("a")
	counts(map[schema.GroupVersionResource]int{})
	for _, gvr := range []schema.GroupVersionResource{configMaps, cogs} {
		if _, running := w.informer(gvr); !running {
			t.Errorf("the informer of %s, which has not listed its objects, was stopped", gvr)
		}
	}
}

// unreachableInformers are managed informers of a cluster nothing listens
// for: they never list, and retry until the test ends and stops them.
// refusingInformers are informers of an API server that refuses every
// list, as one refuses an agent whose role does not grant the kind.
func refusingInformers(t *testing.T, enqueue func(InstanceKey)) *managedInformers {
	t.Helper()
	refusing := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusForbidden)
		_, _ = rw.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
			`"message":"configmaps is forbidden: User \"agent\" cannot list resource \"configmaps\""}`))
	}))
	t.Cleanup(refusing.Close)
	client, err := newHeldClient(&rest.Config{Host: refusing.URL})
	if err != nil {
		t.Fatal(err)
	}
	w := newManagedInformers(client, func(schema.GroupVersionResource, any, any, bool) {}, enqueue)
	t.Cleanup(w.stopAll)
	return w
}

func unreachableInformers(t *testing.T) *managedInformers {
	t.Helper()
	client, err := newHeldClient(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	w := newManagedInformers(client, func(schema.GroupVersionResource, any, any, bool) {}, func(InstanceKey) {})
	t.Cleanup(w.stopAll)
	return w
}

// An informer whose lists the API server refuses says why, and keeps the
// instances that wait for it to retry them once it has listed its kind.
func TestInformerThatCannotListSaysWhy(t *testing.T) {
	var enqueued []InstanceKey
	w := refusingInformers(t, func(k InstanceKey) { enqueued = append(enqueued, k) })
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var err error
	if err := w.listFailure(gvr); err != nil {
		t.Fatalf("a kind not watched has a list failure: %v", err)
	}
	w.watch(gvr)
	if !waitUntil(context.Background(), func() bool { err = w.listFailure(gvr); return err != nil }) {
		t.Fatal("no list failure from an API server that refuses every list")
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot list resource "configmaps"`) {
		t.Errorf("list failure %q is not the API server's refusal", err)
	}
	key := InstanceKey{Namespace: "ns", Name: "a"}
	w.awaitSync(gvr, key)
	if len(enqueued) != 0 || !w.awaiting[gvr].Has(key) {
		t.Errorf("an instance waiting for a kind that cannot be listed: enqueued %v, awaiting %v", enqueued, w.awaiting[gvr])
	}
}

func TestUnlistedKindErrorSaysWhatToGrant(t *testing.T) {
	rb := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}
	forbidden := fmt.Errorf("failed to list *reconcile.heldObject: %w", apierrors.NewForbidden(rb, "", errors.New(`User "system:serviceaccount:kro-system:kro-agent" cannot list resource "rolebindings"`)))
	local := &unlistedKindError{resource: rb, where: &target{}, err: forbidden}
	msg := local.Error()
	for _, want := range []string{
		"kro-agent may not list rolebindings.rbac.authorization.k8s.io in the local cluster",
		`cannot list resource "rolebindings"`,
		`grant get, list, watch, create, update, patch and delete on rolebindings.rbac.authorization.k8s.io in a ClusterRole labelled kro.run/aggregate-to-agent: "true"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "heldObject") {
		t.Errorf("message %q carries the reflector's words", msg)
	}
	if !apierrors.IsForbidden(local) {
		t.Error("the error does not unwrap to the API server's")
	}
	remote := &unlistedKindError{resource: rb, where: &target{cluster: "eu-west-1"}, err: forbidden}
	if msg := remote.Error(); !strings.Contains(msg, "in cluster eu-west-1") || !strings.Contains(msg, "to the identity of the kubeconfig Cluster eu-west-1 is registered with") {
		t.Errorf("remote message %q", msg)
	}
	instances := &unlistedKindError{resource: schema.GroupResource{Group: "platform.example.com", Resource: "gizmoes"}, where: &target{}, err: forbidden, instances: true}
	if msg := instances.Error(); !strings.Contains(msg, "so it cannot see the instances") ||
		!strings.Contains(msg, "grant get, list, watch, update and patch on gizmoes.platform.example.com and gizmoes.platform.example.com/status in a ClusterRole") {
		t.Errorf("message for the instances' kind: %q", msg)
	}
	other := &unlistedKindError{resource: rb, where: &target{}, err: errors.New("conversion webhook for rolebindings failed")}
	if msg := other.Error(); msg != "listing rolebindings.rbac.authorization.k8s.io in the local cluster fails, so kro-agent cannot see the objects of that kind it manages: conversion webhook for rolebindings failed" {
		t.Errorf("message of another failure: %q", msg)
	}
}

// A write the authorizer denied says what to grant, and where; one an
// admission webhook denied is left as the API server worded it.
func TestUnauthorizedWriteSaysWhatToGrant(t *testing.T) {
	ns := schema.GroupResource{Resource: "namespaces"}
	denied := apierrors.NewForbidden(ns, "other", errors.New(`User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "namespaces" in API group "" in the namespace "other"`))
	local, ok := asUnauthorized(denied, ns, &target{})
	if !ok {
		t.Fatal("the authorizer's denial is not told")
	}
	want := `namespaces "other" is forbidden: User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "namespaces" in API group "" in the namespace "other"; ` +
		`grant kro-agent get, list, watch, create, update, patch and delete on namespaces in a ClusterRole labelled kro.run/aggregate-to-agent: "true" (see manifests/agent/rbac.yaml)`
	if msg := local.Error(); msg != want {
		t.Errorf("message\n%s\nwant\n%s", msg, want)
	}
	if !apierrors.IsForbidden(local) || !refusedByServer(local) {
		t.Error("the error does not unwrap to the API server's")
	}
	remote, _ := asUnauthorized(denied, ns, &target{cluster: "eu-west-1"})
	if msg := remote.Error(); !strings.HasSuffix(msg, "grant kro-agent get, list, watch, create, update, patch and delete on namespaces to the identity of the kubeconfig Cluster eu-west-1 is registered with") {
		t.Errorf("remote message %q", msg)
	}
	webhook := apierrors.NewForbidden(ns, "other", errors.New(`admission webhook "deny.example.com" denied the request: no`))
	if _, ok := asUnauthorized(webhook, ns, &target{}); ok {
		t.Error("a webhook's denial is taken for the authorizer's")
	}
}

// A binding refused for granting more than kro-agent holds says what to
// grant kro-agent for it to be allowed: bind on the role it names, or, for
// a role, escalate on its kind.
func TestEscalationSaysWhatToGrant(t *testing.T) {
	bindings := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}
	refused := apierrors.NewForbidden(bindings, "team-edit", errors.New(`user "system:serviceaccount:kro-system:kro-agent" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held: 69 rules, the first {APIGroups:[""], Resources:["bindings"], Verbs:["get"]}`))
	binding := &unstructured.Unstructured{Object: map[string]any{"roleRef": map[string]any{"kind": "ClusterRole", "name": "edit"}}}
	e, ok := asEscalation(refused, binding, bindings, &target{})
	if !ok {
		t.Fatal("the escalation is not told")
	}
	if want := `; grant kro-agent bind on clusterroles.rbac.authorization.k8s.io named edit (resourceNames: [edit]) in a ClusterRole labelled kro.run/aggregate-to-agent: "true" (see manifests/agent/rbac.yaml)`; !strings.HasSuffix(e.Error(), want) {
		t.Errorf("message\n%s\nwant it to end\n%s", e.Error(), want)
	}
	if !apierrors.IsForbidden(e) || !refusedByServer(e) {
		t.Error("the error does not unwrap to the API server's")
	}
	binding.Object["roleRef"] = map[string]any{"kind": "Role", "name": "reader"}
	if e, _ := asEscalation(refused, binding, bindings, &target{cluster: "eu-west-1"}); !strings.HasSuffix(e.Error(), "; grant kro-agent bind on roles.rbac.authorization.k8s.io named reader (resourceNames: [reader]) to the identity of the kubeconfig Cluster eu-west-1 is registered with") {
		t.Errorf("message for a Role: %s", e.Error())
	}
	roles := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}
	if e, _ := asEscalation(refused, &unstructured.Unstructured{Object: map[string]any{}}, roles, &target{}); !strings.Contains(e.Error(), "; grant kro-agent escalate on clusterroles.rbac.authorization.k8s.io, or what the role grants, in a ClusterRole") {
		t.Errorf("message for a role: %s", e.Error())
	}
	denied := apierrors.NewForbidden(bindings, "x", errors.New(`admission webhook "deny.example.com" denied the request: no`))
	if _, ok := asEscalation(denied, binding, bindings, &target{}); ok {
		t.Error("a webhook's denial is taken for an escalation")
	}
}
