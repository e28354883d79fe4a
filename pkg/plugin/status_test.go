package plugin

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPrintStatusShowsClusterOnlyWhenPlaced(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	created := &metav1.Time{Time: now.Add(-90 * time.Second)}
	local := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "local", State: "ACTIVE", Ready: "True", Created: created}
	placed := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "placed", State: "IN_PROGRESS", Ready: "False", Reason: "ClusterNotReady", Cluster: "eu-west-1", Created: created}

	for _, tc := range []struct {
		name string
		rows []InstanceStatusRow
		want string
	}{
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printStatus(&out, tc.rows, true, palette{}, now)
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestStatusKeyNoticesAMove(t *testing.T) {
	row := InstanceStatusRow{Namespace: "apps", Kind: "WebApp", Name: "a", State: "ACTIVE", Ready: "True"}
	moved := row
	moved.Cluster = "eu-west-1"
	if statusKey([]InstanceStatusRow{row}) == statusKey([]InstanceStatusRow{moved}) {
		t.Error("--watch would not redraw when an instance is placed")
	}
}
