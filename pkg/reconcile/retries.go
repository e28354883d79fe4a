package reconcile

import (
	"errors"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// A failed run of an instance is tried again after a wait that doubles with
// each failure in a row, up to 1000 s (16 minutes), under a bucket every
// instance shares (10 tries a second, bursts of 100), as client-go's default
// controller rate limiter paces them. Only the first wait differs with the
// failure. An error the next try may get past (a conflict, a timeout,
// throttling, a webhook at a URL that could not be called) is tried again
// after 5 ms. A refusal the API server gives again until something changes (the
// object invalid, the write forbidden, its namespace missing) waits a
// second: what usually ends it (the instance edited, an admission policy or
// webhook, a grant, a quota or a namespace changed, a name's holder gone)
// brings the instance back at once through what the agent watches, and
// waits of 5 ms would send some eight refused writes, and log as many
// errors, in the first second alone.
const (
	firstRetryAfterError   = 5 * time.Millisecond
	firstRetryAfterRefusal = time.Second
	longestRetryWait       = 1000 * time.Second
)

// newRetryLimiters returns the paces of retries after an error (the work
// queue's own) and after a lasting refusal, under one shared bucket.
func newRetryLimiters() (afterError, afterRefusal workqueue.TypedRateLimiter[InstanceKey]) {
	shared := &workqueue.TypedBucketRateLimiter[InstanceKey]{Limiter: rate.NewLimiter(rate.Limit(10), 100)}
	afterError = workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[InstanceKey](firstRetryAfterError, longestRetryWait), shared)
	afterRefusal = workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[InstanceKey](firstRetryAfterRefusal, longestRetryWait), shared)
	return afterError, afterRefusal
}

// refusedUntilChange tells a failed run whose write the API server will
// refuse the same way until something changes: a lasting refusal
// (refusal.IsLasting), or one whose end the agent watches for by other
// means (the namespace the object goes into created, endpoints for the
// Service of a webhook the API server could not call, the object of
// another owner that holds the name deleted).
func refusedUntilChange(err error) bool {
	var namespace *namespaceUnavailable
	var webhook *webhookRefusal
	var held *heldByOtherError
	return refusal.IsLasting(err) || errors.As(err, &namespace) || errors.As(err, &webhook) || errors.As(err, &held)
}
