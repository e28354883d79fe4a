package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kro-agent/kro-agent/pkg/agent"
)

func validOptions() agent.Options {
	return agent.Options{
		Workers: 64, MaxCollectionSize: 1000, ClusterCheckInterval: time.Minute, GracefulShutdown: 30 * time.Second, APIServerWait: time.Minute,
		Webhooks: agent.WebhookOptions{
			Service: "kro-system/kro-agent-webhook", CertSecret: "kro-system/kro-agent-webhook-certs",
			CertValidity: 90 * 24 * time.Hour, CertCheck: time.Hour, RegistrationCheck: 10 * time.Minute,
		},
	}
}

func TestCheckFlagsAcceptsTheDefaults(t *testing.T) {
	if err := checkFlags(validOptions()); err != nil {
		t.Errorf("the defaults were rejected: %v", err)
	}
	o := validOptions()
	o.GracefulShutdown = 0 // stop at once
	if err := checkFlags(o); err != nil {
		t.Errorf("a graceful shutdown of 0 was rejected: %v", err)
	}
	// As the demo and the bench run the agent, outside the cluster.
	o = validOptions()
	o.Webhooks.URL = "https://127.0.0.1:19443"
	o.Webhooks.CertSecret = "agent-certs" // in kro-system
	o.QPS, o.Burst = 50, 100
	o.Webhooks.CAValidity = 3 * o.Webhooks.CertValidity
	if err := checkFlags(o); err != nil {
		t.Errorf("a local agent's flags were rejected: %v", err)
	}
}

// A Service or Secret name the API server could not have, or a webhook URL
// it would not take, stops the agent at start: running on, it would never
// have its webhooks registered, or called.
func TestCheckFlagsRejectsWebhookNamesTheAPIServerWouldNot(t *testing.T) {
	for _, tc := range []struct {
		change func(*agent.WebhookOptions)
		want   string
	}{
		{func(w *agent.WebhookOptions) { w.Service = "a/b/c" }, `--webhook-service "a/b/c": name "b/c": a DNS-1035 label must consist of`},
		{func(w *agent.WebhookOptions) { w.Service = "Kro/hook" }, `--webhook-service "Kro/hook": namespace "Kro": a lowercase RFC 1123 label`},
		{func(w *agent.WebhookOptions) { w.CertSecret = "kro-system/" }, `--webhook-cert-secret "kro-system/": name "": a lowercase RFC 1123 subdomain`},
		{func(w *agent.WebhookOptions) { w.URL = "http://127.0.0.1:9443" }, `--webhook-url "http://127.0.0.1:9443": the API server calls webhooks over https only`},
		{func(w *agent.WebhookOptions) { w.URL = "127.0.0.1:9443" }, `--webhook-url: parse "127.0.0.1:9443": first path segment in URL cannot contain colon`},
		{func(w *agent.WebhookOptions) { w.URL = "https:///hooks" }, `--webhook-url "https:///hooks": no host`},
		{func(w *agent.WebhookOptions) { w.URL = "https://127.0.0.1:9443/?x=1" }, `--webhook-url "https://127.0.0.1:9443/?x=1": the API server takes no user, query or fragment`},
		{func(w *agent.WebhookOptions) { w.CertValidity = 2 * time.Hour }, `--webhook-cert-check-interval (1h0m0s) must be shorter than a third of --webhook-cert-validity (2h0m0s)`},
		{func(w *agent.WebhookOptions) { w.CAValidity = 200 * time.Hour }, `--webhook-ca-validity (200h0m0s) must be at least three times --webhook-cert-validity (2160h0m0s)`},
		{func(w *agent.WebhookOptions) { w.CAValidity = -time.Hour }, `--webhook-ca-validity must be a positive duration, or 0 for ten times --webhook-cert-validity, got -1h0m0s`},
	} {
		o := validOptions()
		tc.change(&o.Webhooks)
		if err := checkFlags(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", o.Webhooks, err, tc.want)
		}
	}
	o := validOptions()
	o.QPS, o.Burst = 5, 0
	if err := checkFlags(o); err == nil || !strings.Contains(err.Error(), "--kube-api-burst must be at least 1 with a positive --kube-api-qps, got 0") {
		t.Errorf("--kube-api-qps 5 --kube-api-burst 0: %v", err)
	}
}

func TestCheckFlagsNamesEveryBadFlag(t *testing.T) {
	o := validOptions()
	o.Workers = 0
	o.MaxCollectionSize = -1
	o.ClusterCheckInterval = 0
	o.Webhooks.CertValidity = -time.Hour
	o.Webhooks.CertCheck = -time.Second
	o.GracefulShutdown = -time.Second
	o.APIServerWait = 0
	err := checkFlags(o)
	if err == nil {
		t.Fatal("bad flags were accepted")
	}
	for _, want := range []string{
		"--workers must be at least 1, got 0",
		"--max-collection-size must be at least 1, got -1",
		"--cluster-check-interval must be a positive duration, got 0s",
		"--webhook-cert-validity must be a positive duration, got -1h0m0s",
		"--webhook-cert-check-interval must be a positive duration, got -1s",
		"--graceful-shutdown-timeout must not be negative, got -1s",
		"--api-server-wait must be a positive duration, got 0s",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
