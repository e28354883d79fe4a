package plugin

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// left is an object a released instance left, created at second s.
func left(kind, name, node string, s int, index string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace("default")
	u.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 11, 26, 10, 0, s, 0, time.UTC)))
	labels := map[string]string{"kro.run/node-id": node}
	if index != "" {
		labels["kro.run/collection-index"] = index
	}
	u.SetLabels(labels)
	return u
}

// With no graph left to order them, what a released instance left is listed
// as it was created (dependencies first), objects of one second by node and
// item; what could not be listed comes first.
func TestReleasedRowsAreOrderedByCreation(t *testing.T) {
	rows := []Row{
		flatRow(left("Service", "web", "service", 3, "")),
		flatRow(left("ConfigMap", "w-1", "workers", 2, "1")),
		flatRow(left("ConfigMap", "w-10", "workers", 2, "10")),
		flatRow(left("ConfigMap", "w-2", "workers", 2, "2")),
		flatRow(left("ConfigMap", "config", "config", 1, "")),
		flatRow(left("Secret", "a-secret", "auth", 2, "")),
		{Depth: 1, Kind: "Widget", Ready: VerdictUnknown, Reason: kindUnlisted("Widget.example.dev", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.dev", Kind: "Widget"}})},
	}
	sortByCreation(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.node()+"/"+r.Name)
	}
	want := []string{"/", "config/config", "auth/a-secret", "workers[1]/w-1", "workers[2]/w-2", "workers[10]/w-10", "service/web"}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
	if nested := (&Tree{Rows: rows}).nested(); !slices.EqualFunc(nested, rows, func(a, b Row) bool { return a.Name == b.Name }) {
		t.Errorf("the text tree prints them in another order")
	}
	if r := rows[0]; r.Reason != "Widget.example.dev is not served by the cluster: its objects, if any are left, cannot be listed" {
		t.Errorf("unlisted kind: %+v", r)
	}
	for _, r := range rows[1:] {
		if r.Ready != VerdictUnknown || r.Health != "Current" || r.Depth != 1 {
			t.Errorf("row %s: ready %s, health %s, depth %d; want Unknown (no readyWhen judges it), its health, flat", r.node(), r.Ready, r.Health, r.Depth)
		}
	}
	if reason := kindUnlisted("Widget.example.dev", errors.New("discovery failed")); reason != "cannot look up kind Widget.example.dev: discovery failed" {
		t.Errorf("kind whose lookup failed: %q", reason)
	}
}

// An object on its way out says so, and which finalizers hold it.
func TestReleasedRowBeingDeleted(t *testing.T) {
	u := left("ConfigMap", "config", "config", 1, "")
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	u.SetFinalizers([]string{"example.dev/keep"})
	if r := flatRow(u); r.Ready != VerdictDeleting || r.Reason != "being deleted, held by the finalizers example.dev/keep" {
		t.Errorf("row = %s: %s", r.Ready, r.Reason)
	}
}

// The note under the tree says what is shown, how it was found, and how
// to have the instance managed again; or that nothing was left.
func TestPrintReleased(t *testing.T) {
	inst := &unstructured.Unstructured{}
	inst.SetName("m2")
	inst.SetUID("uid-2")
	e := &releasedError{graphless{instance: inst, kind: "Memo", rgd: "memos"}}
	var b bytes.Buffer
	printReleased(&b, &Tree{Rows: []Row{flatRow(left("ConfigMap", "m2-note", "note", 1, ""))}}, e)
	want := `
Memo m2 was released when ResourceGraphDefinition memos was deleted: kro-agent no longer manages it. Above is what it left in place (labelled kro.run/instance-id=uid-2), in the order it was created: the graph that nested these and judged their readiness went with the RGD.
Apply ResourceGraphDefinition memos (or another for Memo) again and kro-agent takes it back.
`
	if b.String() != want {
		t.Errorf("note:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printReleased(&b, &Tree{}, e)
	if !strings.Contains(b.String(), "It left nothing in place: no object of the kinds kro-agent recorded for it carries its label kro.run/instance-id=uid-2.") {
		t.Errorf("note with nothing left:\n%s", b.String())
	}
}
