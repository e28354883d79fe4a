// Package webhookcall recognises the API server's refusals of writes that
// an admission webhook it could not call stands in the way of: a webhook
// whose failurePolicy is Fail refuses everything it matches while it does
// not answer (its pods down, its certificate wrong, a timeout). Such a
// refusal is not final: the write is admitted once the webhook answers
// again, which for a webhook served by a Service is most often when the
// Service's endpoints change (its pods ready again). The agent waits on
// those; kubectl kro says which webhook and Service to look at.
package webhookcall

import (
	"net/url"
	"regexp"
	"strings"
)

// Failure is a call to an admission webhook that failed.
type Failure struct {
	// Webhook is the webhook's name in its configuration.
	Webhook string
	// Namespace and Service name the Service that serves the webhook;
	// both are empty for a webhook configured with a URL.
	Namespace, Service string
	// URL is where the API server sent the request.
	URL string
}

// failure matches the API server's words for a webhook it sent a request
// to without an answer (k8s.io/apiserver's webhook dispatchers; the same
// for mutating and validating webhooks), up to the request's URL. A
// webhook's name is a DNS subdomain: it holds no quote.
var failure = regexp.MustCompile(`failed calling webhook "([^"]+)": failed to call webhook: [A-Za-z]+ "([^"\s]+)"`)

// Failed tells which webhook message (an API server error, or a condition
// quoting one) says could not be called, and whether it says so at all.
func Failed(message string) (Failure, bool) {
	m := failure.FindStringSubmatch(message)
	if m == nil {
		return Failure{}, false
	}
	f := Failure{Webhook: m[1], URL: m[2]}
	// The API server calls a webhook configured with a Service at
	// https://NAME.NAMESPACE.svc:PORT/PATH, whatever address it then dials.
	u, err := url.Parse(m[2])
	if err != nil || u.Scheme != "https" {
		return f, true
	}
	if labels := strings.Split(u.Hostname(), "."); len(labels) == 3 && labels[2] == "svc" && labels[0] != "" && labels[1] != "" {
		f.Service, f.Namespace = labels[0], labels[1]
	}
	return f, true
}
