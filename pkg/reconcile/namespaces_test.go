package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// A namespace that comes or goes retries the instances whose last run
// waited for it; the others, and an instance whose later run no longer
// waited, are left alone. Each change retries them until their next run
// says what it waited for: a change while a retry runs (which may have
// been refused before it) is not lost, and the work queue runs an
// instance once however often it is told meanwhile.
func TestNamespaceChangesRetryWaitingInstances(t *testing.T) {
	var retried []string
	// Nothing here is watched: no client.
	w := newNamespaceWatch(nil, func(k InstanceKey) { retried = append(retried, k.Name) }, logr.Discard())
	key := func(name string) InstanceKey {
		return InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Elsewhere"}, Namespace: "ns", Name: name}
	}
	w.note(key("away"), sets.New("later"))
	w.note(key("both"), sets.New("later", "other"))
	w.note(key("moved"), sets.New("later"))
	w.note(key("moved"), nil)

	w.changed("unrelated")
	if len(retried) != 0 {
		t.Fatalf("another namespace retried %v", retried)
	}
	w.changed("later")
	slices.Sort(retried)
	if !slices.Equal(retried, []string{"away", "both"}) {
		t.Fatalf("namespace later retried %v, want away and both", retried)
	}
	retried = nil
	w.changed("other")
	w.changed("later")
	slices.Sort(retried)
	if !slices.Equal(retried, []string{"away", "both", "both"}) {
		t.Fatalf("changes before their next run retried %v, want away and both, both twice", retried)
	}
	retried = nil
	w.note(key("away"), nil)
	w.note(key("both"), nil)
	w.changed("later")
	if len(retried) != 0 {
		t.Fatalf("instances whose last run waited for nothing retried: %v", retried)
	}
}

// A LimitRange that changes retries the instances waiting on its
// namespace at once, and those still waiting once more when the change has
// settled: the API server's LimitRanger may refuse by a LimitRange just
// deleted until a list it made itself expires. Nothing is retried then for
// an instance whose run no longer waited, or once the watch has stopped.
func TestLimitRangeChangesRetryWaitingInstancesOnceMore(t *testing.T) {
	var retried []string
	w := newNamespaceWatch(nil, func(k InstanceKey) { retried = append(retried, k.Name) }, logr.Discard())
	var settled []func()
	w.afterLimitRangesSettle = func(f func()) { settled = append(settled, f) }
	settle := func() {
		for _, f := range settled {
			f()
		}
		settled = nil
	}
	key := func(name string) InstanceKey {
		return InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Sleeper"}, Namespace: "limited", Name: name}
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	w.limitRangesChanged(ctx, "limited")
	settle()
	if len(retried) != 0 {
		t.Fatalf("a LimitRange of a namespace nothing waits on retried %v", retried)
	}

	w.note(key("refused"), sets.New("limited"))
	w.note(key("elsewhere"), sets.New("other"))
	w.limitRangesChanged(ctx, "limited")
	if !slices.Equal(retried, []string{"refused"}) {
		t.Fatalf("the change retried %v, want refused at once", retried)
	}
	settle()
	if !slices.Equal(retried, []string{"refused", "refused"}) {
		t.Fatalf("once settled, %v were retried, want refused once more", retried)
	}

	retried = nil
	w.limitRangesChanged(ctx, "limited")
	w.note(key("refused"), nil)
	settle()
	if !slices.Equal(retried, []string{"refused"}) {
		t.Fatalf("an instance that no longer waits was retried %v, want once, at the change", retried)
	}

	retried = nil
	w.note(key("refused"), sets.New("limited"))
	w.limitRangesChanged(ctx, "limited")
	stop()
	settle()
	if !slices.Equal(retried, []string{"refused"}) {
		t.Fatalf("a stopped watch retried %v, want refused once, at the change", retried)
	}
}

func TestNamespaceUnavailable(t *testing.T) {
	configmaps := schema.GroupResource{Resource: "configmaps"}
	missing := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "later")
	terminating := apierrors.NewForbidden(configmaps, "note", errors.New("unable to create new content in namespace gone because it is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "gone", Field: "metadata.namespace"}}
	for _, tc := range []struct {
		name      string
		err       error
		namespace string
		want      string
	}{
		{"missing", fmt.Errorf("applying: %w", missing), "later", "namespace later does not exist: it is applied as soon as the namespace is created"},
		{"terminating", terminating, "gone", "namespace gone is being deleted: it is applied again once the namespace is created again"},
		{"another namespace missing", missing, "elsewhere", ""},
		{"the object missing", apierrors.NewNotFound(configmaps, "later"), "later", ""},
		{"cluster-scoped", missing, "", ""},
		{"refused otherwise", apierrors.NewForbidden(configmaps, "note", errors.New("denied")), "later", ""},
		{"not from the server", errors.New("connection refused"), "later", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := asNamespaceUnavailable(tc.err, tc.namespace)
			if tc.want == "" {
				if ok {
					t.Fatalf("taken for a namespace unavailable: %v", got)
				}
				return
			}
			if !ok {
				t.Fatalf("not taken for a namespace unavailable")
			}
			if got.Error() != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
			if !errors.Is(got, tc.err) && !errors.Is(got, errors.Unwrap(tc.err)) {
				t.Errorf("the API server's error is not kept: %v", got)
			}
			if !refusedByServer(got) {
				t.Error("no longer an answer of the API server")
			}
		})
	}
}
