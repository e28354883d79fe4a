package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
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
// so that an instance one of whose writes the API server refused there is
// tried again once that configuration changes: after many refusals the
// work queue's backoff waits up to 16 minutes before its next retry, long
// after the policy that refused it was fixed or removed.
type admissionWatch struct {
	client metadata.Interface
	// retry is told the instances to try again.
	retry func(InstanceKey)
	log   logr.Logger

	mu sync.Mutex
	// refused are the instances whose last run had a write refused here
	// since the configuration last changed.
	refused sets.Set[InstanceKey]
	stop    context.CancelFunc
}

func newAdmissionWatch(cfg *rest.Config, retry func(InstanceKey), log logr.Logger) (*admissionWatch, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the admission configuration's client: %w", err)
	}
	return &admissionWatch{client: client, retry: retry, log: log, refused: sets.New[InstanceKey]()}, nil
}

// start watches each admission resource the cluster serves until
// stopWatching is called. Each is tried rather than looked up first: a
// discovery answer missing a group for a moment (a cluster under load)
// would otherwise leave it unwatched for good.
func (a *admissionWatch) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	a.stop = cancel
	a.mu.Unlock()
	for _, gvr := range admissionResources {
		a.watch(ctx, gvr)
	}
}

func (a *admissionWatch) watch(ctx context.Context, gvr schema.GroupVersionResource) {
	inf := metadatainformer.NewFilteredMetadataInformer(a.client, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	// That something changed is all that is read.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, ResourceVersion: m.ResourceVersion}
		}
		return obj, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				a.changed()
			}
		},
		UpdateFunc: func(any, any) { a.changed() },
		DeleteFunc: func(any) { a.changed() },
	})
	ctx, stopThis := context.WithCancel(ctx)
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		switch {
		case apierrors.IsForbidden(err):
			// Without the permission the refused instances are retried
			// with the backoff alone; asking again would only fail again.
			a.log.Info("not following admission configuration, which the agent may not list and watch: instances whose writes it refuses are retried with backoff only",
				"resource", gvr.GroupResource().String(), "error", err.Error())
			stopThis()
			return
		case apierrors.IsNotFound(err):
			// An older cluster does not serve every one of them.
			a.log.V(1).Info("the cluster does not serve this admission resource", "resource", gvr.String())
			stopThis()
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	go inf.RunWithContext(ctx)
}

// stopWatching ends the watches.
func (a *admissionWatch) stopWatching() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stop != nil {
		a.stop()
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

// changed tries again every instance refused since the last change. Each
// is recorded anew if it is refused again, so instances deleted meanwhile
// are not kept.
func (a *admissionWatch) changed() {
	a.mu.Lock()
	keys := a.refused
	a.refused = sets.New[InstanceKey]()
	a.mu.Unlock()
	for key := range keys {
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
