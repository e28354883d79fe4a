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
		Webhooks: agent.WebhookOptions{CertValidity: 90 * 24 * time.Hour, CertCheck: time.Hour, RegistrationCheck: 10 * time.Minute},
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
