package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// awaitAPIServer waits, for up to patience, until the API server answers
// a request for its version. An agent started while the control plane
// restarts (a node rebooted, an upgrade) then starts once it is back,
// rather than exit at its first request and wait out its container's
// restart backoff. The first failure is logged, and the last is the error
// if the API server never answers; one that refuses the agent's
// credentials is an error at once, as waiting would not change it.
func awaitAPIServer(ctx context.Context, cfg *rest.Config, patience time.Duration, log logr.Logger) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 5 * time.Second // one request, not the whole wait
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	poll := func(context.Context) (bool, error) {
		_, err := dc.ServerVersion()
		switch {
		case err == nil:
			if last != nil {
				log.Info("the API server answers", "host", cfg.Host)
			}
			return true, nil
		case apierrors.IsUnauthorized(err):
			return false, fmt.Errorf("the API server at %s refuses the agent's credentials: %w", cfg.Host, err)
		}
		if last == nil {
			log.Info("waiting for the API server to answer", "host", cfg.Host, "for", patience.String(), "error", err.Error())
		}
		last = err
		return false, nil
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, patience, true, poll)
	if wait.Interrupted(err) && ctx.Err() == nil && last != nil { // patience ran out, not the agent
		return fmt.Errorf("the API server at %s did not answer within %s: %w", cfg.Host, patience, last)
	}
	return err
}
