package plugin

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// An object a dry run cannot send to a cluster (its instance is not placed
// yet, or its namespace is created by the plan) is still invalid when the
// instance's values make it so, and still names a field the instance does
// not set; only what waits for other resources takes the other reason.
func TestUncheckedObjectsSayWhatTheInstanceDecides(t *testing.T) {
	const why = "the agent places the instance first"
	waiting := &resolve.NotObservedError{ID: "deploy"}
	short := fmt.Errorf("spec.first: ${schema.spec.names[0]}: index out of bounds: 0: %w", resolve.ErrPending)
	unset := &resolve.UnsetError{Expression: "schema.spec.team"}
	failing := errors.New("division by zero")
	for _, tc := range []struct {
		name       string
		errs       []error
		wantAction string
		wantReason string
	}{
		{"renders", nil, ActionPending, why},
		{"waits for another resource", []error{waiting}, ActionPending, why},
		{"fails on the instance's values", []error{waiting, failing}, ActionInvalid, "division by zero"},
		{"reads a field the instance does not set", []error{waiting, unset}, ActionPending, unset.Error()},
		{"reads a value that is not there", []error{waiting, short}, ActionPending, "waiting for a value it reads: spec.first: ${schema.spec.names[0]}: index out of bounds: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			action, reason := unchecked(why, tc.errs)
			if action != tc.wantAction || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("unchecked = %s, %q; want %s, containing %q", action, reason, tc.wantAction, tc.wantReason)
			}
		})
	}
}

// An object that waits for a resource not there at all (an externalRef's
// object that does not exist) names it; one that waits for a value in what
// is there names the value, as before.
func TestUnrenderableNamesTheResourceItWaitsFor(t *testing.T) {
	unobserved := &resolve.NotObservedError{ID: "platform"}
	status := fmt.Errorf("data.ip: ${service.spec.clusterIP}: no such key: clusterIP: %w", resolve.ErrPending)
	for _, tc := range []struct {
		errs []error
		want string
	}{
		{[]error{unobserved}, "waiting for resource platform (above); its values are filled in once that is there"},
		{[]error{status, unobserved}, "waiting for a value it reads: data.ip: ${service.spec.clusterIP}: no such key: clusterIP"},
	} {
		if action, reason := unrenderable(tc.errs); action != ActionPending || reason != tc.want {
			t.Errorf("unrenderable(%v) = %s, %q; want %s, %q", tc.errs, action, reason, ActionPending, tc.want)
		}
	}
}

// -f reads directories as kubectl apply does: the manifests in them, and
// in the directories below with -R.
func TestDryRunReadsDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/nested", 0o700); err != nil {
		t.Fatal(err)
	}
	for file, doc := range map[string]string{
		"/rgd.yaml":         "apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\nmetadata: {name: a}\n",
		"/README.md":        "not a manifest",
		"/nested/inst.json": `{"apiVersion": "kro.run/v1alpha1", "kind": "A", "metadata": {"name": "x"}}`,
		"/nested/notes.txt": "not a manifest either",
		"/nested/empty.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	} {
		if err := os.WriteFile(dir+file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		recursive bool
		want      []string
	}{
		{false, []string{"ResourceGraphDefinition a"}},
		{true, []string{"ConfigMap c", "A x", "ResourceGraphDefinition a"}},
	} {
		o := &dryRunOptions{Options: &Options{}, files: []string{dir}, recursive: tc.recursive}
		objs, err := o.read()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range objs {
			got = append(got, u.GetKind()+" "+u.GetName())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("-R=%t read %q, want %q", tc.recursive, got, tc.want)
		}
	}
	empty := t.TempDir()
	if err := os.Mkdir(empty+"/below", 0o700); err != nil {
		t.Fatal(err)
	}
	want := empty + ": no manifest (.yaml, .yml or .json) found (-R reads the directories below a directory too)"
	if err := runWithoutCluster("dry-run", "-f", empty); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// The kind an RGD in a file serves is read as the API server would default
// it: kro.run where it names no group.
func TestGivenKind(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"schema": map[string]any{"apiVersion": "v1alpha1", "kind": "WebApp"}}}}
	if got, want := givenKind(u), (schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}); got != want {
		t.Errorf("givenKind = %v, want %v", got, want)
	}
	_ = unstructured.SetNestedField(u.Object, "example.com", "spec", "schema", "group")
	if got := givenKind(u).Group; got != "example.com" {
		t.Errorf("group = %q, want example.com", got)
	}
}

// The summary of an RGD change counts the instances it changes and what
// it does to them (skipped and unchanged objects are no change), then
// lists the changes to the kind's schema and to how kubectl shows it.
func TestRGDPreviewSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    RGDPreview
		want string
	}{
		{"new", RGDPreview{Name: "webapp", Kind: "WebApp", NewCRD: "webapps.kro.run", ServedAs: "kro.run/v1alpha1"},
			"ResourceGraphDefinition webapp is new: applying it creates CustomResourceDefinition webapps.kro.run, serving kro.run/v1alpha1 WebApp; it has no instance to preview yet (give instances of it with -f too)"},
		{"new, with instances given", RGDPreview{Name: "webapp", Kind: "WebApp", NewCRD: "webapps.kro.run", ServedAs: "kro.run/v1alpha1", Instances: 2, Plan: []PlannedResource{
			{Instance: "WebApp a/x", Action: ActionCreate}, {Instance: "WebApp a/x", Action: ActionSkipped}, {Instance: "WebApp a/y", Action: ActionInvalid}}},
			"ResourceGraphDefinition webapp is new (applying it creates CustomResourceDefinition webapps.kro.run, serving kro.run/v1alpha1 WebApp): 2 instances of WebApp given, 2 with changes (1 create, 1 invalid)"},
		{"no instance", RGDPreview{Name: "webapp", Kind: "WebApp", where: "namespace team-a"},
			"ResourceGraphDefinition webapp: no instance of WebApp in namespace team-a to preview"},
		{"nothing changes", RGDPreview{Name: "webapp", Kind: "WebApp", where: "every namespace", Instances: 1, Plan: []PlannedResource{
			{Instance: "WebApp a/x", Action: ActionUnchanged}, {Instance: "WebApp a/x", Action: ActionSkipped}}},
			"ResourceGraphDefinition webapp: 1 instance of WebApp in every namespace, 0 with changes"},
		{"given in other namespaces", RGDPreview{Name: "webapp", Kind: "WebApp", where: namespacesPhrase("team-a", []*unstructured.Unstructured{inNamespace("prod"), inNamespace("team-a"), inNamespace("dev")}),
			Instances: 3, Plan: []PlannedResource{{Instance: "WebApp prod/x", Action: ActionCreate}, {Instance: "WebApp team-a/x", Action: ActionUnchanged}, {Instance: "WebApp dev/x", Action: ActionUnchanged}}},
			"ResourceGraphDefinition webapp: 3 instances of WebApp in namespaces dev, prod and team-a, 1 with changes (1 create)"},
		{"given in the namespace listed", RGDPreview{Name: "webapp", Kind: "WebApp", where: namespacesPhrase("team-a", []*unstructured.Unstructured{inNamespace("team-a")}),
			Instances: 1, Plan: []PlannedResource{{Instance: "WebApp team-a/x", Action: ActionUnchanged}}},
			"ResourceGraphDefinition webapp: 1 instance of WebApp in namespace team-a, 0 with changes"},
		{"changes", RGDPreview{Name: "tenant", Kind: "Tenant", Instances: 3, Plan: []PlannedResource{
			{Instance: "Tenant x", Action: ActionUpdate}, {Instance: "Tenant x", Action: ActionDelete},
			{Instance: "Tenant y", Action: ActionUnchanged}, {Instance: "Tenant z", Action: ActionUpdate}}},
			"ResourceGraphDefinition tenant: 3 instances of Tenant, 2 with changes (2 update, 1 delete)"},
		{"schema changes", RGDPreview{Name: "webapp", Kind: "WebApp", where: "namespace team-a", SchemaChanges: []graph.SchemaChange{
			{Path: "spec.old", Description: "spec.old was removed", Breaking: true},
			{Path: "spec.tier", Description: `spec.tier was added (string, default "gold")`}}},
			"ResourceGraphDefinition webapp: no instance of WebApp in namespace team-a to preview\n" +
				"The schema of WebApp changes:\n" +
				"  spec.old was removed (breaking)\n" +
				`  spec.tier was added (string, default "gold")`},
		{"presentation changes", RGDPreview{Name: "webapp", Kind: "WebApp", Instances: 1, Plan: []PlannedResource{{Instance: "WebApp x", Action: ActionUnchanged}},
			PresentationChanges: []string{"short name wa added", "printer column URL added (.status.url, string)"}},
			"ResourceGraphDefinition webapp: 1 instance of WebApp, 0 with changes\n" +
				"How kubectl names and prints WebApp changes:\n" +
				"  short name wa added\n" +
				"  printer column URL added (.status.url, string)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.describe(); got != tc.want {
				t.Errorf("describe() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// An instance without a name is refused before anything is asked of the
// cluster, naming the fields that would give it one.
func TestDryRunOfANamelessInstance(t *testing.T) {
	file := t.TempDir() + "/nameless.yaml"
	if err := os.WriteFile(file, []byte("{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {namespace: default}, spec: {name: x}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "WebApp has neither metadata.name nor metadata.generateName: give it a name"
	if err := runWithoutCluster("dry-run", "-f", file); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// A dry run's diff of a Secret says which keys are added, changed, kept
// and removed without printing a value; the objects themselves are left
// as they are (-o yaml prints what would be applied).
func TestDiffMasksSecretValues(t *testing.T) {
	secret := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "creds", "namespace": "apps"},
			"data":     data,
		}}
	}
	live := secret(map[string]any{"kept": "a2VwdA==", "changed": "b2xk", "removed": "Z29uZQ=="})
	desired := secret(map[string]any{"kept": "a2VwdA==", "changed": "bmV3", "added": "YWRkZWQ="})

	got := diff(live, desired)
	for _, value := range []string{"a2VwdA==", "b2xk", "bmV3", "Z29uZQ==", "YWRkZWQ="} {
		if strings.Contains(got, value) {
			t.Errorf("diff prints the value %s:\n%s", value, got)
		}
	}
	for _, line := range []string{"-  changed: '*** (before)'", "+  changed: '*** (after)'", "+  added: '***'", "-  removed: '***'", "   kept: '***'"} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("diff has no line %q:\n%s", line, got)
		}
	}
	if created := diff(nil, desired); strings.Contains(created, "bmV3") || !strings.Contains(created, "+  changed: '***'\n") {
		t.Errorf("diff of a Secret to create:\n%s", created)
	}
	if desired.Object["data"].(map[string]any)["changed"] != "bmV3" || live.Object["data"].(map[string]any)["changed"] != "b2xk" {
		t.Error("masking changed the objects diffed")
	}

	// Other kinds keep their values: a ConfigMap's data is what a preview
	// is for.
	cm := desired.DeepCopy()
	cm.SetKind("ConfigMap")
	if got := diff(nil, cm); !strings.Contains(got, "bmV3") {
		t.Errorf("a ConfigMap's data is masked:\n%s", got)
	}
}

// What kro-agent would prune says why the graph no longer produces it.
func TestWhyPruned(t *testing.T) {
	g := compileGrid(t)
	configMap := schema.GroupKind{Kind: "ConfigMap"}
	skipped := []PlannedResource{{NodeID: "first", Action: ActionSkipped, Reason: "includeWhen ${schema.spec.on} is false"}}
	for _, tc := range []struct {
		name, node string
		kind       schema.GroupKind
		plan       []PlannedResource
		want       string
	}{
		{"removed from the RGD", "gone", configMap, nil, "resource gone is no longer in the ResourceGraphDefinition"},
		{"skipped", "first", configMap, skipped, "resource first is skipped: includeWhen ${schema.spec.on} is false"},
		{"of another kind now", "first", schema.GroupKind{Kind: "Secret"}, nil, "resource first is now a ConfigMap"},
		{"a collection that shrank", "cells", configMap, nil, "collection cells no longer produces it"},
		{"renamed", "first", configMap, nil, "resource first now renders another object in its place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := whyPruned(g, tc.node, tc.kind, tc.plan); got != tc.want {
				t.Errorf("whyPruned = %q, want %q", got, tc.want)
			}
		})
	}
}

// A file with nothing in it is an error, not an empty plan.
func TestDryRunOfAnEmptyFile(t *testing.T) {
	file := t.TempDir() + "/empty.yaml"
	if err := os.WriteFile(file, []byte("---\n# nothing yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := file + ": no instance or ResourceGraphDefinition found"
	if err := runWithoutCluster("dry-run", "-f", file); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// -A is for the instances of an RGD; with instances it is refused rather
// than ignored.
func TestDryRunOfInstancesInEveryNamespace(t *testing.T) {
	want := "-A previews the instances of an RGD in every namespace; ../../examples/webapp/instance.yaml holds instances, previewed in the namespaces they name"
	if err := runWithoutCluster("dry-run", "-A", "-f", "../../examples/webapp/instance.yaml"); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// statusRGD projects two fields from a ConfigMap.
const statusRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: projected}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Projected
    spec: {}
    status: {url: "${cm.data.url}", from: "${cm.metadata.name}"}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}"}}
`

// The plan of an existing instance says how its projected status changes,
// from the objects as they are, and nothing when it does not; state,
// conditions and placement are the agent's, not the graph's.
func TestStatusChange(t *testing.T) {
	g := compileRGD(t, statusRGD)
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "Projected",
		"metadata": map[string]any{"name": "p", "namespace": "ns"},
		"spec":     map[string]any{},
		"status": map[string]any{"url": "http://a", "from": "p", "state": "ACTIVE",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
			"placement":  map[string]any{"cluster": "east"}},
	}}
	scopeWith := func(url string) *resolve.Scope {
		s := resolve.NewScope(g, live.Object)
		s.Observe(g.Node("cm"), map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "p", "namespace": "ns"}, "data": map[string]any{"url": url}})
		return s
	}
	if p, changes := statusChange(g, scopeWith("http://a"), nil, live); changes {
		t.Errorf("the same status is planned as a change: %+v", p)
	}
	p, changes := statusChange(g, scopeWith("https://a"), nil, live)
	want := "--- live\n+++ desired\n@@ -1,3 +1,3 @@\n status:\n   from: p\n-  url: http://a\n+  url: https://a\n"
	if !changes || p.Action != ActionUpdate || p.Kind != "Projected" || p.Name != "p" || p.Namespace != "ns" || p.Diff != want {
		t.Errorf("plan = %+v\ndiff:\n%s\nwant:\n%s", p, p.Diff, want)
	}
}

// The resources the user may not read are named where the status reads
// them, once each.
func TestUnreadNodes(t *testing.T) {
	g := compileRGD(t, statusRGD)
	plan := []PlannedResource{{NodeID: "cm", unread: true}, {NodeID: "cm", unread: true}, {NodeID: "other", unread: true}, {NodeID: "read"}}
	if got := unreadNodes(plan, g.Status); !slices.Equal(got, []string{"cm"}) {
		t.Errorf("unreadNodes = %q, want [cm]", got)
	}
	if got := unreadNodes(plan[2:], g.Status); len(got) != 0 {
		t.Errorf("unreadNodes of what the status does not read = %q, want none", got)
	}
}

// The changes planned for a suspended instance say they wait for it to be
// resumed; what changes nothing says nothing more.
func TestDeferredWhileSuspended(t *testing.T) {
	const why = "not while the instance is suspended (kro.run/reconcile=suspended): kro-agent does this once the annotation is removed"
	for _, tc := range []struct {
		p    PlannedResource
		want string
	}{
		{PlannedResource{Action: ActionCreate}, why},
		{PlannedResource{Action: ActionDelete, Reason: "resource extra is skipped"}, why + "; resource extra is skipped"},
		{PlannedResource{Action: ActionUnchanged}, ""},
		{PlannedResource{Action: ActionSkipped, Reason: "includeWhen ${x} is false"}, "includeWhen ${x} is false"},
	} {
		if got := deferredWhileSuspended(tc.p); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.p.Action, tc.p.Reason, got, tc.want)
		}
	}
}

// What depends on a resource with an invalid object, or one being deleted,
// directly or through another, says that kro-agent does not get to it;
// what it would not write anyway keeps its reason.
func TestAfterRefused(t *testing.T) {
	for _, tc := range []struct {
		p         PlannedResource
		dep, root string
		want      string
	}{
		{PlannedResource{Action: ActionCreate}, "cms", "cms", "kro-agent creates it only after cms, which is invalid (above)"},
		{PlannedResource{Action: ActionUpdate, Reason: "spec.x is pending"}, "sec", "cms",
			"kro-agent updates it only after sec, which waits for cms, which is invalid (above); spec.x is pending"},
		{PlannedResource{Action: ActionUnchanged}, "cms", "cms", ""},
		{PlannedResource{Action: ActionPending, Reason: "waits for a value"}, "cms", "cms", "waits for a value"},
	} {
		if got := afterRefused(tc.p, tc.dep, tc.root, "is invalid"); got != tc.want {
			t.Errorf("%s after %s (%s): got %q, want %q", tc.p.Action, tc.dep, tc.root, got, tc.want)
		}
	}
	want := "kro-agent creates it only after config, which is being deleted (above)"
	if got := afterRefused(PlannedResource{Action: ActionCreate}, "config", "config", "is being deleted"); got != want {
		t.Errorf("after an object being deleted: got %q, want %q", got, want)
	}
}

// A collection limit below one is refused before anything is asked of the
// cluster: no collection could be planned.
func TestDryRunCollectionLimitIsAtLeastOne(t *testing.T) {
	want := "--max-collection-size must be at least 1, not 0"
	if err := runWithoutCluster("dry-run", "-f", "../../examples/workers/instance.yaml", "--max-collection-size", "0"); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// -f a.yaml,b.yaml names two files, as kubectl reads it; a path whose own
// name holds a comma is one.
func TestFileListsAreSplitAtCommasUnlessAFileHasThem(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "case_a,_b.yaml")
	for _, path := range []string{filepath.Join(dir, "one.yaml"), filepath.Join(dir, "two.yaml"), odd} {
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "one.yaml") + "," + filepath.Join(dir, "two.yaml")
	got := splitFileLists([]string{list, odd, "https://example.com/a,b.yaml", "-"})
	want := []string{filepath.Join(dir, "one.yaml"), filepath.Join(dir, "two.yaml"), odd, "https://example.com/a,b.yaml", "-"}
	if !slices.Equal(got, want) {
		t.Errorf("splitFileLists = %q, want %q", got, want)
	}
}

// inNamespace is an instance given in namespace ns.
func inNamespace(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp"}}
	u.SetName("x")
	u.SetNamespace(ns)
	return u
}

// yamlObject is the object s, written in YAML, describes.
func yamlObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	m, err := decodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// What the template sets is laid over the live object as an apply merges
// it: a Deployment's containers keep what the API server defaulted, a list
// of another length (with no managedFields to name its items' keys) and a
// value are replaced, and nothing live gives the template's object.
func TestOverlaid(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured { return yamlObject(t, s) }
	live := obj(`{kind: Deployment, metadata: {name: d, uid: u1}, spec: {replicas: 2, template: {spec: {containers: [{name: web, image: "nginx:1", imagePullPolicy: IfNotPresent}]}}, selector: {matchLabels: {app: d}}}, status: {availableReplicas: 2}}`)
	set := obj(`{kind: Deployment, metadata: {name: d}, spec: {replicas: 3, template: {spec: {containers: [{name: web, image: "nginx:2"}]}}}}`)
	want := obj(`{kind: Deployment, metadata: {name: d, uid: u1}, spec: {replicas: 3, template: {spec: {containers: [{name: web, image: "nginx:2", imagePullPolicy: IfNotPresent}]}}, selector: {matchLabels: {app: d}}}, status: {availableReplicas: 2}}`)
	if got := overlaid(live, set); !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("overlaid =\n%v\nwant\n%v", got.Object, want.Object)
	}
	if live.Object["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Error("overlaid changed the live object")
	}
	two := obj(`{spec: {args: [a, b], tags: {x: "1"}}}`)
	if got := overlaid(obj(`{spec: {args: [a], tags: "old"}}`), two); !reflect.DeepEqual(got.Object, two.Object) {
		t.Errorf("a list of another length and a value of another type are replaced: got %v", got.Object)
	}
	if got := overlaid(nil, set); !reflect.DeepEqual(got.Object, set.Object) {
		t.Errorf("nothing live: got %v", got.Object)
	}
}

// What kro-agent applied before and the template no longer sets is gone
// from the overlaid object, as an apply removes it: a label, a field, a
// container and an item of its env, found by their keys; a label another
// manager holds too stays (named alike when its entry is of another
// version of the kind), and so does everything when an entry of
// managedFields cannot be read or kro-agent's is of another version.
func TestOverlaidDropsWhatTheAgentNoLongerSets(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured { return yamlObject(t, s) }
	live := obj(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app: d, tier: web, team: a}}, spec: {replicas: 3, template: {spec: {containers: [
		{name: web, image: "nginx:1", imagePullPolicy: IfNotPresent, env: [{name: A, value: "1"}, {name: B, value: "2"}]},
		{name: sidecar, image: envoy}]}}}}`)
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	agent := entry(ownership.FieldManager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{},"f:team":{}}},`+
		`"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{`+
		`"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},"f:env":{"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}}},`+
		`"k:{\"name\":\"sidecar\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`)
	labeller := entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:team":{}}}}`)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{agent, labeller})
	set := obj(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app: d}}, spec: {template: {spec: {containers: [{name: web, image: "nginx:2", env: [{name: A, value: "1"}]}]}}}}`)

	got := overlaid(live, set)
	got.SetManagedFields(nil)
	want := obj(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app: d, team: a}}, spec: {template: {spec: {containers: [
		{name: web, image: "nginx:2", imagePullPolicy: IfNotPresent, env: [{name: A, value: "1"}]}]}}}}`)
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("overlaid =\n%v\nwant\n%v", got.Object, want.Object)
	}
	if _, ok := live.Object["spec"].(map[string]any)["replicas"]; !ok {
		t.Error("overlaid changed the live object")
	}

	olderAgent := agent
	olderAgent.APIVersion = "apps/v1beta2"
	for why, entries := range map[string][]metav1.ManagedFieldsEntry{
		"an entry that cannot be read":                     {agent, entry("odd", metav1.ManagedFieldsOperationUpdate, `{"k:{oops":{}}`)},
		"kro-agent's entry of another version of the kind": {olderAgent},
	} {
		live.SetManagedFields(entries)
		got = overlaid(live, set)
		if labels := got.GetLabels(); labels["tier"] != "web" || got.Object["spec"].(map[string]any)["replicas"] != int64(3) {
			t.Errorf("with %s, nothing should be dropped: labels %v, spec %v", why, labels, got.Object["spec"])
		}
	}

	// Another manager's entry of another version holds its fields as named.
	older := entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:tier":{}}}}`)
	older.APIVersion = "apps/v1beta2"
	live.SetManagedFields([]metav1.ManagedFieldsEntry{agent, older})
	got = overlaid(live, set)
	if _, kept := got.Object["spec"].(map[string]any)["replicas"]; got.GetLabels()["tier"] != "web" || kept {
		t.Errorf("beside another manager's entry of another version: labels %v, spec %v; want tier kept and replicas dropped", got.GetLabels(), got.Object["spec"])
	}
}

// The dry run of an object that exists is sent with the live object's
// ownership labels, which the guard lets kro-agent alone change, and its
// result shown with the rendered ones; the other labels are the
// rendered object's throughout.
func TestDryRunSendsTheLiveOwnershipLabels(t *testing.T) {
	object := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetLabels(labels)
		return u
	}
	rendered := object(map[string]string{"app": "new", "kro.run/collection-size": "3", "kro.run/node-id": "workers"})
	live := object(map[string]string{"app": "old", "kro.run/collection-size": "2", "kro.run/collection-index": "1", "kro.run/node-id": "workers", "team": "a"})
	sent := withOwnershipLabelsOf(rendered, live)
	if want := map[string]string{"app": "new", "kro.run/collection-size": "2", "kro.run/collection-index": "1", "kro.run/node-id": "workers"}; !maps.Equal(sent.GetLabels(), want) {
		t.Errorf("sent with labels %v, want %v", sent.GetLabels(), want)
	}
	if rendered.GetLabels()["kro.run/collection-size"] != "3" {
		t.Error("the rendered object was changed")
	}
	// What the API server returns (another manager's label kept) is shown
	// with the rendered ownership labels: those kro-agent would write.
	returned := object(map[string]string{"app": "new", "team": "a", "kro.run/collection-size": "2", "kro.run/collection-index": "1", "kro.run/node-id": "workers"})
	if want := map[string]string{"app": "new", "team": "a", "kro.run/collection-size": "3", "kro.run/node-id": "workers"}; !maps.Equal(withOwnershipLabelsOf(returned, rendered).GetLabels(), want) {
		t.Errorf("shown with labels %v, want %v", withOwnershipLabelsOf(returned, rendered).GetLabels(), want)
	}
	if withOwnershipLabelsOf(rendered, nil) != rendered {
		t.Error("a new object must be sent as rendered")
	}
}

// The plan labels objects with the version of the kro-agent that labelled
// the instance, not the plugin's own.
func TestDryRunLabelsWithTheAgentsVersion(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetLabels(map[string]string{"kro.run/kro-version": "v9.9.9-plugin", "app": "a"})
	inst := &unstructured.Unstructured{Object: map[string]any{}}
	withAgentVersionOf(u, inst)
	if u.GetLabels()["kro.run/kro-version"] != "v9.9.9-plugin" {
		t.Errorf("an instance no agent labelled changed the version: %v", u.GetLabels())
	}
	inst.SetLabels(map[string]string{"kro.run/kro-version": "v1.2.3"})
	withAgentVersionOf(u, inst)
	if !maps.Equal(u.GetLabels(), map[string]string{"kro.run/kro-version": "v1.2.3", "app": "a"}) {
		t.Errorf("labels %v, want the agent's version", u.GetLabels())
	}
}

// A dry run checks an instance's resources where the agent would create
// them: in this cluster for an instance it reconciled here, whatever region
// the file now asks for; nowhere yet for one of a region not placed yet,
// or one waiting to be placed again in its region, label or not.
func TestDryRunTargetFollowsThePlacementRules(t *testing.T) {
	c := &cluster{}
	obj := func(s string) *unstructured.Unstructured { return yamlObject(t, s) }
	instance := func(region string) *unstructured.Unstructured {
		u := obj(`{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: x, namespace: default}}`)
		if region != "" {
			u.SetLabels(map[string]string{"agent.kro.run/region": region})
		}
		return u
	}
	live := func(region, status string) *unstructured.Unstructured {
		u := instance(region)
		u.Object["status"] = obj(status).Object
		return u
	}
	unplaced := func(region string) string {
		return fmt.Sprintf("the agent places the instance on a Ready Cluster of region %q first", region)
	}
	for _, tc := range []struct {
		name       string
		live, file *unstructured.Unstructured
		want       string
	}{
		{"new, local", nil, instance(""), ""},
		{"new, of a region", nil, instance("eu-west"), unplaced("eu-west")},
		{"reconciled here, now labelled", live("", `{state: ACTIVE, conditions: [{type: Ready, status: "True", reason: Ready}]}`), instance("eu-west"), ""},
		{"staying here, labelled", live("eu-west", `{state: ACTIVE, conditions: [{type: Placed, status: "True", reason: StaysLocal}]}`), instance("us-east"), ""},
		{"not created yet, now labelled", live("", `{}`), instance("eu-west"), unplaced("eu-west")},
		{"suspended since its creation, now labelled", live("", `{state: IN_PROGRESS, conditions: [{type: InstanceManaged, status: Unknown, reason: Pending}, {type: Ready, status: Unknown, reason: Suspended}]}`), instance("eu-west"), unplaced("eu-west")},
		{"suspended after its first reconcile, now labelled", live("", `{state: IN_PROGRESS, conditions: [{type: InstanceManaged, status: "True", reason: Managed}, {type: Ready, status: Unknown, reason: Suspended}]}`), instance("eu-west"), ""},
		{"waiting for its region", live("eu-west", `{state: IN_PROGRESS, conditions: [{type: Placed, status: "False", reason: NoClusterInRegion}]}`), instance("us-east"), unplaced("us-east")},
		{"waiting to be placed again, label removed", live("", `{state: IN_PROGRESS, placement: {region: eu-west}, conditions: [{type: Placed, status: "False", reason: NoClusterInRegion}]}`), instance(""), unplaced("eu-west")},
		{"waiting to be placed again, relabelled", live("", `{state: IN_PROGRESS, placement: {region: eu-west}, conditions: [{type: Placed, status: "False", reason: NoClusterInRegion}]}`), instance("us-east"), unplaced("us-east")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, why, err := c.dryRunTarget(t.Context(), tc.live, tc.file)
			if err != nil || target != c {
				t.Fatalf("dryRunTarget: %v, %v", target, err)
			}
			if tc.want == "" && why != "" || !strings.HasPrefix(why, tc.want) {
				t.Errorf("unplaced = %q, want %q", why, tc.want)
			}
		})
	}
}
