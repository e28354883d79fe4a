package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/limitrange"
	"github.com/kro-agent/kro-agent/pkg/podsecurity"
	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// namespaceWatch follows a cluster's namespaces and LimitRanges by name,
// so that an instance with a resource that could not be applied for want
// of its namespace (not created yet, or being deleted) is tried again as
// soon as the namespace is created or gone, and one refused for what the
// namespace asks of Pods (its Pod Security level, its LimitRanges) as soon
// as the namespace or one of its LimitRanges changes, not at its next
// retry: after a few refusals the work queue's backoff waits minutes.
type namespaceWatch struct {
	client metadata.Interface
	// retry is told the instances to try again.
	retry func(InstanceKey)
	log   logr.Logger
	// afterLimitRangesSettle runs f once a change of LimitRanges has
	// settled in the API server.
	afterLimitRangesSettle func(f func())

	// waiting are the namespaces each instance's last run waited for.
	waiting waiters[string]
	watching
}

func newNamespaceWatch(client metadata.Interface, retry func(InstanceKey), log logr.Logger) *namespaceWatch {
	return &namespaceWatch{client: client, retry: retry, log: log,
		afterLimitRangesSettle: func(f func()) { time.AfterFunc(limitRangeListTTL+time.Second, f) }}
}

// limitRangeListTTL is how long the API server's LimitRanger admission
// uses a list of a namespace's LimitRanges it made itself. It makes one
// when its informer holds none for the namespace (a LimitRange created
// moments ago, not seen yet), and goes on using it while its informer
// still holds none: a LimitRange deleted within that time refuses Pods
// until the list expires.
const limitRangeListTTL = 30 * time.Second

// start watches the cluster's namespaces, and its LimitRanges, until
// stopWatching is called. The first list of namespaces counts: a
// namespace created between a refused apply and the watch's start is
// still noticed.
func (w *namespaceWatch) start() {
	ctx := w.begin()
	watchNames(ctx, w.client, corev1.SchemeGroupVersion.WithResource("namespaces"), true,
		func(ns cache.ObjectName) { w.changed(ns.Name) }, w.log,
		"instances waiting for a namespace are retried with backoff only")
	watchNames(ctx, w.client, corev1.SchemeGroupVersion.WithResource("limitranges"), false,
		func(lr cache.ObjectName) { w.limitRangesChanged(ctx, lr.Namespace) }, w.log,
		"instances a LimitRange refused are retried with backoff only")
}

// stopWatching ends the watch.
func (w *namespaceWatch) stopWatching() {
	if w != nil {
		w.end()
	}
}

// note records the namespaces an instance's run waited for; none forgets
// the instance.
func (w *namespaceWatch) note(key InstanceKey, namespaces sets.Set[string]) {
	if w == nil {
		return
	}
	w.waiting.note(key, namespaces)
}

// forgetKind forgets the instances of a kind the agent no longer serves.
func (w *namespaceWatch) forgetKind(gvk schema.GroupVersionKind) {
	if w != nil {
		w.waiting.forgetKind(gvk)
	}
}

// changed tries again the instances waiting for a namespace that was
// created, changed (its deletion began, or its labels changed) or
// deleted, or one of whose LimitRanges changed, and says how many.
func (w *namespaceWatch) changed(name string) int {
	keys := w.waiting.waitingFor(name)
	for _, key := range keys {
		w.retry(key)
	}
	return len(keys)
}

// limitRangesChanged tries again the instances waiting on a namespace one
// of whose LimitRanges changed, and, those still waiting then, once more
// when a list of them the API server made itself has expired.
func (w *namespaceWatch) limitRangesChanged(ctx context.Context, namespace string) {
	if w.changed(namespace) == 0 {
		return
	}
	w.afterLimitRangesSettle(func() {
		if ctx.Err() == nil {
			w.changed(namespace)
		}
	})
}

// namespaceUnavailable is an apply refused because the object's namespace
// does not exist or is being deleted.
type namespaceUnavailable struct {
	namespace   string
	terminating bool
	err         error
}

func (e *namespaceUnavailable) Error() string {
	if e.terminating {
		return fmt.Sprintf("namespace %s is being deleted: it is applied again once the namespace is created again", e.namespace)
	}
	return fmt.Sprintf("namespace %s does not exist: it is applied as soon as the namespace is created", e.namespace)
}

func (e *namespaceUnavailable) Unwrap() error { return e.err }

// namespacePolicyRefusal is a write refused for what its namespace asks
// of such objects: a Pod below the Pod Security level the namespace's
// label enforces, a Pod or claim outside what the namespace's LimitRanges
// allow. A change of the namespace or of its LimitRanges may lift it, so
// the instance waits on the namespace as for one that does not exist.
type namespacePolicyRefusal struct {
	namespace string
	// policy names what of the namespace refused the write.
	policy string
	err    error
}

func (e *namespacePolicyRefusal) Error() string {
	return fmt.Sprintf("%v; it is applied as soon as the template, or %s, allows it", e.err, e.policy)
}

func (e *namespacePolicyRefusal) Unwrap() error { return e.err }

// asNamespacePolicyRefusal tells an apply in namespace refused by Pod
// Security admission or a LimitRange.
func asNamespacePolicyRefusal(err error, namespace string) (*namespacePolicyRefusal, bool) {
	if namespace == "" || !apierrors.IsForbidden(err) {
		return nil, false
	}
	refusal := &namespacePolicyRefusal{namespace: namespace, err: err}
	if _, ok := podsecurity.RefusedAt(err.Error()); ok {
		refusal.policy = fmt.Sprintf("the label %s of namespace %s", podsecurity.EnforceLabel, namespace)
		return refusal, true
	}
	if limitrange.Refused(err.Error()) {
		refusal.policy = "the LimitRanges of namespace " + namespace
		return refusal, true
	}
	return nil, false
}

// asNamespaceUnavailable tells an apply in namespace refused for want of
// it.
func asNamespaceUnavailable(err error, namespace string) (*namespaceUnavailable, bool) {
	terminating, ok := refusal.NamespaceUnavailable(err, namespace)
	if !ok {
		return nil, false
	}
	return &namespaceUnavailable{namespace: namespace, terminating: terminating, err: err}, true
}
