//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// hostWebhook is a validating webhook that admits everything, served by
// this process on an address of the host the API server can dial, with a
// certificate for the name the API server calls Service name in namespace
// ns by.
type hostWebhook struct {
	ip       string
	port     int
	caBundle []byte
	calls    atomic.Int64
}

func serveWebhook(t *testing.T, ns, name string) *hostWebhook {
	t.Helper()
	h := &hostWebhook{ip: hostIPv4(t)}
	cert, caBundle := selfSignedCert(t, name+"."+ns+".svc")
	h.caBundle = caBundle
	l, err := net.Listen("tcp", net.JoinHostPort(h.ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	h.port = l.Addr().(*net.TCPAddr).Port
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return h
}

// hostIPv4 is an address of this host other than loopback, which an
// EndpointSlice may name (the API server refuses loopback endpoints).
func hostIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatalf("this host has no IPv4 address but loopback (%v) to serve a webhook on for an EndpointSlice", addrs)
	return ""
}

// selfSignedCert is a serving certificate for dnsName, and the PEM bundle
// that trusts it.
func selfSignedCert(t *testing.T, dnsName string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A write refused because an admission webhook's Service had no
// endpoints (its pods down) is applied again as soon as the Service's
// endpoints change, however many times it was refused before: the
// work queue's backoff alone would wait minutes more after the webhook is
// back.
func TestWebhookRefusalIsRetriedWhenItsServiceHasEndpoints(t *testing.T) {
	const ns, service, instance = "webhookcalls", "hook", "patient"
	const webhook = "configmaps.webhookcalls.e2e.kro-agent.dev"
	f := features.New("a write an admission webhook without endpoints refuses").
		Assess("says which Service it waits on, and is applied within seconds of its endpoints", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := moodsIn(t, cfg, ns)
			hook := serveWebhook(t, ns, service)
			c.apply(t, fmt.Sprintf(`{apiVersion: v1, kind: Service, metadata: {name: %s, namespace: %s}, spec: {ports: [{name: https, port: 443, targetPort: %d}]}}`, service, ns, hook.port))
			c.apply(t, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %[1]s}
webhooks:
  - name: %[1]s
    clientConfig:
      service: {namespace: %[2]s, name: %[3]s, path: /validate, port: 443}
      caBundle: %[4]s
    rules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[2]s}}
    objectSelector: {matchLabels: {%[5]s: %[6]s}}
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 2`, webhook, ns, service, base64.StdEncoding.EncodeToString(hook.caBundle), v1alpha1.LabelInstanceName, instance))
			t.Cleanup(func() {
				_ = c.resource(t, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration").Delete(context.Background(), webhook, metav1.DeleteOptions{})
			})
			probe := fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: webhook-probe, namespace: %s, labels: {%s: %s}}}", ns, v1alpha1.LabelInstanceName, instance)
			eventually(t, 30*time.Second, "the webhook to be in force", func() (bool, string) {
				_, err := c.tryApply(t, probe)
				return apierrors.IsInternalError(err), fmt.Sprintf("the probe ConfigMap: %v", err)
			})

			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Mood, metadata: {name: %s, namespace: %s}, spec: {mood: waiting}}", instance, ns))
			refuseRepeatedly(t, c, "Mood", ns, instance, 14, `no endpoints available for service "`+service+`"`, func(i int) string {
				return fmt.Sprintf(`{"spec":{"mood":"waiting-%d"}}`, i)
			})
			u := c.mustGet(t, "kro.run/v1alpha1", "Mood", ns, instance)
			if msg := condition(u, v1alpha1.ConditionResourcesReady).Message; !strings.HasSuffix(msg, fmt.Sprintf("; it is applied again as soon as the endpoints of Service %s/%s, which serves webhook %q, change", ns, service, webhook)) {
				t.Errorf("the refusal says %q; want it to name the Service it waits on", msg)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "mood", instance, "-n", ns)
			if want := fmt.Sprintf("What to do: admission webhook %q, served by Service %s in namespace %s, did not answer the API server, and its failure policy refuses what it cannot check, ConfigMap %s among it: bring its pods back (kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s shows its endpoints)", webhook, service, ns, instance, ns, service); !strings.Contains(out, want) {
				t.Errorf("why-not-ready of a resource a webhook without endpoints refuses (err %v):\n%s\nwant it to say:\n%s", err, out, want)
			}
			if calls := hook.calls.Load(); calls != 0 {
				t.Fatalf("the webhook was called %d times before its Service had endpoints", calls)
			}

			// What the EndpointSlice controller writes when the webhook's
			// pods are ready again.
			c.apply(t, fmt.Sprintf(`
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-host
  namespace: %[2]s
  labels: {kubernetes.io/service-name: %[1]s, endpointslice.kubernetes.io/managed-by: e2e.kro-agent.dev}
addressType: IPv4
endpoints: [{addresses: ["%[3]s"], conditions: {ready: true}}]
ports: [{name: https, port: %[4]d, protocol: TCP}]`, service, ns, hook.ip, hook.port))
			c.activeSoonAfter(t, "Mood", ns, instance, time.Now(), "its webhook's Service got endpoints")
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, instance); cm.Object["data"].(map[string]any)["mood"] != "waiting-13" {
				t.Errorf("ConfigMap data: %v", cm.Object["data"])
			}
			if hook.calls.Load() == 0 {
				t.Error("the ConfigMap was admitted without a call to the webhook")
			}
			c.delete(t, "kro.run/v1alpha1", "Mood", ns, instance)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
