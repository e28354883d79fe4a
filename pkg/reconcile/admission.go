package reconcile

import (
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// admissionResources decide, beyond the API server's built-in checks,
// whether a write is admitted: webhook configurations, and admission
// policies and their bindings.
var admissionResources = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"},
}

// admissionSettle is how long after a change of admission configuration
// the instances it may concern are tried again: the API server loads a
// changed admission policy up to a second after it is written, and a
// retry refused meanwhile by the policy just removed would wait out the
// backoff again.
const admissionSettle = 2 * time.Second

// admissionWatch follows a cluster's admission configuration by metadata,
// and the agent's aggregated role (grants), so that an instance one of
// whose writes the API server refused there is tried again once that
// configuration, or what the agent is granted, changes: after many refusals the
// work queue's backoff waits up to 16 minutes before its next retry, long
// after the policy that refused it was fixed or removed.
type admissionWatch struct {
	client metadata.Interface
	// retry is told the instances to try again.
	retry func(InstanceKey)
	// observe, when set, is also told the resource and name of each
	// object that changed.
	observe func(schema.GroupResource, string)
	// grants, when set, names the ClusterRole the agent's grants are
	// aggregated into: a write forbidden for want of one is tried again
	// once it changes.
	grants string
	// granted, when set, is told each time the grants role changes.
	granted func()
	log     logr.Logger

	watching

	mu sync.Mutex
	// refused are the instances whose last run had a write refused here.
	refused sets.Set[InstanceKey]
}

func newAdmissionWatch(client metadata.Interface, retry func(InstanceKey), log logr.Logger) *admissionWatch {
	return &admissionWatch{client: client, retry: retry, log: log, refused: sets.New[InstanceKey]()}
}

// start watches each admission resource the cluster serves until
// stopWatching is called. Each is tried rather than looked up first: a
// discovery answer missing a group for a moment (a cluster under load)
// would otherwise leave it unwatched for good.
func (a *admissionWatch) start() {
	ctx := a.begin()
	lost := "instances whose writes it refuses are retried with backoff only"
	if a.observe != nil {
		lost += ", and its own registrations are read back only periodically"
	}
	for _, gvr := range admissionResources {
		gr := gvr.GroupResource()
		// That something changed is all that is read.
		watchNames(ctx, a.client, gvr, false, func(n cache.ObjectName) { a.changed(gr, n.Name) }, a.log, lost)
	}
	if a.grants != "" {
		roles := rbacv1.SchemeGroupVersion.WithResource("clusterroles")
		watchName(ctx, a.client, roles, a.grants, func(n cache.ObjectName) {
			if a.granted != nil {
				a.granted()
			}
			a.changed(roles.GroupResource(), n.Name)
		},
			a.log, "instances whose writes were forbidden are retried with backoff only once the agent is granted more")
	}
}

// stopWatching ends the watches.
func (a *admissionWatch) stopWatching() {
	if a != nil {
		a.end()
	}
}

// note records how a run of an instance in this cluster ended: with a
// write the API server refused (err), or not.
func (a *admissionWatch) note(key InstanceKey, err error) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if refusedByServer(err) {
		a.refused.Insert(key)
	} else {
		a.refused.Delete(key)
	}
}

// changed tries again every instance whose last run was refused, after
// telling observe what changed. Each is kept until its next run says
// whether it was refused again: a second change while a retry runs (a
// binding deleted after its policy) must bring it back again, since that
// run may have been refused before.
func (a *admissionWatch) changed(gr schema.GroupResource, name string) {
	if a.observe != nil {
		a.observe(gr, name)
	}
	a.mu.Lock()
	keys := a.refused.UnsortedList()
	a.mu.Unlock()
	for _, key := range keys {
		a.retry(key)
	}
}

// refusedByServer tells an error the API server answered with (an
// admission webhook or policy denying the write, a webhook it could not
// call, an object it finds invalid) from one where it was not reached, or
// the agent held back.
func refusedByServer(err error) bool {
	var status apierrors.APIStatus
	return err != nil && errors.As(err, &status)
}
