package webhook

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The API server waits on the webhooks (the RGD webhook fails closed), so
// how long they take and what they answer are the agent's to report: a
// slow or failing webhook shows here before anyone's kubectl apply hangs.
var (
	webhookRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kro_agent_webhook_requests_total",
		Help: "Admission reviews each webhook judged, by result (allowed, denied, error).",
	}, []string{"webhook", "result"})
	webhookSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kro_agent_webhook_request_duration_seconds",
		Help:    "Time each webhook took to answer an admission request, from its headers read to the answer written.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	}, []string{"webhook"})
	// An expired certificate fails every review at the TLS handshake,
	// before any of the above is counted: the time to alert on.
	certificateExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kro_agent_webhook_certificate_expiration_timestamp_seconds",
		Help: "When the certificate this replica serves the webhooks with expires (certificate=serving), and the CA that signed it (certificate=ca), in seconds since the epoch.",
	}, []string{"certificate"})
)

func init() {
	metrics.Registry.MustRegister(webhookRequests, webhookSeconds, certificateExpiry)
}

// measured serves handler as the webhook named name, counting its answers
// and timing each request.
func measured(name string, handler admission.Handler) http.Handler {
	recoverPanic := true
	hook := &admission.Webhook{Handler: counted{name, handler}, RecoverPanic: &recoverPanic}
	return promhttp.InstrumentHandlerDuration(webhookSeconds.MustCurryWith(prometheus.Labels{"webhook": name}), hook)
}

// counted counts what handler answers.
type counted struct {
	name    string
	handler admission.Handler
}

// Handle implements admission.Handler.
func (c counted) Handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	defer func() {
		if r := recover(); r != nil {
			webhookRequests.WithLabelValues(c.name, "error").Inc()
			panic(r) // the webhook answers it as an error
		}
		webhookRequests.WithLabelValues(c.name, result(resp)).Inc()
	}()
	return c.handler.Handle(ctx, req)
}

// result names an answer: denied is a request refused for what it asks
// (403), error one the webhook could not judge.
func result(resp admission.Response) string {
	switch {
	case resp.Allowed:
		return "allowed"
	case resp.Result != nil && resp.Result.Code == http.StatusForbidden:
		return "denied"
	}
	return "error"
}
