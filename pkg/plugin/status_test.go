package plugin

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

func TestPrintStatusTable(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	created := &metav1.Time{Time: now.Add(-90 * time.Second)}
	local := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "local", State: "ACTIVE", Ready: "True", Created: created}
	placed := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "placed", State: "IN_PROGRESS", Ready: "False", Reason: "ClusterNotReady", Cluster: "eu-west-1", Created: created}
	waiting := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "waiting", State: "IN_PROGRESS", Ready: "False", Reason: "ResourcesNotReady", RGD: "webapp",
		Message: "deployment is not ready:\nreadyWhen false", Created: created}

	labelled := local
	labelled.Labels = map[string]string{"team": "payments", "app.kubernetes.io/part-of": "shop"}
	for _, tc := range []struct {
		name       string
		rows       []InstanceStatusRow
		noHeader   bool
		wide       bool
		labels     []string
		showLabels bool
		want       string
	}{
		{
			name:   "-L, a label an instance lacks left empty",
			rows:   []InstanceStatusRow{labelled, placed},
			labels: []string{"team", "app.kubernetes.io/part-of"},
			want: "NAMESPACE  KIND    NAME    CLUSTER    STATE        READY  REASON           AGE  TEAM      PART-OF\n" +
				"apps       WebApp  local   -          ACTIVE       True   -                90s  payments  shop\n" +
				"apps       WebApp  placed  eu-west-1  IN_PROGRESS  False  ClusterNotReady  90s            \n",
		},
		{
			name:       "--show-labels",
			rows:       []InstanceStatusRow{labelled, placed},
			showLabels: true,
			wide:       true,
			want: "NAMESPACE  KIND    NAME    CLUSTER    STATE        READY  REASON           AGE  RGD  MESSAGE  LABELS\n" +
				"apps       WebApp  local   -          ACTIVE       True   -                90s  -    -        app.kubernetes.io/part-of=shop,team=payments\n" +
				"apps       WebApp  placed  eu-west-1  IN_PROGRESS  False  ClusterNotReady  90s  -    -        <none>\n",
		},
		{
			name: "no instance placed",
			rows: []InstanceStatusRow{local},
			want: "NAMESPACE  KIND    NAME   STATE   READY  REASON  AGE\n" +
				"apps       WebApp  local  ACTIVE  True   -       90s\n",
		},
		{
			name: "one instance placed",
			rows: []InstanceStatusRow{local, placed},
			want: "NAMESPACE  KIND    NAME    CLUSTER    STATE        READY  REASON           AGE\n" +
				"apps       WebApp  local   -          ACTIVE       True   -                90s\n" +
				"apps       WebApp  placed  eu-west-1  IN_PROGRESS  False  ClusterNotReady  90s\n",
		},
		{
			name: "-o wide",
			rows: []InstanceStatusRow{local, waiting},
			wide: true,
			want: "NAMESPACE  KIND    NAME     STATE        READY  REASON             AGE  RGD     MESSAGE\n" +
				"apps       WebApp  local    ACTIVE       True   -                  90s  -       -\n" +
				"apps       WebApp  waiting  IN_PROGRESS  False  ResourcesNotReady  90s  webapp  deployment is not ready: readyWhen false\n",
		},
		{
			name:     "--no-headers",
			rows:     []InstanceStatusRow{local},
			noHeader: true,
			want:     "apps  WebApp  local  ACTIVE  True  -  90s\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printStatus(&out, tc.rows, tableColumns{namespace: true, header: !tc.noHeader, wide: tc.wide, labels: tc.labels, showLabels: tc.showLabels}, palette{}, now)
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestNoneFoundSaysWhereItLooked(t *testing.T) {
	rgds := watchedList{gvr: v1alpha1.GroupVersion.WithResource("resourcegraphdefinitions")}
	webapps := watchedList{gvr: v1alpha1.GroupVersion.WithResource("webapps"), namespace: "apps"}
	for _, tc := range []struct {
		name     string
		notReady bool
		lists    []watchedList
		want     string
	}{
		{name: "in a namespace", lists: []watchedList{rgds, webapps}, want: "No instances found in namespace apps."},
		{name: "not Ready, in a namespace", notReady: true, lists: []watchedList{webapps}, want: "No instances found that are not Ready in namespace apps."},
		{name: "every namespace, or cluster-scoped kinds", lists: []watchedList{rgds, {gvr: v1alpha1.GroupVersion.WithResource("tenants")}}, want: "No instances found."},
		{name: "no kind", want: "No instances found."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &statusOptions{notReady: tc.notReady}
			if got := o.noneFound(tc.lists); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusKeyNoticesAMove(t *testing.T) {
	row := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "a", State: "ACTIVE", Ready: "True"}
	moved := row
	moved.Cluster = "eu-west-1"
	if statusKey([]InstanceStatusRow{row}, tableColumns{}) == statusKey([]InstanceStatusRow{moved}, tableColumns{}) {
		t.Error("--watch would not redraw when an instance is placed")
	}
	reworded := row
	reworded.Message = "waiting for resource deployment"
	if statusKey([]InstanceStatusRow{row}, tableColumns{}) == statusKey([]InstanceStatusRow{reworded}, tableColumns{}) {
		t.Error("--watch -o wide would not redraw when the message changes")
	}
	relabelled := row
	relabelled.Labels = map[string]string{"team": "search"}
	if statusKey([]InstanceStatusRow{row}, tableColumns{labels: []string{"team"}}) == statusKey([]InstanceStatusRow{relabelled}, tableColumns{labels: []string{"team"}}) {
		t.Error("--watch -L team would not redraw when the team changes")
	}
	if statusKey([]InstanceStatusRow{row}, tableColumns{}) != statusKey([]InstanceStatusRow{relabelled}, tableColumns{}) {
		t.Error("--watch would redraw for a label it does not show")
	}
}

func TestWatchFirstListDiffersFromTheRead(t *testing.T) {
	read := []unstructured.Unstructured{{}, {}}
	read[0].SetNamespace("apps")
	read[0].SetName("a")
	read[0].SetResourceVersion("10")
	read[1].SetNamespace("apps")
	read[1].SetName("b")
	read[1].SetResourceVersion("11")
	seen := seenOf(read)
	listed := func(objs ...[3]string) []any {
		var out []any
		for _, o := range objs {
			out = append(out, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o[0], Name: o[1], ResourceVersion: o[2]}})
		}
		return out
	}
	a, b := [3]string{"apps", "a", "10"}, [3]string{"apps", "b", "11"}
	for _, tc := range []struct {
		name   string
		listed []any
		want   bool
	}{
		{"the same objects", listed(b, a), false},
		{"one changed since", listed(a, [3]string{"apps", "b", "12"}), true},
		{"one created since", listed(a, b, [3]string{"apps", "c", "13"}), true},
		{"one deleted since", listed(a), true},
		{"one replaced by another of the same version", listed(a, [3]string{"other", "b", "11"}), true},
	} {
		if got := differs(seen, tc.listed); got != tc.want {
			t.Errorf("%s: differs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWatchedListsOfOtherQueriesAreWatchedApart(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	all := watchedList{gvr: gvr, namespace: "apps"}
	for _, other := range []watchedList{
		{gvr: gvr},
		{gvr: gvr, namespace: "apps", selector: "team=a"},
		{gvr: gvr, namespace: "apps", name: "a"},
		{gvr: rgdGVR, namespace: "apps"},
	} {
		if other.key() == all.key() {
			t.Errorf("%+v is watched as %+v", other, all)
		}
	}
	again := all
	again.seen = map[string]string{"apps/a": "1"}
	if again.key() != all.key() {
		t.Error("the same list read again would be watched twice")
	}
}

// -o name prints what kubectl get -o name prints for the same objects.
func TestPrintNames(t *testing.T) {
	var b bytes.Buffer
	printNames(&b, []InstanceStatusRow{
		{APIVersion: "kro.run/v1alpha1", Kind: "WebApp", Name: "demo"},
		{APIVersion: "platform.example.com/v1", Kind: "DataBase", Name: "orders"},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "core"},
	})
	if want := "webapp.kro.run/demo\ndatabase.platform.example.com/orders\nconfigmap/core\n"; b.String() != want {
		t.Errorf("names:\n%s\nwant:\n%s", b.String(), want)
	}
}

// status --watch -o name prints each instance once, as it appears: a change
// of state is no news, and an instance deleted and created again is.
func TestWatchedNamesAreNewOnes(t *testing.T) {
	var out bytes.Buffer
	o := &statusOptions{Options: &Options{Streams: genericiooptions.IOStreams{Out: &out}}, printFlags: printFlags{output: "name"}}
	a := InstanceStatusRow{APIVersion: "kro.run/v1alpha1", Kind: "WebApp", Name: "a", State: "IN_PROGRESS"}
	b := InstanceStatusRow{APIVersion: "kro.run/v1alpha1", Kind: "WebApp", Name: "b"}
	listed := map[string]bool{}
	var drawn []string
	last := ""
	for _, rows := range [][]InstanceStatusRow{
		{},
		{a},
		{{APIVersion: a.APIVersion, Kind: a.Kind, Name: "a", State: "ACTIVE"}},
		{a, b},
		{b},
		{a, b},
	} {
		v := o.newNames(rows, nil, listed)
		if drawn != nil && v.key == last {
			continue // redrawOnChange draws the first read, then only a change
		}
		last = v.key
		out.Reset()
		if err := v.draw(); err != nil {
			t.Fatal(err)
		}
		drawn = append(drawn, out.String())
	}
	want := []string{"", "webapp.kro.run/a\n", "webapp.kro.run/b\n", "", "webapp.kro.run/a\n"}
	if !slices.Equal(drawn, want) {
		t.Errorf("drawn %q, want %q", drawn, want)
	}
}

// A label column that names no label is refused before the cluster is
// asked.
func TestLabelColumnsMustBeLabelNames(t *testing.T) {
	for _, key := range []string{"team,", "a/b/c", "-team"} {
		err := runWithoutCluster("status", "-L", key)
		if err == nil || !strings.Contains(err.Error(), "--label-columns") || !strings.Contains(err.Error(), "not a label name") {
			t.Errorf("-L %q: %v", key, err)
		}
	}
}
