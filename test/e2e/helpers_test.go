//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zapcore"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/webhook"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

const testManager = "e2e-test"

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// running is the in-process agent, if started.
var running struct {
	sync.Mutex
	cancel context.CancelFunc
	done   chan error
}

// startAgent runs the agent in-process against the test cluster.
// agentIn starts the agent and makes namespace ns: how most features begin.
func agentIn(t testing.TB, cfg *envconf.Config, ns string) *clients {
	t.Helper()
	startAgent(t, cfg)
	c := newClients(t, cfg)
	namespace(t, c, ns)
	return c
}

func startAgent(t testing.TB, cfg *envconf.Config) {
	t.Helper()
	startAgentWith(t, cfg, func(*agent.Options) {})
}

// startAgentWith runs the agent with options changed by tune, unless one is
// running already.
func startAgentWith(t testing.TB, cfg *envconf.Config, tune func(*agent.Options)) {
	t.Helper()
	running.Lock()
	defer running.Unlock()
	if running.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Local mode, as in make demo: the API server calls the webhooks on
	// the loopback address through clientConfig.url.
	addr := webhookAddr(t)
	rc := rest.CopyConfig(cfg.Client().RESTConfig())
	rc.Wrap(countWrites)
	rc.Wrap(countWatches)
	rc.Wrap(countReads)
	rc.Wrap(raceCRDLookups)
	rc.Wrap(failRegistrationsWhenAsked)
	rc.Wrap(slowClusterChecksWhenAsked)
	rc.Wrap(holdWatchesWhenAsked)
	o := agent.Options{
		Config:  rc,
		Workers: 4,
		// As the binary runs by default (--kube-api-qps=-1): client-go's
		// default of 5 requests a second would make a restart with the
		// suite's many RGDs take half a minute to go through them.
		QPS:         -1,
		MetricsAddr: "0",
		ProbeAddr:   "0",
		Webhooks: agent.WebhookOptions{
			Addr:         addr,
			URL:          "https://" + addr,
			CertValidity: certValidity,
			CertCheck:    certCheck,
		},
		Log: zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())),
	}
	tune(&o)
	go func() { done <- agent.Run(ctx, o) }()
	// An agent that cannot start returns at once: fail here, not later in
	// a confusing timeout.
	select {
	case err := <-done:
		cancel()
		t.Fatalf("the agent exited on start: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	running.cancel, running.done = cancel, done
	// Tests start once admission is in place: the server listens and its
	// validating configuration is registered.
	vwc := newClients(t, cfg).resource(t, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return false, nil
		}
		conn.Close()
		_, err = vwc.Get(ctx, "kro-agent", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the agent's webhooks did not come up: %v", err)
	}
}

// stopAgentNow stops the in-process agent and waits for it to return.
func stopAgentNow(t testing.TB) {
	t.Helper()
	running.Lock()
	defer running.Unlock()
	if running.cancel == nil {
		return
	}
	running.cancel()
	if err := <-running.done; err != nil {
		t.Errorf("agent returned: %v", err)
	}
	running.cancel, running.done = nil, nil
}

func stopAgent(ctx context.Context, _ *envconf.Config) (context.Context, error) {
	running.Lock()
	defer running.Unlock()
	if running.cancel != nil {
		running.cancel()
		<-running.done
		running.cancel = nil
	}
	return ctx, nil
}

func zapLevel() zapcore.Level {
	if os.Getenv("KRO_AGENT_E2E_VERBOSE") != "" {
		return -1
	}
	return 2 // errors only
}

// clients bundles what the tests use to look at the cluster.
type clients struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newClients(t testing.TB, cfg *envconf.Config) *clients {
	t.Helper()
	// The tests' own client is not the subject: no client-side throttling.
	rc := rest.CopyConfig(cfg.Client().RESTConfig())
	rc.QPS, rc.Burst = 1000, 2000
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg.Client().RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &clients{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

func (c *clients) resource(t testing.TB, apiVersion, kind string) dynamic.NamespaceableResourceInterface {
	t.Helper()
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatal(err)
	}
	var m *meta.RESTMapping
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		m, err = c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
		if err != nil {
			c.mapper.(*restmapper.DeferredDiscoveryRESTMapper).Reset()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("no resource for %s %s: %v", apiVersion, kind, err)
	}
	return c.dyn.Resource(m.Resource)
}

// apply server-side applies a YAML document (one object) as the test user.
func (c *clients) apply(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	out, err := c.tryApply(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *clients) tryApply(t testing.TB, doc string) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return c.applyObject(t, u)
}

// applyObject server-side applies an object as the test user.
func (c *clients) applyObject(t testing.TB, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	out, err := c.resource(t, u.GetAPIVersion(), u.GetKind()).Namespace(u.GetNamespace()).
		Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: testManager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out, nil
}

func (c *clients) get(t testing.TB, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	return c.resource(t, apiVersion, kind).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func (c *clients) mustGet(t testing.TB, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.get(t, apiVersion, kind, ns, name)
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

// warningsSeen collects the warnings the API server sends a client.
type warningsSeen struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningsSeen) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningsSeen) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// warnedClient is a dynamic client of the test cluster that collects the
// warnings the API server sends it, as kubectl prints them.
func warnedClient(t testing.TB, cfg *envconf.Config) (dynamic.Interface, *warningsSeen) {
	t.Helper()
	rc := rest.CopyConfig(cfg.Client().RESTConfig())
	warnings := &warningsSeen{}
	rc.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return dyn, warnings
}

// patch merge-patches an object, and fails the test if it cannot.
func (c *clients) patch(t testing.TB, apiVersion, kind, ns, name, patch string) {
	t.Helper()
	if _, err := c.resource(t, apiVersion, kind).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s %s/%s with %s: %v", kind, ns, name, patch, err)
	}
}

func (c *clients) delete(t testing.TB, apiVersion, kind, ns, name string) {
	t.Helper()
	err := c.resource(t, apiVersion, kind).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete %s %s: %v", kind, name, err)
	}
}

// deleteAll deletes objects of one kind and waits until they are gone, the
// agent's finalizer taken off once their resources are deleted.
func (c *clients) deleteAll(t testing.TB, apiVersion, kind, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		c.delete(t, apiVersion, kind, ns, name)
	}
	eventually(t, 30*time.Second, fmt.Sprintf("%s %s to be gone", kind, strings.Join(names, ", ")), func() (bool, string) {
		for _, name := range names {
			u, err := c.get(t, apiVersion, kind, ns, name)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return false, fmt.Sprintf("%s: %v", name, err)
			}
			return false, name + " " + stillThere(u)
		}
		return true, ""
	})
}

// deleteCRD deletes a CRD and waits until it is gone. The API server
// deletes a CRD's objects first, listing them from its watch cache, which
// refuses lists (429, "storage is (re)initializing") until it has filled;
// its finalizer retries with a backoff that doubles each time, so a CRD
// deleted while that cache fills (made moments before, on a loaded
// machine) can take minutes to go. So its objects are first listed until
// the cache answers, as the finalizer's list then will.
func (c *clients) deleteCRD(t testing.TB, name string) {
	t.Helper()
	crd := c.mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		v, _ := v.(map[string]any)
		if served, _ := v["served"].(bool); !served {
			continue
		}
		version, _ := v["name"].(string)
		objects := c.dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural})
		eventually(t, 60*time.Second, "the objects of "+name+" to list", func() (bool, string) {
			_, err := objects.List(context.Background(), metav1.ListOptions{})
			return err == nil, fmt.Sprint(err)
		})
		break
	}
	c.deleteAll(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
}

// stillThere says what keeps an object from being deleted: whether its
// deletion began, the finalizers left, and its conditions (a CRD's
// Terminating one says how far the API server got with its objects).
func stillThere(u *unstructured.Unstructured) string {
	deleting := "not being deleted"
	if ts := u.GetDeletionTimestamp(); ts != nil {
		deleting = "deleting since " + ts.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("is still there, %s, finalizers %v, conditions: %s", deleting, u.GetFinalizers(), conditionSummary(u))
}

// holdFinalizer is the finalizer tests put on an object to keep it
// terminating, once deleted, until they release it.
const holdFinalizer = "e2e.kro.run/hold"

// hold puts holdFinalizer on an object, and returns it as patched.
func (c *clients) hold(t testing.TB, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	return c.setFinalizers(t, apiVersion, kind, ns, name, `["`+holdFinalizer+`"]`)
}

// grant gives user the rules (RBAC policy rules, as a YAML flow sequence's
// items) cluster-wide, in a ClusterRole and its binding named e2e-USER,
// both deleted when the test ends.
func (c *clients) grant(t testing.TB, user, rules string) {
	t.Helper()
	name := "e2e-" + user
	c.apply(t, "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: "+name+"}, rules: ["+rules+"]}")
	c.apply(t, "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: "+name+"}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "+name+"}, subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "+user+"}]}")
	t.Cleanup(func() {
		c.delete(t, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", name)
		c.delete(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "", name)
	})
}

// release takes every finalizer off an object, letting a terminating one go.
func (c *clients) release(t testing.TB, apiVersion, kind, ns, name string) {
	t.Helper()
	c.setFinalizers(t, apiVersion, kind, ns, name, "null")
}

func (c *clients) setFinalizers(t testing.TB, apiVersion, kind, ns, name, finalizers string) *unstructured.Unstructured {
	t.Helper()
	patch := []byte(`{"metadata":{"finalizers":` + finalizers + `}}`)
	u, err := c.resource(t, apiVersion, kind).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("setting the finalizers of %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, why := cond()
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
	}
}

// never checks that cond stays false for the whole duration.
func never(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			t.Fatalf("%s happened", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitState waits until the instance is in state at its current
// generation (its Ready condition observed it): a state read before the
// agent got to the latest spec, or to the deletion, is the previous
// generation's, and a test that goes on from it races the agent.
func (c *clients) waitState(t testing.TB, apiVersion, kind, ns, name string, state v1alpha1.InstanceState) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	eventually(t, 60*time.Second, fmt.Sprintf("%s %s to be %s at its current generation", kind, name, state), func() (bool, string) {
		var err error
		u, err = c.get(t, apiVersion, kind, ns, name)
		if err != nil {
			return false, err.Error()
		}
		got, _, _ := unstructured.NestedString(u.Object, "status", "state")
		ready := condition(u, v1alpha1.ConditionReady)
		current := ready != nil && ready.ObservedGeneration == u.GetGeneration()
		return got == string(state) && current, fmt.Sprintf("state %q at generation %d, conditions %s", got, u.GetGeneration(), conditionSummary(u))
	})
	return u
}

// condition returns an instance's condition of type t.
func condition(u *unstructured.Unstructured, t string) *metav1.Condition {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == t {
			out := &metav1.Condition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
				return &metav1.Condition{Type: t, Message: "does not decode: " + err.Error()}
			}
			return out
		}
	}
	return nil
}

func conditionSummary(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v at generation %v (%v: %v)", m["type"], m["status"], m["observedGeneration"], m["reason"], m["message"]))
	}
	return strings.Join(parts, "; ")
}

// rgdSummary says which generation of an RGD its status describes, and
// its conditions, for the message of a test waiting on what it serves.
func rgdSummary(t testing.TB, c *clients, name string) string {
	rgd, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", name)
	if err != nil {
		return fmt.Sprintf("RGD %s: %v", name, err)
	}
	state, _, _ := unstructured.NestedString(rgd.Object, "status", "state")
	return fmt.Sprintf("RGD %s at generation %d, state %q: %s", name, rgd.GetGeneration(), state, conditionSummary(rgd))
}

// waitRGDActive waits until an RGD is Active and its kind is served.
func (c *clients) waitRGDActive(t testing.TB, name string) {
	t.Helper()
	eventually(t, 60*time.Second, "RGD "+name+" to be Active", func() (bool, string) {
		u, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", name)
		if err != nil {
			return false, err.Error()
		}
		// Active for the generation applied: an update the agent refuses
		// leaves the state of the one before until it has looked.
		// status.observedGeneration says so to kstatus (Flux) as well.
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		ready := condition(u, v1alpha1.ConditionReady)
		current := ready != nil && ready.ObservedGeneration == u.GetGeneration() && observed == u.GetGeneration()
		return state == string(v1alpha1.StateActive) && current, fmt.Sprintf("%s; generation %d, status.observedGeneration %d", conditionSummary(u), u.GetGeneration(), observed)
	})
}

// waitInstanceWebhook waits until the API server calls the agent's mutating
// webhook for a kind: a server-side dry-run create of an instance comes back
// with the agent's finalizer. The agent registers a new kind before its RGD
// turns Active, but the API server reads webhook configurations from its own
// informer, so an instance created the moment after can still miss the
// webhook (and cost the agent one metadata write).
func (c *clients) waitInstanceWebhook(t testing.TB, apiVersion, kind, ns string) {
	t.Helper()
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion(apiVersion)
	probe.SetKind(kind)
	probe.SetName("webhook-probe")
	ri := c.resource(t, apiVersion, kind).Namespace(ns)
	eventually(t, 30*time.Second, "the mutating webhook to admit "+kind, func() (bool, string) {
		out, err := ri.Create(context.Background(), probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(out.GetFinalizers(), v1alpha1.Finalizer), fmt.Sprintf("finalizers %v", out.GetFinalizers())
	})
}

// waitTakeoverGuard waits until the API server enforces the no-takeover
// guard policy for the caller, who must have the agent's identity (as in a
// workload cluster reached with the agent's own kubeconfig): a server-side
// dry-run that puts an instance's labels on an unlabelled ConfigMap is
// denied.
func (c *clients) waitTakeoverGuard(t testing.TB, ns string) {
	t.Helper()
	c.waitGuardDenies(t, ns, "no-takeover", nil,
		map[string]string{v1alpha1.LabelOwned: "true", v1alpha1.LabelInstanceID: "probe"}, "was not created by kro-agent")
}

// waitLabelsGuard waits until the API server enforces the ownership-label
// guard policy for the caller, who must not have the agent's identity: a
// server-side dry-run that changes a kro.run/ label on a ConfigMap the
// agent would own is denied.
func (c *clients) waitLabelsGuard(t testing.TB, ns string) {
	t.Helper()
	c.waitGuardDenies(t, ns, "ownership-label", map[string]string{v1alpha1.LabelOwned: "true"},
		map[string]string{v1alpha1.LabelNodeID: "probe"}, "only kro-agent may change or remove it")
}

// waitGuardDenies waits until a server-side dry-run patch of the labels
// patch onto a probe ConfigMap made with the labels has, is denied with a
// message holding denial. A policy the agent has just written exists at
// once, but the API server reloads policies from its informer about once
// a second, so until then the guard still holds as it was.
func (c *clients) waitGuardDenies(t testing.TB, ns, guard string, labels, patch map[string]string, denial string) {
	t.Helper()
	cms := c.resource(t, "v1", "ConfigMap").Namespace(ns)
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion("v1")
	probe.SetKind("ConfigMap")
	probe.SetName("guard-probe")
	probe.SetNamespace(ns)
	probe.SetLabels(labels)
	if _, err := c.applyObject(t, probe); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cms.Delete(context.Background(), probe.GetName(), metav1.DeleteOptions{}) }()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": patch}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the "+guard+" guard to deny", func() (bool, string) {
		_, err := cms.Patch(context.Background(), probe.GetName(), types.MergePatchType, body, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), denial), fmt.Sprintf("dry-run label patch: %v", err)
	})
}

// instanceWebhookCovers reports whether the agent's mutating webhook
// configuration lists the resource (plural) among its instance kinds, and
// what it lists.
func (c *clients) instanceWebhookCovers(t testing.TB, resource string) (bool, string) {
	got, err := c.resource(t, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration").Get(context.Background(), webhook.ConfigName, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	b, _ := json.Marshal(got.Object["webhooks"])
	return strings.Contains(string(b), strconv.Quote(resource)), string(b)
}

// applyYAML applies every document of a YAML stream (setup helper).
func applyYAML(ctx context.Context, cfg *envconf.Config, stream string) error {
	dyn, err := dynamic.NewForConfig(cfg.Client().RESTConfig())
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(stream, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() != "CustomResourceDefinition" {
			return errors.New("applyYAML only installs CRDs")
		}
		gvr := extv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
		if _, err := dyn.Resource(gvr).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: testManager, Force: true}); err != nil {
			return err
		}
	}
	return localcluster.WaitEstablished(ctx, cfg.Client().RESTConfig(), "resourcegraphdefinitions.kro.run")
}

func toUnstructured(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// The webhook certificate settings of the in-process agent; the rotation
// test shortens them.
var (
	certValidity = 24 * time.Hour
	certCheck    = time.Hour
)

// webhookAddr picks a free loopback port for the agent's webhooks, once.
var webhookAddr = func() func(testing.TB) string {
	var once sync.Once
	var addr string
	return func(t testing.TB) string {
		once.Do(func() { addr = freeAddr(t) })
		return addr
	}
}()

// freeAddr picks a free loopback port.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// applyUnvalidated stores an object the RGD webhook would deny, as one that
// got in before the webhook was registered: the validating configuration
// is removed first. A running agent registers it again whenever its served
// kinds change, which can land between the delete and the apply, and the
// API server drops a deleted configuration only once its own informer has
// seen the delete (until then it calls the webhook, or fails to reach a
// stopped agent's), so a webhook error is retried with the configuration
// removed once more.
func (c *clients) applyUnvalidated(t testing.TB, doc string) {
	t.Helper()
	vwc := c.resource(t, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
	eventually(t, 30*time.Second, "the API server to store the object without calling the RGD webhook", func() (bool, string) {
		if err := vwc.Delete(context.Background(), "kro-agent", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		_, err := c.tryApply(t, doc)
		if err != nil && !strings.Contains(err.Error(), "webhook") {
			t.Fatal(err)
		}
		return err == nil, fmt.Sprint(err)
	})
}

// waitAgentWebhooks waits for the running agent to have put its webhook
// configuration back after applyUnvalidated removed it: the agent restores
// it as soon as it sees it gone, and what a test does next may need it.
func (c *clients) waitAgentWebhooks(t testing.TB) {
	t.Helper()
	vwc := c.resource(t, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
	eventually(t, 30*time.Second, "the agent to register its webhooks again", func() (bool, string) {
		_, err := vwc.Get(context.Background(), "kro-agent", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// agentWrites counts the write requests the in-process agent sends, per
// namespace of the object written ("" for cluster-scoped objects; events
// left out: they are not writes to objects). The agent's own metrics are
// process-wide; this lets a test measure its own instances only.
var agentWritesByNamespace = struct {
	sync.Mutex
	requests map[string][]string
}{requests: map[string][]string{}}

var namespaceInPath = regexp.MustCompile(`/namespaces/([^/]+)/`)

func countWrites(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/events") {
			ns := ""
			if m := namespaceInPath.FindStringSubmatch(r.URL.Path); m != nil {
				ns = m[1]
			}
			agentWritesByNamespace.Lock()
			agentWritesByNamespace.requests[ns] = append(agentWritesByNamespace.requests[ns], r.Method+" "+r.URL.Path)
			agentWritesByNamespace.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func writesIn(ns string) int { return len(writeRequestsIn(ns)) }

// writeRequestsIn lists the agent's writes to objects in ns, as method and
// path, for a test to show what went over its budget.
func writeRequestsIn(ns string) []string {
	agentWritesByNamespace.Lock()
	defer agentWritesByNamespace.Unlock()
	return slices.Clone(agentWritesByNamespace.requests[ns])
}

// agentWatches counts the watches the in-process agent has open, by URL
// path: what a test sees of which kinds it watches.
var agentWatches = struct {
	sync.Mutex
	open map[string]int
}{open: map[string]int{}}

// agentReads counts the in-process agent's reads of one object, by URL
// path (lists and watches left out).
var agentReads = struct {
	sync.Mutex
	byPath map[string]int
}{byPath: map[string]int{}}

func countReads(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "" {
			agentReads.Lock()
			agentReads.byPath[r.URL.Path]++
			agentReads.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func readsOf(path string) int {
	agentReads.Lock()
	defer agentReads.Unlock()
	return agentReads.byPath[path]
}

func countWatches(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || resp.StatusCode != http.StatusOK || r.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		agentWatches.Lock()
		agentWatches.open[r.URL.Path]++
		agentWatches.Unlock()
		resp.Body = &watchBody{ReadCloser: resp.Body, path: r.URL.Path}
		return resp, nil
	})
}

// watchBody is a watch's response, counted open until it is closed.
type watchBody struct {
	io.ReadCloser
	path   string
	closed sync.Once
}

func (b *watchBody) Close() error {
	b.closed.Do(func() {
		agentWatches.Lock()
		agentWatches.open[b.path]--
		agentWatches.Unlock()
	})
	return b.ReadCloser.Close()
}

// watching tells how many watches of the resource at path the agent has open.
func watching(path string) int {
	agentWatches.Lock()
	defer agentWatches.Unlock()
	return agentWatches.open[path]
}

// clientRequests is client-go's count, in the process-wide registry the
// in-process agent counts in, of its requests to host that were answered
// with code.
func clientRequests(t testing.TB, host, code string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["host"] == host && labels["code"] == code {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// reconcileErrors is controller-runtime's count of the reconciles of one
// controller that returned an error, from the process-wide registry the
// in-process agent counts in. The controller starts its series at zero, so
// a missing one is a test that measures nothing.
func reconcileErrors(t testing.TB, controller string) float64 {
	t.Helper()
	return counter(t, "controller_runtime_reconcile_errors_total", "controller", controller)
}

// instanceReconcileErrors counts the in-process agent's instance
// reconciles that returned an error.
func instanceReconcileErrors(t testing.TB) float64 {
	t.Helper()
	return counter(t, "kro_agent_instance_reconcile_total", "result", "error")
}

// writeErrors counts the in-process agent's writes of one kind
// (kro_agent_writes_total's write label: delete, finalizer, ...) that the
// API server refused, or found their object gone. The series begins with
// the first such write; one that kind has succeeded tells that the label
// is right, and none yet means none refused.
func writeErrors(t testing.TB, write string) float64 {
	t.Helper()
	if _, ok := series(t, "kro_agent_writes_total", map[string]string{"write": write, "result": "success"}); !ok {
		t.Fatalf("kro_agent_writes_total counts no %s write", write)
	}
	m, ok := series(t, "kro_agent_writes_total", map[string]string{"write": write, "result": "error"})
	if !ok {
		return 0
	}
	return m.GetCounter().GetValue()
}

// counter is the value of a counter's series with the label given, from
// the process-wide registry the in-process agent counts in.
func counter(t testing.TB, name, label, value string) float64 {
	t.Helper()
	m, ok := series(t, name, map[string]string{label: value})
	if !ok {
		t.Fatalf("%s has no series with %s=%q", name, label, value)
	}
	return m.GetCounter().GetValue()
}

// gauge is the value of a gauge's series with the labels given; false
// when there is no such series.
func gauge(t testing.TB, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	m, ok := series(t, name, labels)
	return m.GetGauge().GetValue(), ok
}

// series finds the series of metric name whose labels include those
// given, in the process-wide registry the in-process agent counts in.
func series(t testing.TB, name string, labels map[string]string) (*dto.Metric, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(labels) {
				return m, true
			}
		}
	}
	return nil, false
}

// crdRace, while set, creates a CRD in the instant after the in-process
// agent looked for it and found none, before the agent has the answer: the
// race between its check of a CRD and its first write of it.
var crdRace atomic.Pointer[lookupRace]

type lookupRace struct {
	crd    string
	create func() error
	done   chan error
}

func raceCRDLookups(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		race := crdRace.Load()
		if err == nil && race != nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusNotFound &&
			r.URL.Path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+race.crd && crdRace.CompareAndSwap(race, nil) {
			race.done <- race.create()
		}
		return resp, err
	})
}

// failRegistrations, while set, makes the in-process agent's writes of
// webhook configurations fail as if the API server were unavailable.
var failRegistrations atomic.Bool

// slowClusterChecks, while set, makes the in-process agent's reads of
// kubeconfig Secrets (namespace kro-clusters) take two seconds, as the
// first check of a workload cluster can after a start: long enough for
// every instance to be reconciled before any cluster is checked.
var slowClusterChecks atomic.Bool

func slowClusterChecksWhenAsked(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if slowClusterChecks.Load() && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/kro-clusters/secrets/") {
			time.Sleep(2 * time.Second)
		}
		return rt.RoundTrip(r)
	})
}

// heldWatches, while release is set, holds back what the in-process
// agent's watches of one resource (URL paths ending in resource, such as
// "/configmaps") deliver, until release is closed: its informers go on
// holding the objects as they were, as a loaded agent's do for a moment.
var heldWatches struct {
	sync.Mutex
	resource string
	release  chan struct{}
}

// holdWatches holds back the agent's watch events of resource until the
// function it returns is called. Calling it again does nothing, so a test
// that releases the hold halfway also defers it: a failure before would
// leave every later test's watches held.
func holdWatches(resource string) (release func()) {
	heldWatches.Lock()
	defer heldWatches.Unlock()
	ch := make(chan struct{})
	heldWatches.resource, heldWatches.release = resource, ch
	return sync.OnceFunc(func() {
		heldWatches.Lock()
		defer heldWatches.Unlock()
		heldWatches.release = nil
		close(ch)
	})
}

func holdWatchesWhenAsked(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && r.URL.Query().Get("watch") != "" {
			resp.Body = &heldBody{ReadCloser: resp.Body, path: r.URL.Path}
		}
		return resp, err
	})
}

// heldBody is a watch's response body, held back by heldWatches: what a
// read brings is handed on only once no hold applies, so an event that
// comes while held waits even if its read was under way before.
type heldBody struct {
	io.ReadCloser
	path string
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for {
		heldWatches.Lock()
		release, resource := heldWatches.release, heldWatches.resource
		heldWatches.Unlock()
		if release == nil || !strings.HasSuffix(b.path, resource) {
			return n, err
		}
		<-release
	}
}

func failRegistrationsWhenAsked(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if failRegistrations.Load() && r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/apis/admissionregistration.k8s.io/") {
			return nil, errors.New("injected by the test: the API server is unavailable")
		}
		return rt.RoundTrip(r)
	})
}

// sayAll reports each of wants that out, what command printed, does not
// say.
func sayAll(t *testing.T, command, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", command, want, out)
		}
	}
}

// shippedDocument is the object of kind and name in the file at path
// under manifests/, as YAML: a piece of what kro-agent ships, applied alone.
func shippedDocument(t testing.TB, path, kind, name string) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "manifests", path))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err == nil && head.Kind == kind && head.Metadata.Name == name {
			return doc
		}
	}
	t.Fatalf("manifests/%s holds no %s %s", path, kind, name)
	return ""
}
