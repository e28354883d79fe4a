package clusters

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/client-go/rest"
)

// Observed returns a copy of cfg whose requests tell the registry whether
// the named cluster's API server answered them (Answered): every client of
// a workload cluster built from it reports on the cluster as it goes. The
// transport is where a stopped cluster shows: client-go retries a watch the
// cluster refuses without telling the informer's error handler.
//
// Any response is an answer, an error status too, except 401: credentials
// the cluster does not take fail its check as well (asking for its
// version), so a 401 agrees with that check instead of asking for another
// every few seconds. A request its caller gave up (its context canceled:
// an informer stopping) tells nothing.
func (r *Registry) Observed(name string, cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return answerObserver{next: rt, answered: func(ok bool) { r.Answered(name, ok) }}
	})
	return cfg
}

type answerObserver struct {
	next     http.RoundTripper
	answered func(bool)
}

func (o answerObserver) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	switch {
	case err == nil:
		o.answered(resp.StatusCode != http.StatusUnauthorized)
	case !errors.Is(req.Context().Err(), context.Canceled):
		o.answered(false)
	}
	return resp, err
}
