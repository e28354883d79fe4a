package kinds

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// How long Awaiting waits for a kind: `kubectl apply -f` of a file with a
// CRD and an RGD that uses it sends the RGD a few milliseconds after the
// CRD, before the API server serves the new kind or, a moment later, has
// published its OpenAPI schema (half a second to a few seconds). A kind
// not served at all is most often a typo, whose denial should not wait
// long, unless it is known to be coming (another RGD generates it); one
// served without a schema is surely on its way.
const (
	awaitServed    = time.Second
	awaitPublished = 5 * time.Second
	awaitPoll      = 200 * time.Millisecond
)

// Awaiting resolves kinds with r, waiting a little for a kind that is not
// served yet or whose schema is not published yet, as right after its CRD
// was created, until ctx ends; longer for a kind not served for which
// coming (when not nil) says a CRD is on its way. It is for answering one
// request, such as an admission review, which would otherwise refuse what
// is valid a moment later; the waits count from its creation, so an RGD
// with many unknown kinds does not wait for each in turn.
func Awaiting(ctx context.Context, r Resolver, coming func(schema.GroupVersionKind) bool) Resolver {
	return awaiting{ctx: ctx, r: r, coming: coming, start: time.Now()}
}

type awaiting struct {
	ctx    context.Context
	r      Resolver
	coming func(schema.GroupVersionKind) bool
	start  time.Time
}

// Suggest implements Suggester.
func (a awaiting) Suggest(gvk schema.GroupVersionKind) string { return Suggest(a.r, gvk) }

// Resolve implements Resolver.
func (a awaiting) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	for {
		info, err := a.r.Resolve(gvk)
		var limit time.Duration
		switch {
		case err == nil:
			return info, nil
		case NotPublished(err):
			limit = awaitPublished
		case errors.Is(err, ErrNotFound) && a.coming != nil && a.coming(gvk):
			limit = awaitPublished
		case errors.As(err, new(*UninstalledError)):
			// Being deleted: nothing comes of waiting.
			return nil, err
		case errors.Is(err, ErrNotFound):
			limit = awaitServed
		default:
			return nil, err
		}
		if time.Since(a.start)+awaitPoll > limit {
			return nil, err
		}
		select {
		case <-a.ctx.Done():
			return nil, err
		case <-time.After(awaitPoll):
		}
	}
}
