//go:build e2e

package e2e

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// replica is one leader-elected agent of the two.
type replica struct {
	cancel context.CancelFunc
	done   chan error
}

// startReplica starts a replica without webhooks.
func startReplica(cfg *envconf.Config) *replica {
	return startReplicaWith(cfg, agent.WebhookOptions{Addr: "0"})
}

func startReplicaWith(cfg *envconf.Config, webhooks agent.WebhookOptions) *replica {
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- agent.Run(ctx, agent.Options{
			Config: cfg.Client().RESTConfig(), Workers: 2, QPS: -1, MetricsAddr: "0", ProbeAddr: "0",
			LeaderElection: true, LeaderElectionNamespace: "kro-system",
			Webhooks: webhooks,
			Log:      zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())),
		})
	}()
	return r
}

func (r *replica) stop(t testing.TB) {
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("replica returned: %v", err)
	}
}

// deleteLeaseAfter deletes, when the test ends, the Lease the replicas it
// starts leave: the suite's shared agent runs without leader election, and
// a Lease no replica holds would tell later tests that no agent runs.
func deleteLeaseAfter(t testing.TB, c *clients) {
	t.Cleanup(func() { c.delete(t, "coordination.k8s.io/v1", "Lease", "kro-system", agent.LeaderElectionID) })
}

func leaseHolder(t testing.TB, c *clients) string {
	u, err := c.get(t, "coordination.k8s.io/v1", "Lease", "kro-system", agent.LeaderElectionID)
	if err != nil {
		return ""
	}
	lease := &coordinationv1.Lease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, lease); err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

func TestTwoReplicas(t *testing.T) {
	const ns = "replicas"
	f := features.New("two leader-elected replicas: one writes, the other takes over").
		Assess("one leader serves; when it stops, the standby takes over", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// The shared single agent would mask which replica works.
			stopAgentNow(t)
			defer startAgent(t, cfg)
			c := newClients(t, cfg)
			namespace(t, c, "kro-system")
			namespace(t, c, ns)
			deleteLeaseAfter(t, c)
			replicas := map[string]*replica{"a": startReplica(cfg), "b": startReplica(cfg)}
			defer func() {
				for _, r := range replicas {
					r.stop(t)
				}
			}()
			stop := func(name string) {
				replicas[name].stop(t)
				delete(replicas, name)
			}
			// These replicas serve no webhooks; the shared agent's RGD
			// webhook (failurePolicy Fail) would refuse the write while it
			// is stopped, as designed.
			c.applyUnvalidated(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			c.apply(t, webapp(ns, "ha", ", replicas: 1"))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "ha", v1alpha1.InstanceActive)
			repaired := func(why string) {
				c.delete(t, "v1", "ConfigMap", ns, "ha-config")
				eventually(t, 60*time.Second, why, func() (bool, string) {
					_, err := c.get(t, "v1", "ConfigMap", ns, "ha-config")
					return err == nil, fmt.Sprint(err)
				})
			}
			// Whichever of a and b leads, b leads once a is gone.
			stop("a")
			repaired("b to repair drift")
			held := leaseHolder(t, c)
			if held == "" {
				t.Fatal("no replica holds the Lease")
			}
			// c waits as a standby; b releases the Lease as it stops, so c
			// takes over without waiting for it to expire.
			replicas["c"] = startReplica(cfg)
			stop("b")
			eventually(t, 60*time.Second, "c to take the Lease", func() (bool, string) {
				h := leaseHolder(t, c)
				return h != "" && h != held, fmt.Sprintf("holder %q", h)
			})
			repaired("c to repair drift")
			// The last replica to stop releases the Lease: why-not-ready
			// reads there that none runs, and says to start one.
			stop("c")
			c.patch(t, "kro.run/v1alpha1", "WebApp", ns, "ha", `{"spec":{"replicas":2}}`)
			out, err := kro(t, cfg, nil, "why-not-ready", "webapp", "ha", "-n", ns)
			for _, want := range []string{"'s conditions are stale", "no kro-agent holds its Lease kro-system/kro-agent.kro.run", "What to do: start kro-agent"} {
				if err == nil || !strings.Contains(out, want) {
					t.Errorf("why-not-ready with no replica running: %v\n%s\nwant %q", err, out, want)
				}
			}
			if out, err := kro(t, cfg, nil, "explain-conditions", "webapp", "ha", "-n", ns); err != nil ||
				!strings.Contains(out, "(STALE: observed generation 1, object is at 2; no kro-agent holds its Lease kro-system/kro-agent.kro.run") {
				t.Errorf("explain-conditions with no replica running: %v\n%s", err, out)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// A standby registers the webhooks too, as it starts and at each
// certificate rotation, but it reconciles no RGDs and so does not know the
// served kinds. It must leave the instance webhook's kinds as the leader
// registered them: taken off, instances would be admitted without their
// labels until the leader next checked.
func TestStandbyKeepsInstanceKinds(t *testing.T) {
	f := features.New("a standby's registration keeps the leader's kinds").
		Assess("the instance webhook still covers the served kind after a standby starts", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			defer startAgent(t, cfg)
			c := newClients(t, cfg)
			namespace(t, c, "kro-system")
			namespace(t, c, "standby")
			deleteLeaseAfter(t, c)
			covered := func() (bool, string) { return c.instanceWebhookCovers(t, "webapps") }
			// In a cluster both replicas register the same Service; here
			// both register the leader's address.
			url := "https://" + webhookAddr(t)
			leader := startReplicaWith(cfg, agent.WebhookOptions{Addr: webhookAddr(t), URL: url, CertValidity: certValidity, CertCheck: certCheck})
			defer leader.stop(t)
			c.applyUnvalidated(t, example(t, "webapp", "rgd.yaml"))
			c.waitRGDActive(t, "webapp")
			eventually(t, 30*time.Second, "the leader to register the webapps kind", covered)

			standbyAddr := freeAddr(t)
			standby := startReplicaWith(cfg, agent.WebhookOptions{Addr: standbyAddr, URL: url, CertValidity: certValidity, CertCheck: certCheck})
			defer standby.stop(t)
			// The standby registers as soon as its server listens.
			eventually(t, 30*time.Second, "the standby's webhook server to listen", func() (bool, string) {
				conn, err := net.Dial("tcp", standbyAddr)
				if err != nil {
					return false, err.Error()
				}
				conn.Close()
				return true, ""
			})
			never(t, 3*time.Second, "the standby's registration took the webapps kind off the instance webhook", func() bool {
				ok, _ := covered()
				return !ok
			})
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "WebApp", "standby")
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// Replicas read the certificate Secret at their own checks, and the leader
// writes back the CA bundle it last read whenever it sees someone else
// change the webhook configurations. When another replica replaces the CA,
// what each replica serves must stay trusted by the bundle registered,
// whoever wrote it last: the API server checks it at every new connection
// (one it already has goes on without a new check, which would hide a
// mismatch here). The standby checks the Secret every second, the leader
// every three, through at least one replacement of the CA.
func TestCARolloverAcrossReplicas(t *testing.T) {
	f := features.New("a CA replaced while two replicas serve").
		Assess("what both replicas serve stays trusted while the CA is replaced", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			stopAgentNow(t)
			c := newClients(t, cfg)
			namespace(t, c, "kro-system")
			deleteLeaseAfter(t, c)
			// A fresh Secret, issued with the short lives below; and a
			// fresh one again for the agents after this test.
			freshSecret := func() { c.delete(t, "v1", "Secret", "kro-system", "kro-agent-webhook-certs") }
			freshSecret()
			defer startAgent(t, cfg)
			defer freshSecret()
			opts := func(addr string, check time.Duration) agent.WebhookOptions {
				return agent.WebhookOptions{Addr: addr, URL: "https://" + webhookAddr(t), CertValidity: 12 * time.Second, CAValidity: 36 * time.Second, CertCheck: check}
			}
			leaderAddr, standbyAddr := freeAddr(t), webhookAddr(t)
			leader := startReplicaWith(cfg, opts(leaderAddr, 3*time.Second))
			defer leader.stop(t)
			eventually(t, 60*time.Second, "the first replica to lead", func() (bool, string) {
				return leaseHolder(t, c) != "", "no holder"
			})
			standby := startReplicaWith(cfg, opts(standbyAddr, time.Second))
			defer standby.stop(t)

			var rgd map[string]any
			if err := yaml.Unmarshal([]byte(brokenRGD), &rgd); err != nil {
				t.Fatal(err)
			}
			rgds := c.resource(t, "kro.run/v1alpha1", "ResourceGraphDefinition")
			review := func() error {
				_, err := rgds.Create(ctx, toUnstructured(rgd), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err == nil || !strings.Contains(err.Error(), "denied the request") {
					return fmt.Errorf("want the webhook's denial, got %v", err)
				}
				return nil
			}
			eventually(t, 30*time.Second, "the standby to answer RGD reviews", func() (bool, string) {
				err := review()
				return err == nil, fmt.Sprint(err)
			})
			vwcs := c.resource(t, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
			bundleOf := func(vwc *unstructured.Unstructured) []*x509.Certificate {
				hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
				bundle, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
				data, err := base64.StdEncoding.DecodeString(bundle)
				if err != nil {
					t.Error(err)
				}
				var cas []*x509.Certificate
				for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
					ca, err := x509.ParseCertificate(block.Bytes)
					if err != nil {
						t.Error(err)
					}
					cas = append(cas, ca)
				}
				return cas
			}
			// Every bundle registered, in order: a CA leaves the bundle
			// only once it expired; one leaving earlier is a replica
			// writing back an older bundle, which distrusts a newer CA in
			// use or about to be.
			watch, err := vwcs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kro-agent"})
			if err != nil {
				t.Fatal(err)
			}
			defer watch.Stop()
			var lost atomic.Value
			go func() {
				var seen []*x509.Certificate
				for ev := range watch.ResultChan() {
					vwc, ok := ev.Object.(*unstructured.Unstructured)
					if !ok || ev.Type == "DELETED" {
						continue
					}
					bundle := bundleOf(vwc)
					for _, ca := range seen {
						if time.Now().Before(ca.NotAfter) && !slices.ContainsFunc(bundle, ca.Equal) {
							lost.CompareAndSwap(nil, fmt.Sprintf("the registered CA bundle lost a CA valid until %s: an older bundle was written back", ca.NotAfter.Format(time.RFC3339)))
						}
					}
					for _, ca := range bundle {
						if !slices.ContainsFunc(seen, ca.Equal) {
							seen = append(seen, ca)
						}
					}
				}
			}()
			// Which CAs signed what the standby served.
			signers := map[string]bool{}
			for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if msg := lost.Load(); msg != nil {
					t.Fatal(msg)
				}
				vwc, err := vwcs.Get(ctx, "kro-agent", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				roots := x509.NewCertPool()
				for _, ca := range bundleOf(vwc) {
					roots.AddCert(ca)
				}
				for name, addr := range map[string]string{"leader": leaderAddr, "standby": standbyAddr} {
					if _, err := servedCert(t, addr).Verify(x509.VerifyOptions{Roots: roots}); err != nil {
						t.Fatalf("the certificate the %s serves is not trusted by the registered CA bundle: %v", name, err)
					}
				}
				if err := review(); err != nil {
					t.Fatalf("an RGD review while the CA is replaced: %v", err)
				}
				signers[fmt.Sprintf("%x", servedCert(t, standbyAddr).AuthorityKeyId)] = true
			}
			if msg := lost.Load(); msg != nil {
				t.Fatal(msg)
			}
			if len(signers) < 2 {
				t.Errorf("the standby served certificates of %d CAs in 40 s; the test wants the CA replaced", len(signers))
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
