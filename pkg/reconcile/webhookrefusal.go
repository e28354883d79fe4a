package reconcile

import (
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/webhookcall"
)

// webhookRefusal is a write the API server refused because it could not
// call an admission webhook served by a Service.
type webhookRefusal struct {
	webhook string
	// service names the Service; what is followed is its EndpointSlices
	// (newWebhookServiceWatches).
	service objectRef
	err     error
}

func (e *webhookRefusal) Error() string {
	return fmt.Sprintf("%v; it is applied again as soon as the endpoints of Service %s, which serves webhook %q, change",
		e.err, cache.NewObjectName(e.service.Namespace, e.service.Name), e.webhook)
}

func (e *webhookRefusal) Unwrap() error { return e.err }

// asWebhookRefusal tells a write in cluster that the API server refused
// for want of an answer from an admission webhook served by a Service,
// and names the Service. A webhook configured with a URL has nothing to
// follow: its refusal is retried when the admission configuration
// changes, or with the backoff.
func asWebhookRefusal(err error, cluster string) (*webhookRefusal, bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return nil, false
	}
	f, ok := webhookcall.Failed(err.Error())
	if !ok || f.Service == "" {
		return nil, false
	}
	ref := objectRef{Cluster: cluster, GVR: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), Namespace: f.Namespace, Name: f.Service}
	return &webhookRefusal{webhook: f.Webhook, service: ref, err: err}, true
}
