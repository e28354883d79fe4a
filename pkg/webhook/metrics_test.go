package webhook

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Each webhook counts its answers by result and times every request.
func TestWebhooksCountAndTimeTheirAnswers(t *testing.T) {
	h := testServer(t)
	requests := func(webhook, result string) float64 {
		return testutil.ToFloat64(webhookRequests.WithLabelValues(webhook, result))
	}
	timed := func(webhook string) uint64 {
		m := &dto.Metric{}
		if err := webhookSeconds.WithLabelValues(webhook).(prometheus.Histogram).Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	denied, allowed, timedRGDs := requests("validate-rgd", "denied"), requests("validate-rgd", "allowed"), timed("validate-rgd")
	review(t, h, PathValidateRGD, rgdKind, rgdObject(t, `{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: bad}, spec: {schema: {apiVersion: v1alpha1, kind: Bad, spec: {size: "string | bogus=1"}}}}`))
	review(t, h, PathValidateRGD, rgdKind, rgdObject(t, `{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: good}, spec: {schema: {apiVersion: v1alpha1, kind: Good}, resources: [{id: cm, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}}]}}`))
	if got := requests("validate-rgd", "denied") - denied; got != 1 {
		t.Errorf("denied RGDs counted %v, want 1", got)
	}
	if got := requests("validate-rgd", "allowed") - allowed; got != 1 {
		t.Errorf("allowed RGDs counted %v, want 1", got)
	}
	if got := timed("validate-rgd") - timedRGDs; got != 2 {
		t.Errorf("RGD reviews timed %d, want 2", got)
	}
}

// A handler that cannot judge (or panics) is counted as an error, not a
// denial.
func TestWebhookErrorsAreNotDenials(t *testing.T) {
	for name, handler := range map[string]admission.HandlerFunc{
		"errored": func(context.Context, admission.Request) admission.Response {
			return admission.Errored(500, context.DeadlineExceeded)
		},
		"panicked": func(context.Context, admission.Request) admission.Response { panic("boom") },
	} {
		before := testutil.ToFloat64(webhookRequests.WithLabelValues(name, "error"))
		review(t, measured(name, handler), "/", rgdKind, map[string]any{})
		if got := testutil.ToFloat64(webhookRequests.WithLabelValues(name, "error")) - before; got != 1 {
			t.Errorf("%s: errors counted %v, want 1", name, got)
		}
	}
}
