//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/plugin"
	"github.com/kro-agent/kro-agent/pkg/version"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// kro runs `kubectl kro ARGS` in-process against the test cluster and
// returns its output; requests, when set, counts the API requests it made.
func kro(t testing.TB, cfg *envconf.Config, requests *atomic.Int64, args ...string) (string, error) {
	t.Helper()
	flags := kroFlags(cfg)
	if requests != nil {
		flags.WrapConfigFn = countRequests(requests)
	}
	var out bytes.Buffer
	err := runKro(context.Background(), flags, &out, args...)
	return out.String(), err
}

// treeJSON is what kubectl kro tree -o json draws of an instance.
func treeJSON(t testing.TB, cfg *envconf.Config, kind, name, namespace string) plugin.Tree {
	t.Helper()
	out, err := kro(t, cfg, nil, "tree", kind, name, "-n", namespace, "-o", "json")
	if err != nil {
		t.Fatalf("tree: %v\n%s", err, out)
	}
	var tree plugin.Tree
	if err := json.Unmarshal([]byte(out), &tree); err != nil {
		t.Fatal(err)
	}
	return tree
}

// countRequests makes a client count its requests to the API server in n.
func countRequests(n *atomic.Int64) func(*rest.Config) *rest.Config {
	return countRequestsWhere(n, func(*http.Request) bool { return true })
}

// countRequestsWhere makes a client count in n its requests to the API
// server that counted says to count.
func countRequestsWhere(n *atomic.Int64, counted func(*http.Request) bool) func(*rest.Config) *rest.Config {
	return func(c *rest.Config) *rest.Config {
		c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if counted(r) {
					n.Add(1)
				}
				return rt.RoundTrip(r)
			})
		})
		return c
	}
}

// kroFlags are kubectl kro's connection flags for the test cluster.
func kroFlags(cfg *envconf.Config) *genericclioptions.ConfigFlags {
	flags := genericclioptions.NewConfigFlags(true)
	kubeconfig := cfg.KubeconfigFile()
	flags.KubeConfig = &kubeconfig
	// Each command's flag set writes its defaults through these pointers:
	// commands running at once (status --watch in the background) must
	// not share one variable.
	cacheDir := kubeCacheDir
	flags.CacheDir = &cacheDir
	return flags
}

// runKro runs kubectl kro in-process until it returns or ctx ends.
func runKro(ctx context.Context, flags *genericclioptions.ConfigFlags, out io.Writer, args ...string) error {
	return runKroStreams(ctx, flags, out, out, args...)
}

// kroStdout runs kubectl kro as kro does, and returns only what it prints
// on its standard output, as a pipeline reading it gets it.
func kroStdout(t testing.TB, cfg *envconf.Config, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runKroStreams(context.Background(), kroFlags(cfg), &out, io.Discard, args...)
	return out.String(), err
}

func runKroStreams(ctx context.Context, flags *genericclioptions.ConfigFlags, out, errOut io.Writer, args ...string) error {
	cmd := plugin.NewRootCommandWithFlags(flags, genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	cmd.SetArgs(append(args, "--kubeconfig", *flags.KubeConfig))
	return cmd.ExecuteContext(ctx)
}

// lockedBuffer is written by a command running in the background and read
// by the test meanwhile.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// backgroundKro is kubectl kro running in the background (status --watch)
// until stopped, its output and requests counted.
type backgroundKro struct {
	what     string
	out      lockedBuffer
	requests atomic.Int64
	done     chan error
	cancel   context.CancelFunc
}

func startKro(ctx context.Context, cfg *envconf.Config, args ...string) *backgroundKro {
	b := &backgroundKro{what: "kubectl kro " + strings.Join(args, " "), done: make(chan error, 1)}
	flags := kroFlags(cfg)
	flags.WrapConfigFn = countRequests(&b.requests)
	ctx, b.cancel = context.WithCancel(ctx)
	go func() { b.done <- runKro(ctx, flags, &b.out, args...) }()
	return b
}

// lastFrame is what the table shows since it was last drawn. Its output
// is not a terminal, so each drawing follows the one before after a blank
// line, and none has escape codes that would redraw it in place.
func (b *backgroundKro) lastFrame() string {
	s := b.out.String()
	if strings.Contains(s, "\x1b") {
		return "escape codes written to a pipe: " + strconv.Quote(s)
	}
	if i := strings.LastIndex(s, "\n\n"); i >= 0 {
		return s[i+2:]
	}
	return s
}

// quiet waits for 1.5 s in which it sends no request.
func (b *backgroundKro) quiet(t testing.TB) {
	t.Helper()
	eventually(t, 10*time.Second, "1.5 s in which "+b.what+" sends no request", func() (bool, string) {
		before := b.requests.Load()
		time.Sleep(1500 * time.Millisecond)
		n := b.requests.Load() - before
		return n == 0, fmt.Sprintf("%d requests in 1.5 s", n)
	})
}

// stop ends it, which must end it without an error.
func (b *backgroundKro) stop(t testing.TB) {
	t.Helper()
	b.cancel()
	select {
	case err := <-b.done:
		if err != nil {
			t.Errorf("%s ended with %v\n%s", b.what, err, b.out.String())
		}
	case <-time.After(5 * time.Second):
		t.Errorf("%s did not stop when its context ended", b.what)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var ages = regexp.MustCompile(`(?m)\s+(\d+[smhd])+\s*$|\s+-\s*$`)

// maskAges replaces the AGE column, the last on each line.
func maskAges(s string) string {
	return ages.ReplaceAllStringFunc(s, func(m string) string {
		return strings.Repeat(" ", len(m)-len(strings.TrimLeft(m, " \t"))) + "<age>"
	})
}

func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -tags e2e ./test/e2e -run %s -update writes it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

const blockedRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: blocked}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Blocked
    spec: {name: string}
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.spec.name}"}
      spec:
        replicas: 1
        selector: {matchLabels: {app: "${schema.spec.name}"}}
        template:
          metadata: {labels: {app: "${schema.spec.name}"}}
          spec:
            nodeSelector: {kro.run/e2e-no-such-node: "true"}
            containers: [{name: app, image: nginx}]
    readyWhen: ["${deployment.status.?availableReplicas.orValue(0) == deployment.spec.replicas}"]
  - id: service
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: "${schema.spec.name}"}
      spec: {selector: "${deployment.spec.selector.matchLabels}", ports: [{port: 80}]}
`

const pendingRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: pending}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Pending
    spec: {name: string}
  resources:
  - id: svc
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: "${schema.spec.name}"}
      spec: {ports: [{port: 80}]}
  - id: endpoint
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-endpoint"}
      data: {ip: "${svc.spec.clusterIP}"}
`

// unsetRGD's template reads spec.team, which has no default, and divides
// by spec.shares.
const unsetRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: teamconfig}
spec:
  schema:
    apiVersion: v1alpha1
    kind: TeamConfig
    spec: {name: string, team: string, shares: integer | default=4}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}
        labels: {team: "${schema.spec.team}"}
      data: {share: "${string(100 / schema.spec.shares)}"}
`

// firstOfRGD reads the first of the instance's names: an empty list leaves
// nothing to read until the instance has one.
const firstOfRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: firstof}
spec:
  schema:
    apiVersion: v1alpha1
    kind: FirstOf
    spec: {names: "[]string"}
  resources:
  - id: first
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-first"}
      data: {name: "${schema.spec.names[0]}"}
`

// jobRGD makes a Job whose template the instance's values decide, and a
// claim whose storage class they decide: a change of them is one the API
// server refuses twice, the template and the claim's spec being immutable.
const jobRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: batch}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Batch
    spec: {mode: string | default=full}
  resources:
  - id: job
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: "${schema.metadata.name}"}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: run, image: busybox, env: [{name: MODE, value: "${schema.spec.mode}"}]}
  - id: claim
    template:
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: "${schema.metadata.name}"}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: "${schema.spec.mode}"
        resources: {requests: {storage: 1Gi}}
`

// skipChainRGD's second ConfigMap depends on the first, which includeWhen
// leaves out unless spec.enabled: the second goes with it.
const skipChainRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: skipchain}
spec:
  schema: {apiVersion: v1alpha1, kind: SkipChain, spec: {enabled: "boolean | default=false"}}
  resources:
  - id: first
    includeWhen: ["${schema.spec.enabled}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-first"}}
  - id: second
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${first.metadata.name}-second"}}
`

// previewChangeRGD is changed by the test of dry-run of an RGD change.
const previewChangeRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: previewchange}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PreviewChange
    spec:
      extra: boolean | default=true
    status: {a: "${base.data.a}"}
  resources:
  - id: base
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-base"}, data: {a: "1"}}
  - id: extra
    includeWhen: ["${schema.spec.extra}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-extra"}}
`

// previewGivenRGD reads a ConfigMap by externalRef and copies it, with a
// required field of the instance.
const previewGivenRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: previewgiven}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PreviewGiven
    spec:
      size: integer | required=true maximum=3
  resources:
  - id: settings
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {name: given-settings}}
  - id: copy
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-copy"}, data: {tier: "${settings.data.tier}", size: "${string(schema.spec.size)}"}}
`

// singletonRGD renders a ConfigMap of a fixed name: a second instance in a
// namespace finds the first one's there.
const singletonRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: singleton}
spec:
  schema: {apiVersion: v1alpha1, kind: Singleton, spec: {}}
  resources:
  - id: settings
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: team-settings}}
`

// forkRGD has two resources depending on nothing, and a third depending
// on the first: the tree nests it under the first, above the second.
const forkRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: fork}
spec:
  schema: {apiVersion: v1alpha1, kind: Fork, spec: {}}
  resources:
  - id: left
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-left"}}
  - id: right
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.metadata.name}-right"}}
  - id: leaf
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${left.metadata.name}-leaf"}}
`

// claimRGD makes a StatefulSet whose Pod mounts a claim no volume can
// bind: the local cluster has no StorageClass.
const claimRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: claims}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Claims
    spec: {size: string | default=1Gi}
  resources:
  - id: db
    template:
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: "${schema.metadata.name}"}
      spec:
        serviceName: "${schema.metadata.name}"
        replicas: 1
        selector: {matchLabels: {db: "${schema.metadata.name}"}}
        template:
          metadata: {labels: {db: "${schema.metadata.name}"}}
          spec: {containers: [{name: db, image: postgres}]}
        volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: "${schema.spec.size}"}}}
    readyWhen: ["${db.status.?readyReplicas.orValue(0) == 1}"]
`

// previewNestedRGDs are two RGDs, the second making an instance of the
// first's kind and reading its status.
const previewNestedRGDs = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: previewinner}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PreviewInner
    spec: {size: integer | default=1 maximum=5}
    status: {config: "${config.metadata.name}"}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-inner"}
      data: {size: "${string(schema.spec.size)}"}
---
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: previewouter}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PreviewOuter
    spec: {size: integer | default=2}
  resources:
  - id: inner
    template:
      apiVersion: kro.run/v1alpha1
      kind: PreviewInner
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
  - id: settings
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-settings"}
      data: {inner: "${inner.status.config}"}`

func TestPlugin(t *testing.T) {
	const ns = "plugin"
	f := features.New("kubectl kro explains instances").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			for _, rgd := range []string{example(t, "webapp", "rgd.yaml"), example(t, "workers", "rgd.yaml"), blockedRGD} {
				c.apply(t, rgd)
			}
			for _, name := range []string{"webapp", "workers", "blocked"} {
				c.waitRGDActive(t, name)
			}
			c.apply(t, webapp(ns, "ready", ", replicas: 1"))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: pool, namespace: %s}, spec: {queues: [a, b]}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Blocked, metadata: {name: stuck, namespace: %s}, spec: {name: stuck}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "ready", v1alpha1.InstanceActive)
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "pool", v1alpha1.InstanceActive)
			return ctx
		}).
		Assess("tree of a ready instance", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			out, err := kro(t, cfg, nil, "tree", "webapp", "ready", "-n", ns)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, "tree-ready.golden", maskAges(out))
			dot, err := kro(t, cfg, nil, "tree", "webapp", "ready", "-n", ns, "-o", "dot")
			if err != nil || !strings.Contains(dot, `"config" -> "deployment"`) || !strings.Contains(dot, `"ingress" [label="ingress\nIngress", fillcolor="lightblue"]`) {
				t.Errorf("-o dot: %v\n%s", err, dot)
			}
			// -o name: for kubectl to take back, and to find each there.
			names, err := kro(t, cfg, nil, "tree", "webapp", "ready", "-n", ns, "-o", "name")
			if want := "webapp.kro.run/ready\nconfigmap/ready-config\ndeployment.apps/ready\nservice/ready\n"; err != nil || names != want {
				t.Errorf("-o name: %v\n got: %q\nwant: %q", err, names, want)
			}
			if out, err := kubectl(t, cfg, "", append([]string{"get", "-n", ns, "-o", "name"}, strings.Fields(names)...)...); err != nil || out != names {
				t.Errorf("kubectl get of tree -o name: %v\n%s", err, out)
			}
			// kubectl get's templates, over the -o json document.
			kinds, err := kro(t, cfg, nil, "tree", "webapp", "ready", "-n", ns, "-o", `jsonpath={range .resources[*]}{.nodeID}={.ready}{"\n"}{end}`)
			if want := "config=Ready\ndeployment=Ready\nservice=Ready\ningress=Skipped\n"; err != nil || kinds != want {
				t.Errorf("-o jsonpath: %v\n got: %q\nwant: %q", err, kinds, want)
			}
			if states, err := kro(t, cfg, nil, "status", "webapp", "-n", ns, "-o", `go-template={{range .}}{{if eq .name "ready"}}{{.state}}{{end}}{{end}}`); err != nil || states != "ACTIVE" {
				t.Errorf("status -o go-template: %v, %q", err, states)
			}
			// An object the instance manages carries its RGD's name too,
			// but is not an instance: the plugin says whose it is.
			for _, cmd := range [][]string{{"tree", "configmap", "ready-config"}, {"why-not-ready", "deployment/ready"}} {
				_, err := kro(t, cfg, nil, append(cmd, "-n", ns)...)
				if err == nil || !strings.Contains(err.Error(), "is not an instance: it is resource ") ||
					!strings.Contains(err.Error(), "of WebApp plugin/ready (kubectl kro tree webapp ready -n plugin shows it)") {
					t.Errorf("%s of a managed object: want an error saying whose it is, got %v", cmd[0], err)
				}
			}
			// KIND/NAME, as kubectl takes an object, works as well as KIND NAME.
			why, err := kro(t, cfg, nil, "why-not-ready", "webapp/ready", "-n", ns)
			if err != nil || !strings.Contains(why, "Ready: WebApp "+ns+"/ready is Ready") {
				t.Errorf("why-not-ready on a ready instance: %v\n%s", err, why)
			}
			return ctx
		}).
		Assess("tree of a collection", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			out, err := kro(t, cfg, nil, "tree", "workerpool", "pool", "-n", ns)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, "tree-collection.golden", maskAges(out))
			return ctx
		}).
		Assess("why-not-ready names the blocked Deployment, its readyWhen and availableReplicas = 0", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			var out string
			var err error
			eventually(t, 20*time.Second, "the diagnosis", func() (bool, string) {
				out, err = kro(t, cfg, nil, "why-not-ready", "blocked", "stuck", "-n", ns)
				// The scheduler marks the Pod unschedulable soon after.
				return strings.Contains(out, "availableReplicas") && strings.Contains(out, "Unschedulable"), out
			})
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("exit: %v, want not ready", err)
			}
			sayAll(t, "why-not-ready", out,
				"Root cause: resource deployment (Deployment stuck) is not ready",
				"readyWhen ${deployment.status.?availableReplicas.orValue(0) == deployment.spec.replicas} is false",
				"deployment.status.?availableReplicas.orValue(0) = 0",
				"health (kstatus): InProgress",
				// What keeps it so is in its Pod: no node matches its nodeSelector.
				"(1 of 1) is not ready: Pending, Unschedulable: ",
				"didn't match Pod's node affinity/selector",
				"What to do: no node can take its Pods",
			)
			tree, err := kro(t, cfg, nil, "tree", "blocked", "stuck", "-n", ns)
			if err != nil || !regexp.MustCompile(`service +Service/stuck +`+ns+` +Missing +- +not created yet: kro-agent waits for deployment to be ready`).MatchString(tree) {
				t.Errorf("the Service waiting on the Deployment should show as missing, and why: %v\n%s", err, tree)
			}
			return ctx
		}).
		Assess("an instance's author with roles in its namespace alone is shown what the instance says", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// RGDs are cluster-scoped: a role in a namespace cannot grant
			// reading them, and the graph is not known without one.
			const user = "namespace-author"
			c := newClients(t, cfg)
			c.apply(t, fmt.Sprintf(`{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: %[1]s, namespace: %[2]s}, rules: [
  {apiGroups: [kro.run], resources: [blockeds], verbs: [get, list, watch]},
  {apiGroups: ['', apps], resources: [deployments, replicasets, services, pods, events], verbs: [get, list, watch]}]}`, user, ns))
			c.apply(t, fmt.Sprintf("{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: %[1]s, namespace: %[2]s}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[1]s}, subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[1]s}]}", user, ns))
			t.Cleanup(func() {
				c.delete(t, "rbac.authorization.k8s.io/v1", "RoleBinding", ns, user)
				c.delete(t, "rbac.authorization.k8s.io/v1", "Role", ns, user)
			})
			const unread = "ResourceGraphDefinition blocked, which says how stuck's resources depend on each other and when each is ready, cannot be read: you may not read resourcegraphdefinitions.kro.run"
			var tree string
			eventually(t, 10*time.Second, user+"'s permissions", func() (bool, string) {
				var err error
				tree, err = kro(t, cfg, nil, "tree", "blocked", "stuck", "-n", ns, "--as", user)
				return err == nil, fmt.Sprint(tree, err)
			})
			if !strings.Contains(tree, unread) || !regexp.MustCompile(`Deployment/stuck +`+ns+` +Unknown +InProgress`).MatchString(tree) {
				t.Errorf("tree as %s:\n%s", user, tree)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "blocked", "stuck", "-n", ns, "--as", user)
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("why-not-ready as %s: exit %v, want not ready\n%s", user, err, out)
			}
			sayAll(t, "why-not-ready as "+user, out,
				"Root cause: Blocked/stuck is not Ready, as kro-agent reports: ",
				"readyWhen ${deployment.status.?availableReplicas.orValue(0) == deployment.spec.replicas} is false",
				"(1 of 1) is not ready: Pending, Unschedulable: ",
				"What to do: no node can take its Pods",
			)
			if out, err := kro(t, cfg, nil, "explain-conditions", "blocked", "stuck", "-n", ns, "--as", user); err != nil || !strings.Contains(out, "ResourcesReady=") {
				t.Errorf("explain-conditions as %s: %v\n%s", user, err, out)
			}
			if out, err := kro(t, cfg, nil, "status", "blocked", "-n", ns, "--as", user); err != nil || !regexp.MustCompile(`Blocked +stuck +IN_PROGRESS`).MatchString(out) {
				t.Errorf("status blocked as %s: %v\n%s", user, err, out)
			}
			// Without a kind, those of group kro.run found by discovery that
			// the user may list (blockeds alone), and a warning that says so.
			if out, err := kro(t, cfg, nil, "status", "-n", ns, "--as", user); err != nil ||
				!regexp.MustCompile(`(?m)^Blocked +stuck +IN_PROGRESS`).MatchString(out) || strings.Contains(out, "WebApp") ||
				!strings.Contains(out, "listed instead are the instances of the kinds of group kro.run that you may list") {
				t.Errorf("status without a kind as %s: %v\n%s", user, err, out)
			}
			// In every namespace, where the user may list none of them.
			if out, err := kro(t, cfg, nil, "status", "-A", "--as", user); err == nil ||
				!regexp.MustCompile(`^you may list the instances of none of the kinds of group kro.run there are \(.*blockeds.kro.run.*\): .* is forbidden`).MatchString(err.Error()) {
				t.Errorf("status -A as %s: %v\n%s", user, err, out)
			}
			// dry-run renders the templates, which only the RGD holds.
			file := filepath.Join(t.TempDir(), "stuck.yaml")
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Blocked, metadata: {name: stuck, namespace: %s}, spec: {name: stuck}}", ns))
			if _, err := kro(t, cfg, nil, "dry-run", "-f", file, "--as", user); err == nil || !strings.Contains(err.Error(), "; kro-agent's manifests hold the ClusterRole kro-agent-rgd-viewer for it, to bind with a ClusterRoleBinding), or check the instance against its schema alone") {
				t.Errorf("dry-run as %s: %v", user, err)
			}
			// The ClusterRole the manifests hold for it is all it takes.
			c.apply(t, shippedDocument(t, "agent/rbac.yaml", "ClusterRole", "kro-agent-rgd-viewer"))
			c.apply(t, fmt.Sprintf("{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: %[1]s}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kro-agent-rgd-viewer}, subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[1]s}]}", user))
			t.Cleanup(func() {
				c.delete(t, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", user)
				c.delete(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "kro-agent-rgd-viewer")
			})
			eventually(t, 10*time.Second, "the tree with its graph, as "+user, func() (bool, string) {
				tree, err := kro(t, cfg, nil, "tree", "blocked", "stuck", "-n", ns, "--as", user)
				return err == nil && !strings.Contains(tree, "cannot be read") && strings.Contains(tree, "not created yet: kro-agent waits for deployment to be ready"), fmt.Sprint(tree, err)
			})
			return ctx
		}).
		Assess("why-not-ready tells a Pod that waits for its claim, and why the claim is not bound", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, claimRGD)
			c.waitRGDActive(t, "claims")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Claims, metadata: {name: pg, namespace: %s}, spec: {}}", ns))
			var out string
			eventually(t, 30*time.Second, "the claim's event in the diagnosis", func() (bool, string) {
				out, _ = kro(t, cfg, nil, "why-not-ready", "claims", "pg", "-n", ns)
				return strings.Contains(out, "(PersistentVolumeClaim data-pg-0): "), out
			})
			sayAll(t, "why-not-ready", out,
				"Root cause: resource db (StatefulSet pg) is not ready",
				"Pod pg-0 (1 of 1) is not ready: Pending, Unschedulable: ",
				"unbound immediate PersistentVolumeClaims",
				"What to do: resource db's Pods wait for their PersistentVolumeClaims to be bound",
			)
			c.delete(t, "kro.run/v1alpha1", "Claims", ns, "pg")
			return ctx
		}).
		Assess("why-not-ready tells a Service that waits for a load balancer nothing gives", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: public-sites}
spec:
  schema: {apiVersion: v1alpha1, kind: PublicSite}
  resources:
  - id: lb
    readyWhen: ["${lb.status.?loadBalancer.?ingress.orValue([]).size() > 0}"]
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: "${schema.metadata.name}"}
      spec: {type: LoadBalancer, selector: {app: site}, ports: [{port: 80}]}
`)
			c.waitRGDActive(t, "public-sites")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PublicSite, metadata: {name: site, namespace: %s}}", ns))
			var out string
			// The local cluster runs no load balancer controller.
			eventually(t, 30*time.Second, "the Service's wait in the diagnosis", func() (bool, string) {
				out, _ = kro(t, cfg, nil, "why-not-ready", "publicsite", "site", "-n", ns)
				return strings.Contains(out, "Root cause: resource lb (Service site) is not ready"), out
			})
			sayAll(t, "why-not-ready", out,
				"Service site is of type LoadBalancer and has no address (status.loadBalancer.ingress), and no controller has recorded an event about it",
				"What to do: a load balancer controller gives a Service of type LoadBalancer its address",
			)
			c.delete(t, "kro.run/v1alpha1", "PublicSite", ns, "site")
			return ctx
		}).
		Assess("why-not-ready names the Namespace an object waits for, when the graph makes it and it is refused", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// settings does not read ns, so nothing orders the two.
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: loose-tenants}
spec:
  schema: {apiVersion: v1alpha1, kind: LooseTenant, scope: Cluster, spec: {namespace: string}}
  resources:
  - id: settings
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: "${schema.spec.namespace}"}}
  - id: ns
    template: {apiVersion: v1, kind: Namespace, metadata: {name: "${schema.spec.namespace}"}}
`)
			c.waitRGDActive(t, "loose-tenants")
			// A dry run finds settings' namespace missing, and created
			// further on: pending, as the agent would apply it once there.
			file := filepath.Join(t.TempDir(), "loose.yaml")
			writeFile(t, file, "{apiVersion: kro.run/v1alpha1, kind: LooseTenant, metadata: {name: planned}, spec: {namespace: planned-space}}")
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err != nil ||
				!strings.Contains(out, "settings: ConfigMap planned-space/settings PENDING\n  namespace planned-space is created by ns, which nothing orders before settings (write its namespace as ${ns.metadata.name})") {
				t.Errorf("dry-run of an object in a namespace created further on: %v\n%s", err, out)
			}
			c.apply(t, "{apiVersion: kro.run/v1alpha1, kind: LooseTenant, metadata: {name: loose}, spec: {namespace: Not_Valid}}")
			var out string
			eventually(t, 30*time.Second, "the Namespace's refusal as the root cause", func() (bool, string) {
				out, _ = kro(t, cfg, nil, "why-not-ready", "loosetenant", "loose")
				return strings.Contains(out, "Root cause: resource ns (Namespace Not_Valid) is not created: the API server refuses it\n"), out
			})
			c.delete(t, "kro.run/v1alpha1", "LooseTenant", "", "loose")
			return ctx
		}).
		Assess("why-not-ready shows the apply the API server refuses, and the object's name", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// Someone else's ConfigMap holds the name the instance's config takes.
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: clash-config, namespace: %s}}", ns))
			c.apply(t, webapp(ns, "clash", ", replicas: 1"))
			var out string
			var err error
			// Until its first status is written, the refusal shows among
			// the instance's events already; the diagnosis is of that status.
			eventually(t, 20*time.Second, "the refused apply in the diagnosis", func() (bool, string) {
				out, err = kro(t, cfg, nil, "why-not-ready", "webapp", "clash", "-n", ns)
				return strings.Contains(out, "ResourcesReady=False (ApplyFailed)"), out
			})
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("exit: %v, want not ready", err)
			}
			sayAll(t, "why-not-ready", out,
				"Root cause: resource config (ConfigMap clash-config) is someone else's",
				"exists and was not created by kro-agent (it has no kro.run/instance-id label)",
				"delete it if nothing needs it (kro-agent then creates its own within seconds), or have resource config render another name; "+
					"to keep it, and what runs on it, hand it to this instance: kubectl annotate configmap/clash-config -n "+ns+" kro.run/adopt-by="+ns+"/clash",
			)
			tree, err := kro(t, cfg, nil, "tree", "webapp/clash", "-n", ns)
			if err != nil || !regexp.MustCompile(`config +ConfigMap/clash-config +\S+ +Conflict +- +exists and was not created by kro-agent`).MatchString(tree) ||
				!strings.Contains(tree, "not created yet: waiting for resource config") {
				t.Errorf("tree of the blocked instance: %v\n%s", err, tree)
			}
			// dry-run says what the agent does: it leaves the object alone,
			// goes no further, and so projects no status (the service's
			// url) from what it would apply after it.
			file := filepath.Join(t.TempDir(), "clash.yaml")
			writeFile(t, file, webapp(ns, "clash", ", replicas: 1"))
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(preview, "config: ConfigMap "+ns+"/clash-config INVALID\n"+
				"  it exists and was not created by kro-agent (it has no kro.run/instance-id label): kro-agent leaves it as it is; delete it, or have resource config render another name; "+
				"or, to keep it, hand it to this instance with the annotation kro.run/adopt-by="+ns+"/clash\n") ||
				strings.Contains(preview, "its status") {
				t.Errorf("dry-run of the blocked instance: %v\n%s", err, preview)
			}
			// The same file names the instance to diagnose, namespace and all.
			if out, err := kro(t, cfg, nil, "why-not-ready", "-f", file); !errors.Is(err, plugin.ErrNotReady) ||
				!strings.Contains(out, "Not ready: WebApp "+ns+"/clash\nRoot cause: resource config (ConfigMap clash-config) is someone else's") {
				t.Errorf("why-not-ready -f of the blocked instance: %v\n%s", err, out)
			}
			// Handed to another instance, it stays someone else's, and
			// the refusal quotes the annotation.
			if out, err := kubectl(t, cfg, "", "annotate", "configmap/clash-config", "-n", ns, "kro.run/adopt-by="+ns+"/other"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			eventually(t, 20*time.Second, "the refusal to quote the annotation", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "clash")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && strings.Contains(cond.Message, `hand it to this instance with the annotation kro.run/adopt-by=`+ns+`/clash (its annotation says "`+ns+`/other")`), conditionSummary(inst)
			})
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "clash-config"); len(cm.GetLabels()) != 0 {
				t.Errorf("a ConfigMap handed to another instance was taken: labels %v", cm.GetLabels())
			}
			// Handed to this one, it is adopted as it is found: the
			// instance goes on at once (the agent follows the object's
			// hand-over), with no downtime of what runs on it.
			before := c.mustGet(t, "v1", "ConfigMap", ns, "clash-config")
			if out, err := kubectl(t, cfg, "", "annotate", "--overwrite", "configmap/clash-config", "-n", ns, "kro.run/adopt-by="+ns+"/clash"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "clash", v1alpha1.InstanceActive)
			inst := c.mustGet(t, "kro.run/v1alpha1", "WebApp", ns, "clash")
			adopted := c.mustGet(t, "v1", "ConfigMap", ns, "clash-config")
			if adopted.GetUID() != before.GetUID() || adopted.GetLabels()[v1alpha1.LabelInstanceID] != string(inst.GetUID()) {
				t.Errorf("clash-config is %s labelled for %q, want %s (the one handed over) labelled for %s", adopted.GetUID(), adopted.GetLabels()[v1alpha1.LabelInstanceID], before.GetUID(), inst.GetUID())
			}
			eventually(t, 10*time.Second, "the Adopted event", func() (bool, string) {
				events := eventsAbout(t, c, ns, "clash", "Adopted")
				if len(events) != 1 {
					return false, fmt.Sprint(events)
				}
				note := fmt.Sprint(events[0].Object["note"])
				return note == "adopted ConfigMap "+ns+"/clash-config (resource config) in the local cluster, handed to this instance by its annotation kro.run/adopt-by", note
			})
			// Now the instance's: deleted with it.
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "clash")
			eventually(t, 30*time.Second, "the adopted ConfigMap to go with its instance", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "clash-config")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("objects made by hand in the instance's way are all found, and handed over at once", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			// What kubectl or Helm made before the instance: each a name
			// its graph renders.
			made := [][3]string{{"v1", "ConfigMap", "byhand-config"}, {"apps/v1", "Deployment", "byhand"}, {"v1", "Service", "byhand"}}
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: byhand-config, namespace: %s}, data: {GREETING: hi}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, metadata: {name: byhand, namespace: %s}, spec: {replicas: 1, selector: {matchLabels: {app: byhand}}, template: {metadata: {labels: {app: byhand}}, spec: {containers: [{name: web, image: nginx:1.27}]}}}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: Service, metadata: {name: byhand, namespace: %s}, spec: {selector: {app: byhand}, ports: [{port: 80}]}}", ns))
			uids := map[string]types.UID{}
			for _, o := range made {
				uids[o[1]] = c.mustGet(t, o[0], o[1], ns, o[2]).GetUID()
			}
			c.apply(t, webapp(ns, "byhand", ", replicas: 1"))
			// Those the agent has not got to yet are found too, where
			// their names render: all three at once.
			var tree string
			eventually(t, 20*time.Second, "all three in the tree as someone else's", func() (bool, string) {
				tree, _ = kro(t, cfg, nil, "tree", "webapp", "byhand", "-n", ns)
				return regexp.MustCompile(`ConfigMap/byhand-config +\S+ +Conflict`).MatchString(tree) &&
					regexp.MustCompile(`Deployment/byhand +\S+ +Conflict`).MatchString(tree) &&
					regexp.MustCompile(`Service/byhand +\S+ +Conflict`).MatchString(tree), tree
			})
			command := "kubectl annotate configmap/byhand-config deployment.apps/byhand service/byhand -n " + ns + " kro.run/adopt-by=" + ns + "/byhand"
			out, _ := kro(t, cfg, nil, "why-not-ready", "webapp", "byhand", "-n", ns)
			sayAll(t, "why-not-ready", out, "to keep it and the 2 further on that are someone else's, and what runs on them, hand them to this instance: "+command)
			// The command as given, less its leading "kubectl".
			if out, err := kubectl(t, cfg, "", strings.Fields(command)[1:]...); err != nil {
				t.Fatalf("%s: %v\n%s", command, err, out)
			}
			inst := c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "byhand", v1alpha1.InstanceActive)
			for _, o := range made {
				u := c.mustGet(t, o[0], o[1], ns, o[2])
				if u.GetUID() != uids[o[1]] || u.GetLabels()[v1alpha1.LabelInstanceID] != string(inst.GetUID()) {
					t.Errorf("%s %s is %s labelled for %q, want the one made by hand, %s, labelled for %s", o[1], o[2], u.GetUID(), u.GetLabels()[v1alpha1.LabelInstanceID], uids[o[1]], inst.GetUID())
				}
			}
			if cm := c.mustGet(t, "v1", "ConfigMap", ns, "byhand-config"); cm.Object["data"].(map[string]any)["GREETING"] != "Hello from kro-agent" {
				t.Errorf("the adopted ConfigMap is not what the template says: %v", cm.Object["data"])
			}
			// The Event names who else holds fields of the Deployment:
			// what they set and the template does not stays as they set it.
			eventually(t, 10*time.Second, "the Adopted event of the Deployment, naming who else set its fields", func() (bool, string) {
				for _, e := range eventsAbout(t, c, ns, "byhand", "Adopted") {
					note := fmt.Sprint(e.Object["note"])
					if strings.HasPrefix(note, "adopted Deployment "+ns+"/byhand (resource deployment) in the local cluster, handed to this instance by its annotation kro.run/adopt-by; what its template does not set stays as "+testManager+" set it") {
						return true, note
					}
				}
				return false, fmt.Sprint(eventsAbout(t, c, ns, "byhand", "Adopted"))
			})
			c.deleteAll(t, "kro.run/v1alpha1", "WebApp", ns, "byhand")
			return ctx
		}).
		Assess("an object another instance owns is named with its owner", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, singletonRGD)
			c.waitRGDActive(t, "singleton")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Singleton, metadata: {name: first, namespace: %s}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Singleton", ns, "first", v1alpha1.InstanceActive)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Singleton, metadata: {name: second, namespace: %s}}", ns))
			first := c.mustGet(t, "kro.run/v1alpha1", "Singleton", ns, "first")
			owner := fmt.Sprintf("belongs to another instance, %s/first (kro.run/instance-id %s)", ns, first.GetUID())
			eventually(t, 20*time.Second, "the apply to be refused, naming the owner", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "Singleton", ns, "second")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				// Deleting it would only have the first make it again.
				return cond != nil && strings.Contains(cond.Message, "ConfigMap "+ns+"/team-settings already exists in the local cluster and "+owner+
					": kro-agent leaves it as it is; have resource settings render another name for this instance, or delete it once "+ns+"/first is gone"), conditionSummary(inst)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "singleton", "second", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "Root cause: resource settings (ConfigMap team-settings) is someone else's\n  exists and "+owner) ||
				!strings.Contains(out, "What to do: kro-agent does not take over an object it did not create for this instance, and "+ns+"/first, whose it is, makes it again while it exists") {
				t.Errorf("why-not-ready of the second instance: %v\n%s", err, out)
			}
			tree, err := kro(t, cfg, nil, "tree", "singleton", "first", "-n", ns)
			if err != nil || !regexp.MustCompile(`settings +ConfigMap/team-settings +\S+ +Ready`).MatchString(tree) {
				t.Errorf("tree of the owner: %v\n%s", err, tree)
			}
			// dry-run of the second says the same.
			file := filepath.Join(t.TempDir(), "second.yaml")
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Singleton, metadata: {name: second, namespace: %s}}", ns))
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(preview, "settings: ConfigMap "+ns+"/team-settings INVALID\n  it exists and "+owner+
				": kro-agent leaves it as it is; have resource settings render another name for this instance, or delete it once "+ns+"/first is gone") {
				t.Errorf("dry-run of the second instance: %v\n%s", err, preview)
			}
			// An instance of another RGD's kind named as the owner is is
			// not taken for the owner made again: the owner is named with
			// its RGD.
			c.apply(t, strings.NewReplacer("name: singleton", "name: singleton-twin", "kind: Singleton", "kind: SingletonTwin").Replace(singletonRGD))
			c.waitRGDActive(t, "singleton-twin")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: SingletonTwin, metadata: {name: first, namespace: %s}}", ns))
			twinOwner := fmt.Sprintf("belongs to another instance, %s/first of ResourceGraphDefinition singleton (kro.run/instance-id %s)", ns, first.GetUID())
			eventually(t, 20*time.Second, "the twin's apply to be refused, naming the owner and its RGD", func() (bool, string) {
				inst := c.mustGet(t, "kro.run/v1alpha1", "SingletonTwin", ns, "first")
				cond := condition(inst, v1alpha1.ConditionResourcesReady)
				return cond != nil && strings.Contains(cond.Message, "ConfigMap "+ns+"/team-settings already exists in the local cluster and "+twinOwner+
					": kro-agent leaves it as it is; have resource settings render another name for this instance, or delete it once "+ns+"/first of ResourceGraphDefinition singleton is gone"), conditionSummary(inst)
			})
			if out, err := kro(t, cfg, nil, "why-not-ready", "singletontwin", "first", "-n", ns); !errors.Is(err, plugin.ErrNotReady) ||
				!strings.Contains(out, "exists and "+twinOwner) || strings.Contains(out, "earlier instance") {
				t.Errorf("why-not-ready of the twin: %v\n%s", err, out)
			}
			c.delete(t, "kro.run/v1alpha1", "SingletonTwin", ns, "first")
			for _, name := range []string{"second", "first"} {
				c.delete(t, "kro.run/v1alpha1", "Singleton", ns, name)
			}
			return ctx
		}).
		Assess("a condition the RGD declares holding Ready back is the root cause", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: pressured}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Pressured
    spec: {pressure: boolean | default=true}
    status:
      conditions:
      - type: Pressure
        status: ${schema.spec.pressure}
        reason: PressureReported
        message: the instance says so
        polarity: Negative
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-pressure"}
`)
			c.waitRGDActive(t, "pressured")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Pressured, metadata: {name: p1, namespace: %s}}", ns))
			var out string
			eventually(t, 20*time.Second, "why-not-ready to name the condition", func() (bool, string) {
				var err error
				out, err = kro(t, cfg, nil, "why-not-ready", "pressured", "p1", "-n", ns)
				return errors.Is(err, plugin.ErrNotReady) && strings.Contains(out, "Root cause: Pressured/p1's condition Pressure is True"), out
			})
			sayAll(t, "why-not-ready", out,
				"ResourceGraphDefinition pressured declares it with negative polarity (True is bad), counting toward Ready",
				"  Pressure=True (PressureReported): the instance says so\n  its status: ${schema.spec.pressure}",
				"What to do: the condition is the RGD's verdict on what its status expression reads (schema): Ready follows once that makes it False",
			)
			c.patch(t, "kro.run/v1alpha1", "Pressured", ns, "p1", `{"spec":{"pressure":false}}`)
			c.waitState(t, "kro.run/v1alpha1", "Pressured", ns, "p1", v1alpha1.InstanceActive)
			if out, err := kro(t, cfg, nil, "why-not-ready", "pressured", "p1", "-n", ns); err != nil || !strings.Contains(out, "Pressured "+ns+"/p1 is Ready") {
				t.Errorf("why-not-ready once the pressure is off: %v\n%s", err, out)
			}
			c.delete(t, "kro.run/v1alpha1", "Pressured", ns, "p1")
			return ctx
		}).
		Assess("a change of an immutable field: the refusal is short and why-not-ready says what to do", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, jobRGD)
			c.waitRGDActive(t, "batch")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Batch, metadata: {name: nightly, namespace: %s}, spec: {mode: full}}", ns))
			eventually(t, 20*time.Second, "the Job to be created", func() (bool, string) {
				_, err := c.get(t, "batch/v1", "Job", ns, "nightly")
				return err == nil, fmt.Sprint(err)
			})
			quick := fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Batch, metadata: {name: nightly, namespace: %s}, spec: {mode: quick}}", ns)
			// dry-run says it first, as short, what would change, and what
			// to do.
			file := filepath.Join(t.TempDir(), "quick.yaml")
			writeFile(t, file, quick)
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); !errors.Is(err, plugin.ErrInvalid) ||
				!strings.Contains(out, "…: field is immutable; the change needs a field the API server lets no one change once the object exists: undo it, or delete Job "+ns+"/nightly and kro-agent creates it again") ||
				!strings.Contains(out, "is immutable after creation except resources.requests and volumeAttributesClassName for bound claims; the change needs") ||
				!regexp.MustCompile(`(?m)^  -\s+value: full\n  \+\s+value: quick$`).MatchString(out) ||
				!regexp.MustCompile(`(?m)^  -\s+storageClassName: full\n  \+\s+storageClassName: quick$`).MatchString(out) ||
				slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool { return len(line) > 400 }) {
				t.Errorf("dry-run of a change to the Job's template and the claim's class: %v\n%s", err, out)
			}
			c.apply(t, quick)
			var msg string
			eventually(t, 20*time.Second, "the apply to be refused", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "Batch", ns, "nightly")
				cond := condition(u, v1alpha1.ConditionResourcesReady)
				if cond == nil || cond.Reason != v1alpha1.ReasonApplyFailed {
					return false, conditionSummary(u)
				}
				msg = cond.Message
				return true, ""
			})
			// The API server quotes the whole template, as a Go struct.
			// The claim's refusal is told too, after the first.
			job, claim, both := strings.Cut(msg, "\nAlso: ")
			if !strings.Contains(job, `Job.batch "nightly" is invalid: spec.template: Invalid value: `) || !strings.HasSuffix(job, "…: field is immutable") || len(job) > 300 {
				t.Errorf("the refusal is not shortened to its field and reason (%d characters): %s", len(job), msg)
			}
			if !both || !strings.HasPrefix(claim, "applying PersistentVolumeClaim "+ns+`/nightly (resource claim) in the local cluster: PersistentVolumeClaim "nightly" is invalid: spec: Forbidden: spec is immutable after creation`) || strings.Contains(claim, "\n") {
				t.Errorf("the claim's refusal is not told on a line after the Job's: %s", msg)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "batch", "nightly", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) ||
				!strings.Contains(out, "Root cause: resource job (Job nightly) is not updated to Batch/nightly's values: the API server refuses kro-agent's change\n") ||
				!strings.Contains(out, "undo it on the instance (or in its RGD, where the change came from there), or delete the objects the message names and kro-agent creates them again with the new values") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			// The Job's row, and the claim's, say their change does not
			// get through.
			if out, err := kro(t, cfg, nil, "tree", "batch", "nightly", "-n", ns, "-o", "json"); err != nil || !strings.Contains(out, `"reason": "kro-agent's change is refused: Job.batch \"nightly\" is invalid`) ||
				!strings.Contains(out, `"reason": "kro-agent's change is refused: PersistentVolumeClaim \"nightly\" is invalid: spec: Forbidden: spec is immutable after creation`) {
				t.Errorf("tree of the refused change: %v\n%s", err, out)
			}
			c.delete(t, "kro.run/v1alpha1", "Batch", ns, "nightly")
			return ctx
		}).
		Assess("an instance another's finalizer holds after kro-agent let it go says whose it is", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Batch, metadata: {name: kept, namespace: %s}, spec: {mode: full}}", ns))
			eventually(t, 20*time.Second, "the Job to be created", func() (bool, string) {
				_, err := c.get(t, "batch/v1", "Job", ns, "kept")
				return err == nil, fmt.Sprint(err)
			})
			kept := c.setFinalizers(t, "kro.run/v1alpha1", "Batch", ns, "kept", `["`+v1alpha1.Finalizer+`", "`+holdFinalizer+`"]`)
			// Events of the name: one about this instance, one about an
			// earlier instance of the name, which is not this one's news.
			for reason, uid := range map[string]string{"AboutThisOne": string(kept.GetUID()), "AboutAnEarlierOne": "00000000-0000-0000-0000-000000000001"} {
				c.apply(t, fmt.Sprintf("{apiVersion: v1, kind: Event, metadata: {name: kept.%s, namespace: %s}, involvedObject: {apiVersion: kro.run/v1alpha1, kind: Batch, name: kept, namespace: %s, uid: %q}, reason: %s, message: made by the test, type: Normal, lastTimestamp: %q}",
					strings.ToLower(reason), ns, ns, uid, reason, time.Now().UTC().Format(time.RFC3339)))
			}
			c.delete(t, "kro.run/v1alpha1", "Batch", ns, "kept")
			// kro-agent's last status says whose finalizer keeps it.
			eventually(t, 30*time.Second, "the instance's status to name the finalizer that keeps it", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "Batch", ns, "kept")
				cond := condition(u, v1alpha1.ConditionResourcesReady)
				managed := condition(u, v1alpha1.ConditionInstanceManaged)
				return slices.Equal(u.GetFinalizers(), []string{holdFinalizer}) && cond != nil &&
					cond.Message == "every resource is deleted; kro-agent has let the instance go, and it waits for the finalizers "+holdFinalizer+", which are not kro-agent's" &&
					managed != nil && managed.Status == metav1.ConditionFalse && managed.Reason == v1alpha1.ReasonFinalized, conditionSummary(u)
			})
			out, _ := kro(t, cfg, nil, "why-not-ready", "batch", "kept", "-n", ns)
			if !strings.Contains(out, "Root cause: Batch/kept is being deleted and held by the finalizers "+holdFinalizer+", which are not kro-agent's: kro-agent has let it go") ||
				!strings.Contains(out, "Normal AboutThisOne: made by the test") || strings.Contains(out, "AboutAnEarlierOne") {
				t.Errorf("why-not-ready of the held instance:\n%s", out)
			}
			if _, err := c.get(t, "batch/v1", "Job", ns, "kept"); !apierrors.IsNotFound(err) {
				t.Errorf("the Job of the instance kro-agent let go: %v", err)
			}
			out, err := kro(t, cfg, nil, "tree", "batch", "kept", "-n", ns)
			if err != nil || !regexp.MustCompile(`\(instance\) +Batch/kept +`+ns+` +Deleting +- +being deleted, held by the finalizers `+holdFinalizer).MatchString(out) {
				t.Errorf("tree of the held instance: %v\n%s", err, out)
			}
			c.release(t, "kro.run/v1alpha1", "Batch", ns, "kept")
			eventually(t, 10*time.Second, "the instance to be gone", func() (bool, string) {
				_, err := c.get(t, "kro.run/v1alpha1", "Batch", ns, "kept")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			return ctx
		}).
		Assess("a field the instance does not set is named, by the agent and the plugin", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, unsetRGD)
			c.waitRGDActive(t, "teamconfig")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TeamConfig, metadata: {name: loose, namespace: %s}, spec: {name: loose}}", ns))
			const field = "metadata.labels.team: ${schema.spec.team} reads spec.team, which the instance does not set"
			const named = "config: " + field
			eventually(t, 20*time.Second, "GraphResolved to name the unset field", func() (bool, string) {
				u, err := c.get(t, "kro.run/v1alpha1", "TeamConfig", ns, "loose")
				if err != nil {
					return false, err.Error()
				}
				cond := condition(u, v1alpha1.ConditionGraphResolved)
				state, _, _ := unstructured.NestedString(u.Object, "status", "state")
				return cond != nil && cond.Status == metav1.ConditionUnknown && cond.Reason == v1alpha1.ReasonFieldUnset &&
					strings.HasPrefix(cond.Message, named) && state == string(v1alpha1.InstanceInProgress), state + " " + conditionSummary(u)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "teamconfig", "loose", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("why-not-ready exit: %v, want not ready", err)
			}
			sayAll(t, "why-not-ready", out, "Root cause: TeamConfig/loose does not set a value its resources are rendered from", named, "kubectl edit teamconfig loose -n "+ns)
			if tree, err := kro(t, cfg, nil, "tree", "teamconfig", "loose", "-n", ns); err != nil || !strings.Contains(tree, "not created yet: the instance does not set spec.team") {
				t.Errorf("tree: %v\n%s", err, tree)
			}
			// dry-run: pending on the unset field; invalid, and exit 1, on a
			// value the template cannot be rendered from.
			file := t.TempDir() + "/teamconfig.yaml"
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TeamConfig, metadata: {name: loose, namespace: %s}, spec: {name: loose}}", ns))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err != nil || !strings.Contains(out, "config: ConfigMap "+ns+"/loose PENDING\n  "+field) {
				t.Errorf("dry-run of the instance without spec.team: %v\n%s", err, out)
			}
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TeamConfig, metadata: {name: loose, namespace: %s}, spec: {name: loose, team: a, shares: 0}}", ns))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(out, "config: ConfigMap "+ns+"/loose INVALID") || !strings.Contains(out, "division by zero") {
				t.Errorf("dry-run of shares: 0: %v, want invalid\n%s", err, out)
			}
			// Setting the field is all it takes.
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: TeamConfig, metadata: {name: loose, namespace: %s}, spec: {name: loose, team: a}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "TeamConfig", ns, "loose", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "TeamConfig", ns, "loose")
			return ctx
		}).
		Assess("a value missing from the instance alone is the author's to set, as the agent and the plugin say", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, firstOfRGD)
			c.waitRGDActive(t, "firstof")
			short := fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: FirstOf, metadata: {name: short, namespace: %s}, spec: {names: []}}", ns)
			c.apply(t, short)
			// Only a change to the instance gives the value, as with a field
			// it does not set: not a dependency to wait for.
			const missing = "data.name: ${schema.spec.names[0]}: index out of bounds: 0 (the expression reads only the instance, so only a change to the instance resolves it)"
			eventually(t, 20*time.Second, "GraphResolved to name the value", func() (bool, string) {
				u, err := c.get(t, "kro.run/v1alpha1", "FirstOf", ns, "short")
				if err != nil {
					return false, err.Error()
				}
				cond := condition(u, v1alpha1.ConditionGraphResolved)
				state, _, _ := unstructured.NestedString(u.Object, "status", "state")
				return cond != nil && cond.Status == metav1.ConditionUnknown && cond.Reason == v1alpha1.ReasonFieldUnset &&
					cond.Message == "first: "+missing && state == string(v1alpha1.InstanceInProgress), state + " " + conditionSummary(u)
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "firstof", "short", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) {
				t.Errorf("why-not-ready exit: %v, want not ready", err)
			}
			sayAll(t, "why-not-ready", out, "Root cause: FirstOf/short does not set a value its resources are rendered from", missing, "kubectl edit firstof short -n "+ns)
			if tree, err := kro(t, cfg, nil, "tree", "firstof", "short", "-n", ns); err != nil || !strings.Contains(tree, "not created yet: data.name: ${schema.spec.names[0]}: index out of bounds: 0") {
				t.Errorf("tree: %v\n%s", err, tree)
			}
			file := t.TempDir() + "/short.yaml"
			writeFile(t, file, short)
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err != nil || !strings.Contains(out, "first: ConfigMap "+ns+"/short-first PENDING\n  "+missing) {
				t.Errorf("dry-run of the instance with no names: %v\n%s", err, out)
			}
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: FirstOf, metadata: {name: short, namespace: %s}, spec: {names: [a]}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "FirstOf", ns, "short", v1alpha1.InstanceActive)
			c.delete(t, "kro.run/v1alpha1", "FirstOf", ns, "short")
			return ctx
		}).
		Assess("an item a collection cannot create shows as missing, and the one it replaces as stale", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			pool := "{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: growing, namespace: %s}, spec: {queues: %s}}"
			c.apply(t, fmt.Sprintf(pool, ns, "[a, b]"))
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "growing", v1alpha1.InstanceActive)
			// The second item's name is not a valid object name; the
			// object of the item it replaces stays until one that is.
			c.apply(t, fmt.Sprintf(pool, ns, "[a, B_b]"))
			var out string
			var err error
			eventually(t, 20*time.Second, "why-not-ready to name the refused item", func() (bool, string) {
				out, err = kro(t, cfg, nil, "why-not-ready", "workerpool", "growing", "-n", ns)
				return strings.Contains(out, "Root cause: resource workers[1] (Deployment growing-B_b-eu) is not created: the API server refuses it"), out
			})
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "ApplyFailed") {
				t.Errorf("why-not-ready: %v\n%s", err, out)
			}
			tree, err := kro(t, cfg, nil, "tree", "workerpool", "growing", "-n", ns)
			lines := strings.Split(tree, "\n")
			// The collection's row, then its items.
			if err != nil || len(lines) < 6 || !strings.Contains(lines[2], "Deployment ×2") || !strings.Contains(lines[2], "Missing") ||
				!strings.Contains(lines[2], "1 of 2 ready") || !strings.Contains(lines[3], "workers[0]") ||
				!regexp.MustCompile(`workers\[1\] +Deployment/growing-B_b-eu +\S+ +Missing +- +kro-agent's apply is refused: Deployment.apps "growing-B_b-eu" is invalid`).MatchString(lines[4]) ||
				!regexp.MustCompile(`└─ workers +Deployment/growing-b-eu +\S+ +Stale +Current +no longer produced: collection workers has no such item now`).MatchString(lines[5]) {
				t.Errorf("tree: %v\n%s", err, tree)
			}
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "growing")
			return ctx
		}).
		Assess("why-not-ready on a suspended instance", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			patch := []byte(`{"metadata":{"annotations":{"kro.run/reconcile":"suspended"}}}`)
			if _, err := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns).Patch(ctx, "ready", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			out, err := kro(t, cfg, nil, "why-not-ready", "webapp", "ready", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "is suspended by the annotation kro.run/reconcile=suspended") || !strings.Contains(out, "kubectl annotate webapp ready -n "+ns+" kro.run/reconcile- to resume") {
				t.Errorf("%v\n%s", err, out)
			}
			unpatch := []byte(`{"metadata":{"annotations":{"kro.run/reconcile":null}}}`)
			if _, err := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns).Patch(ctx, "ready", types.MergePatchType, unpatch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			return ctx
		}).
		Assess("with the agent stopped, stale conditions are reported", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "ready", v1alpha1.InstanceActive)
			stopAgentNow(t)
			defer startAgent(t, cfg)
			c.apply(t, webapp(ns, "ready", ", replicas: 2"))
			out, err := kro(t, cfg, nil, "why-not-ready", "webapp", "ready", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "conditions are stale: they describe generation 1, the instance is at 2") {
				t.Errorf("%v\n%s", err, out)
			}
			explain, _ := kro(t, cfg, nil, "explain-conditions", "webapp", "ready", "-n", ns)
			if !strings.Contains(explain, "STALE: observed generation 1, object is at 2") {
				t.Errorf("explain-conditions does not flag stale conditions:\n%s", explain)
			}
			// Ready=True of generation 1 is not what the table says of it.
			status, err := kro(t, cfg, nil, "status", "webapp", "ready", "-n", ns, "-o", "wide")
			if err != nil || !regexp.MustCompile(`(?m)^WebApp +ready +ACTIVE +True +Stale +\S+ +webapp +its conditions describe generation 1, the instance is at 2: kro-agent has not processed the latest change$`).MatchString(status) {
				t.Errorf("status of an instance with stale conditions: %v\n%s", err, status)
			}
			if names, err := kro(t, cfg, nil, "status", "webapp", "-n", ns, "--not-ready", "-o", "name"); err != nil || !strings.Contains(names, "webapp.kro.run/ready\n") {
				t.Errorf("status --not-ready leaves out an instance with stale conditions: %v\n%s", err, names)
			}
			// Labels as columns, as kubectl get -L shows them.
			labelled, err := kro(t, cfg, nil, "status", "webapp", "ready", "-n", ns, "-L", "team,app.kubernetes.io/part-of")
			if err != nil || !regexp.MustCompile(`(?m)^KIND +NAME +STATE +READY +REASON +AGE +TEAM +PART-OF\nWebApp +ready +ACTIVE +True +Stale +\S+ +payments *$`).MatchString(labelled) {
				t.Errorf("status -L: %v\n%s", err, labelled)
			}
			tree, err := kro(t, cfg, nil, "tree", "webapp", "ready", "-n", ns)
			if err != nil || !strings.Contains(tree, "ACTIVE (stale: its conditions describe generation 1, the instance is at 2)") {
				t.Errorf("tree of an instance with stale conditions: %v\n%s", err, tree)
			}
			return ctx
		}).
		Assess("an instance whose RGD is invalid", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.applyUnvalidated(t, strings.Replace(blockedRGD, `name: "${schema.spec.name}"}`, `name: "${schema.spec.nope}"}`, 1))
			c.waitAgentWebhooks(t)
			eventually(t, 10*time.Second, "the RGD to be Inactive", func() (bool, string) {
				out, _ := kro(t, cfg, nil, "why-not-ready", "blocked", "stuck", "-n", ns)
				return strings.Contains(out, "ResourceGraphDefinition blocked is not Active"), out
			})
			out, _ := kro(t, cfg, nil, "why-not-ready", "blocked", "stuck", "-n", ns)
			if !strings.Contains(out, "undefined field 'nope'") || !strings.Contains(out, "kubectl kro validate") {
				t.Errorf("%s", out)
			}
			tree, _ := kro(t, cfg, nil, "tree", "blocked", "stuck", "-n", ns)
			if !strings.Contains(tree, "does not compile") {
				t.Errorf("tree does not say the RGD is invalid:\n%s", tree)
			}
			// The RGD itself is a subject of the commands that explain.
			out, err := kro(t, cfg, nil, "why-not-ready", "rgd", "blocked")
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "Root cause: ResourceGraphDefinition blocked is not Active") || !strings.Contains(out, "undefined field 'nope'") {
				t.Errorf("why-not-ready rgd blocked: %v\n%s", err, out)
			}
			out, err = kro(t, cfg, nil, "explain-conditions", "resourcegraphdefinition/blocked")
			if err != nil || !strings.Contains(out, "GraphAccepted=False") || strings.Contains(out, "Blocked/") {
				t.Errorf("explain-conditions of an RGD: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("dry-run previews without writing", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			file := t.TempDir() + "/preview.yaml"
			writeFile(t, file, webapp(ns, "preview", ", replicas: 1"))
			out, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sayAll(t, "dry-run", out, "config: ConfigMap plugin/preview-config CREATE", "deployment: Deployment plugin/preview CREATE", "service: Service plugin/preview CREATE", "ingress: Ingress SKIPPED\n  includeWhen ${schema.spec.ingress.enabled} is false", "+  replicas: 1")
			if _, err := c.get(t, "kro.run/v1alpha1", "WebApp", ns, "preview"); err == nil {
				t.Error("dry-run created the instance")
			}
			if _, err := c.get(t, "apps/v1", "Deployment", ns, "preview"); err == nil {
				t.Error("dry-run created the Deployment")
			}
			// An existing instance: only what changes shows as an update.
			writeFile(t, file, webapp(ns, "ready", ", replicas: 3"))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !strings.Contains(out, "deployment: Deployment plugin/ready UPDATE") || !strings.Contains(out, "+  replicas: 3") || !strings.Contains(out, "config: ConfigMap plugin/ready-config UNCHANGED") {
				t.Errorf("%v\n%s", err, out)
			}
			// An object on its way out is waited for, as the agent waits,
			// and so is what depends on it.
			c.hold(t, "v1", "ConfigMap", ns, "ready-config")
			c.delete(t, "v1", "ConfigMap", ns, "ready-config")
			out, err = kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !strings.Contains(out, "config: ConfigMap plugin/ready-config PENDING\n  it is being deleted, held by the finalizers "+holdFinalizer+"; kro-agent creates it again once it is gone") ||
				!strings.Contains(out, "deployment: Deployment plugin/ready UPDATE\n  kro-agent updates it only after config, which is being deleted (above)") {
				t.Errorf("dry-run while a resource is being deleted: %v\n%s", err, out)
			}
			c.release(t, "v1", "ConfigMap", ns, "ready-config")
			eventually(t, 20*time.Second, "the ConfigMap to be made again", func() (bool, string) {
				cm, err := c.get(t, "v1", "ConfigMap", ns, "ready-config")
				return err == nil && cm.GetDeletionTimestamp() == nil, fmt.Sprint(err)
			})
			c.waitState(t, "kro.run/v1alpha1", "WebApp", ns, "ready", v1alpha1.InstanceActive)
			// Every instance of a file is previewed, each under its name.
			writeFile(t, file, webapp(ns, "ready", ", replicas: 3")+"\n---\n"+webapp(ns, "second", ""))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !strings.Contains(out, "WebApp plugin/ready:\n") || !strings.Contains(out, "WebApp plugin/second:\n") ||
				!strings.Contains(out, "deployment: Deployment plugin/ready UPDATE") || !strings.Contains(out, "deployment: Deployment plugin/second CREATE") {
				t.Errorf("dry-run of two instances: %v\n%s", err, out)
			}
			// An instance named by the API server (generateName) is
			// previewed under the name a dry-run create gives it.
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {generateName: gen-, namespace: %s}, spec: {name: generated}}", ns))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !regexp.MustCompile(`^WebApp plugin/gen-\w{5} \(named from generateName "gen-" for this preview; a create gets another name\):\n`).MatchString(out) ||
				!strings.Contains(out, "deployment: Deployment plugin/generated CREATE") || !regexp.MustCompile(`kro.run/instance-name: gen-\w{5}\n`).MatchString(out) {
				t.Errorf("dry-run of an instance with generateName: %v\n%s", err, out)
			}
			// A field the kind does not declare, which the API server
			// refuses in its typed-patch machinery's words, is named,
			// with the one meant; text YAML read as a boolean is told so.
			writeFile(t, file, webapp(ns, "typo", ", replikas: 3"))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err == nil || err.Error() != `the instance itself is refused: WebApp.kro.run "typo" is invalid: spec.replikas: Forbidden: field not declared in the schema; did you mean replicas?` {
				t.Errorf("dry-run of an instance with an undeclared field: %v\n%s", err, out)
			}
			writeFile(t, file, webapp(ns, "yaml", ", image: on"))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err == nil || !strings.HasSuffix(err.Error(), `spec.image in body must be of type string: "boolean": YAML reads an unquoted y, yes, on or true as the boolean true; quote the text`) {
				t.Errorf("dry-run of an instance with text YAML reads as a boolean: %v\n%s", err, out)
			}
			// With more than one mistake, where the API server's apply
			// names the first alone, every one is named, as a create
			// names them.
			writeFile(t, file, webapp(ns, "typos", ", replicas: 50, port: eighty"))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file); err == nil ||
				!strings.Contains(err.Error(), `the instance itself is refused: WebApp.kro.run "typos" is invalid: [`) ||
				!strings.Contains(err.Error(), `spec.port: Invalid value: "string": spec.port in body must be of type integer: "string"`) ||
				!strings.Contains(err.Error(), "spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 20") {
				t.Errorf("dry-run of an instance with two mistakes: %v\n%s", err, out)
			}
			// A value that waits on another resource's status is pending.
			c.apply(t, pendingRGD)
			c.waitRGDActive(t, "pending")
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Pending, metadata: {name: p, namespace: %s}, spec: {name: p}}", ns))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file, "-o", "yaml")
			if err != nil || !strings.Contains(out, "ip: '<pending: ${svc.spec.clusterIP}>'") {
				t.Errorf("%v\n%s", err, out)
			}
			return ctx
		}).
		Assess("dry-run by a user who may write instances, not what they make", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			const user = "instance-author"
			c := newClients(t, cfg)
			c.grant(t, user, "{apiGroups: [kro.run], resources: [webapps], verbs: [get, list, create, update, patch]},"+
				"{apiGroups: [kro.run], resources: [resourcegraphdefinitions], verbs: [get, list]},"+
				"{apiGroups: ['', apps, networking.k8s.io], resources: [configmaps, services, deployments, ingresses], verbs: [get, list]}")
			file := filepath.Join(t.TempDir(), "ready.yaml")
			writeFile(t, file, webapp(ns, "ready", ", replicas: 3"))
			// Each object is planned without the API server's check, its
			// diff the template's fields laid over the live object, and
			// nothing is called invalid for the user's roles.
			// The plan as user sees it, once the grant is in force.
			dryRunAs := func(user string) string {
				var out string
				eventually(t, 10*time.Second, user+"'s permissions", func() (bool, string) {
					var err error
					out, err = kro(t, cfg, nil, "dry-run", "-f", file, "--as", user)
					return err == nil, fmt.Sprint(out, err)
				})
				return out
			}
			out := dryRunAs(user)
			sayAll(t, "dry-run as "+user, out,
				"config: ConfigMap plugin/ready-config UNCHANGED\n  not checked by the API server, as your roles do not allow its dry run",
				"deployment: Deployment plugin/ready UPDATE\n  not checked by the API server",
				"-  replicas: 2\n  +  replicas: 3",
			)
			if strings.Contains(out, "INVALID") || strings.Contains(out, "its status") {
				t.Errorf("dry-run as %s calls something invalid, or plans a status change:\n%s", user, out)
			}
			// What kro-agent applied before and the template no longer
			// sets (a label put into kro-agent's own apply while the
			// instance is suspended) is planned away; and a kro-agent that
			// starts and finds it, as after a change to the graph while
			// none ran, applies the object again to take it away.
			webapps := c.resource(t, "kro.run/v1alpha1", "WebApp").Namespace(ns)
			suspend := func(value string) {
				patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"kro.run/reconcile":%s}}}`, value)
				if _, err := webapps.Patch(ctx, "ready", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			suspend(`"suspended"`)
			configMaps := c.resource(t, "v1", "ConfigMap").Namespace(ns)
			live, err := configMaps.Get(ctx, "ready-config", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			earlier := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": live.Object["data"]}}
			earlier.SetName(live.GetName())
			earlier.SetNamespace(ns)
			labels := live.GetLabels()
			labels["dropped-by-template"] = "x"
			earlier.SetLabels(labels)
			if _, err := configMaps.Apply(ctx, live.GetName(), earlier, metav1.ApplyOptions{FieldManager: ownership.FieldManager, Force: true}); err != nil {
				t.Fatal(err)
			}
			sayAll(t, "dry-run as "+user+" with a label kro-agent no longer applies", dryRunAs(user),
				"config: ConfigMap plugin/ready-config UPDATE\n  not while the instance is suspended",
				"-    dropped-by-template: x\n",
			)
			stopAgentNow(t)
			suspend("null")
			before := writesIn(ns)
			startAgent(t, cfg)
			eventually(t, 30*time.Second, "kro-agent's apply to take the label away", func() (bool, string) {
				cm, err := configMaps.Get(ctx, "ready-config", metav1.GetOptions{})
				return err == nil && cm.GetLabels()["dropped-by-template"] == "", fmt.Sprint(cm.GetLabels(), err)
			})
			// What still holds what kro-agent applied is not applied again:
			// a port sent without the protocol its key holds included.
			time.Sleep(2 * time.Second)
			for _, w := range writeRequestsIn(ns)[before:] {
				if strings.HasSuffix(w, "/deployments/ready") || strings.HasSuffix(w, "/services/ready") {
					t.Errorf("after a restart kro-agent wrote %s, which holds what it applied", w)
				}
			}
			// A user who may not even read them is told what is not known.
			const blind = "instance-author-blind"
			c.grant(t, blind, "{apiGroups: [kro.run], resources: [webapps], verbs: [get, list, patch]},"+
				"{apiGroups: [kro.run], resources: [resourcegraphdefinitions], verbs: [get, list]}")
			sayAll(t, "dry-run as "+blind, dryRunAs(blind),
				"config: ConfigMap plugin/ready-config UNKNOWN\n  your roles allow neither a dry run of it nor reading it",
				"WebApp plugin/ready UNKNOWN\n  its status is projected from resources you may not read (deployment, service): what it would say is not known",
			)
			// A user who may read instances and not write them previews
			// too, the instance checked here against its kind's schema
			// (the RGD's, as the user may not read CRDs), as a warning
			// says; and what that schema refuses is refused, every
			// mistake named.
			const viewer = "instance-viewer"
			c.grant(t, viewer, "{apiGroups: [kro.run], resources: [webapps, resourcegraphdefinitions], verbs: [get, list]},"+
				"{apiGroups: ['', apps, networking.k8s.io], resources: [configmaps, services, deployments, ingresses], verbs: [get, list]}")
			sayAll(t, "dry-run as "+viewer, dryRunAs(viewer),
				"Warning: your roles do not allow a dry run of WebApp plugin/ready: it is checked here, the file's fields laid over the stored one, against the schema of the CustomResourceDefinition ResourceGraphDefinition webapp generates; admission webhooks and policies",
				"deployment: Deployment plugin/ready UPDATE\n  not checked by the API server",
				"-  replicas: 2\n  +  replicas: 3",
			)
			writeFile(t, file, webapp(ns, "ready", ", replicas: 50, colour: red"))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file, "--as", viewer); err == nil ||
				!strings.Contains(err.Error(), "spec.colour: Forbidden: field not declared in the schema") ||
				!strings.Contains(err.Error(), "spec.replicas: Invalid value: 50") ||
				!strings.Contains(out, "Warning: your roles do not allow a dry run of WebApp plugin/ready") {
				t.Errorf("dry-run as %s of an instance its schema refuses: %v\n%s", viewer, err, out)
			}
			// Without the right to apply the instance, or to read it, it
			// says so.
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: unwritable, namespace: %s}, spec: {queues: [a]}}", ns))
			if _, err := kro(t, cfg, nil, "dry-run", "-f", file, "--as", user); err == nil ||
				!strings.Contains(err.Error(), "dry-run applies the instance as a dry run, which your roles do not allow: ") {
				t.Errorf("dry-run without the right to apply the instance: %v", err)
			}
			return ctx
		}).
		Assess("dry-run by a user who is not kro-agent of a change to kro-agent's labels", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// Growing a collection relabels every item with the new size,
			// which the guard lets kro-agent alone do: the dry run as alice
			// (a cluster admin, not kro-agent) must not be refused for it.
			file := filepath.Join(t.TempDir(), "pool.yaml")
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: pool, namespace: %s}, spec: {queues: [a, b, c]}}", ns))
			out, err := kro(t, cfg, nil, "dry-run", "-f", file, "--as", "alice", "--as-group", "system:masters")
			if err != nil || strings.Contains(out, "INVALID") {
				t.Errorf("dry-run as alice of a collection that grows: %v\n%s", err, out)
			}
			sayAll(t, "dry-run as alice", out,
				"workers: Deployment plugin/pool-a-eu UPDATE",
				"-    kro.run/collection-size: \"2\"\n  +    kro.run/collection-size: \"3\"",
				"workers: Deployment plugin/pool-c-eu CREATE",
			)
			return ctx
		}).
		Assess("dry-run previews what kro-agent prunes, and a change to an RGD before it is applied", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, previewChangeRGD)
			c.waitRGDActive(t, "previewchange")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PreviewChange, metadata: {name: wide, namespace: %s}, spec: {extra: true}}", ns))
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PreviewChange, metadata: {name: narrow, namespace: %s}, spec: {extra: false}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "PreviewChange", ns, "wide", v1alpha1.InstanceActive)
			c.waitState(t, "kro.run/v1alpha1", "PreviewChange", ns, "narrow", v1alpha1.InstanceActive)
			dir, err := os.MkdirTemp("", "preview")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)

			// An instance whose includeWhen turns false: what it skips,
			// kro-agent deletes.
			file := dir + "/wide.yaml"
			writeFile(t, file, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PreviewChange, metadata: {name: wide, namespace: %s}, spec: {extra: false}}", ns))
			out, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !strings.Contains(out, "base: ConfigMap "+ns+"/wide-base UNCHANGED\n") ||
				!strings.Contains(out, "extra: ConfigMap "+ns+"/wide-extra DELETE\n  resource extra is skipped: includeWhen ${schema.spec.extra} is false\n") {
				t.Errorf("dry-run of an instance turning extra off: %v\n%s", err, out)
			}

			// The RGD changed: a new field with a default, read by base;
			// extra removed; a short name; a status field. Every instance
			// is planned with the new graph.
			changed := strings.Replace(strings.Replace(previewChangeRGD, "extra: boolean | default=true", "extra: boolean | default=true\n      level: string | default=high", 1),
				`data: {a: "1"}`, `data: {a: "1", level: "${schema.spec.level}"}`, 1)
			changed = strings.Replace(changed, "    kind: PreviewChange\n", "    kind: PreviewChange\n    shortNames: [pvc2]\n", 1)
			changed = strings.Replace(changed, `status: {a: "${base.data.a}"}`, `status: {a: "${base.data.a}", from: "${base.metadata.name}"}`, 1)
			changed = changed[:strings.Index(changed, "  - id: extra")]
			file = dir + "/rgd.yaml"
			writeFile(t, file, changed)
			out, err = kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns)
			for _, want := range []string{
				"PreviewChange " + ns + "/narrow:\nbase: ConfigMap " + ns + "/narrow-base UPDATE\n",
				"+  level: high\n",
				"PreviewChange " + ns + "/wide:\nbase: ConfigMap " + ns + "/wide-base UPDATE\n",
				"extra: ConfigMap " + ns + "/wide-extra DELETE\n  resource extra is no longer in the ResourceGraphDefinition\n",
				"PreviewChange " + ns + "/narrow UPDATE\n  its status, projected from the resources as kro-agent would leave them\n" +
					"  --- live\n  +++ desired\n  @@ -1,2 +1,3 @@\n   status:\n     a: \"1\"\n  +  from: narrow-base\n",
				"ResourceGraphDefinition previewchange: 2 instances of PreviewChange in namespace " + ns + ", 2 with changes (4 update, 1 delete)\n" +
					"The schema of PreviewChange changes:\n  spec.level was added (string, default \"high\")\n  status.from was added (string)\n" +
					"How kubectl names and prints PreviewChange changes:\n  short name pvc2 added\n",
			} {
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("dry-run of the changed RGD: %v; lacks %q:\n%s", err, want, out)
				}
			}
			if strings.Contains(out, "narrow-extra") {
				t.Errorf("dry-run of the changed RGD deletes what narrow never had:\n%s", out)
			}
			// Nothing was written.
			if rgd, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "previewchange"); err != nil || rgd.GetGeneration() != 1 {
				t.Errorf("the RGD after its dry run: %v, generation %d, want 1", err, rgd.GetGeneration())
			}
			if _, err := c.get(t, "v1", "ConfigMap", ns, "wide-extra"); err != nil {
				t.Errorf("dry-run deleted wide-extra: %v", err)
			}

			// A change that breaks the stored instances: the webhook's
			// warning, and the summary says kro-agent holds it.
			file = dir + "/breaking.yaml"
			writeFile(t, file, strings.Replace(changed, "extra: boolean | default=true\n", "", 1))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns)
			if err != nil || !strings.Contains(out, "Warning: the new schema would break the stored instances of PreviewChange (spec.extra was removed)") ||
				!strings.Contains(out, "; kro-agent does not apply this change, which breaks stored instances, without the annotation kro.run/allow-breaking-changes: \"true\": the plan is what it would do with it\n") ||
				!strings.Contains(out, "\n  spec.extra was removed (breaking)\n") {
				t.Errorf("dry-run of a breaking change: %v\n%s", err, out)
			}
			// The same as data, for a pipeline to refuse the change.
			out, err = kroStdout(t, cfg, "dry-run", "-f", file, "-n", ns, "-o", "json")
			var previews []plugin.RGDPreview
			if err == nil {
				err = json.Unmarshal([]byte(out), &previews)
			}
			if err != nil || len(previews) != 1 || !previews[0].Held || previews[0].Instances != 2 || len(previews[0].Plan) == 0 ||
				!slices.Contains(previews[0].SchemaChanges, graph.SchemaChange{Path: "spec.extra", Description: "spec.extra was removed", Breaking: true}) {
				t.Errorf("dry-run -o json of a breaking change: %v\n%s", err, out)
			}

			// What the webhook denies is the error; an RGD not in the
			// cluster is admitted by a dry-run create and names its CRD.
			writeFile(t, file, strings.Replace(previewChangeRGD, "kind: PreviewChange", "kind: PreviewChanged", 1))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns); err == nil || !strings.Contains(err.Error(), "the change to ResourceGraphDefinition previewchange is refused: ") || !strings.Contains(err.Error(), "kind is immutable") {
				t.Errorf("dry-run of a new kind: %v\n%s", err, out)
			}
			fresh := strings.Replace(strings.Replace(previewChangeRGD, "name: previewchange", "name: previewfresh", 1), "kind: PreviewChange", "kind: PreviewFresh", 1)
			writeFile(t, file, fresh)
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns); err != nil || out != "ResourceGraphDefinition previewfresh is new: applying it creates CustomResourceDefinition previewfreshes.kro.run, serving kro.run/v1alpha1 PreviewFresh; it has no instance to preview yet (give instances of it with -f too)\n" {
				t.Errorf("dry-run of an RGD not applied: %v\n%s", err, out)
			}
			if _, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "previewfresh"); !apierrors.IsNotFound(err) {
				t.Errorf("dry-run of a new RGD created it: %v", err)
			}

			// A directory with a new RGD, instances of it and the ConfigMap
			// its externalRef reads, none of them applied: the instances are
			// planned with that RGD, validated under its schema, and the
			// externalRef reads the ConfigMap as given.
			given := dir + "/given"
			if err := os.Mkdir(given, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, given+"/rgd.yaml", previewGivenRGD)
			writeFile(t, given+"/settings.yaml", "{apiVersion: v1, kind: ConfigMap, metadata: {name: given-settings}, data: {tier: gold}}")
			writeFile(t, given+"/instances.yaml", "{apiVersion: kro.run/v1alpha1, kind: PreviewGiven, metadata: {name: one}, spec: {size: 2}}\n---\n"+
				"{apiVersion: kro.run/v1alpha1, kind: PreviewGiven, metadata: {name: two}, spec: {sise: 9}}")
			out, err = kro(t, cfg, nil, "dry-run", "-f", given, "-n", ns)
			for _, want := range []string{
				"Warning: dry-run plans no object for what is neither an RGD nor an instance of one, given or in the cluster; an externalRef naming one reads it as given:\n  ConfigMap given-settings\n",
				"PreviewGiven " + ns + "/one:\nsettings: ConfigMap " + ns + "/given-settings UNCHANGED\n  externalRef: read as given (-f), never written\ncopy: ConfigMap " + ns + "/one-copy CREATE\n",
				"+  size: \"2\"\n  +  tier: gold\n",
				"PreviewGiven " + ns + "/two INVALID\n  the instance itself is refused: PreviewGiven.kro.run \"two\" is invalid: [spec.sise: Forbidden: field not declared in the schema; did you mean size?, spec.size: Required value",
				"ResourceGraphDefinition previewgiven is new (applying it creates CustomResourceDefinition previewgivens.kro.run, serving kro.run/v1alpha1 PreviewGiven): 2 instances of PreviewGiven given, 2 with changes (1 create, 1 invalid)\n",
			} {
				if !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(out, want) {
					t.Errorf("dry-run of a new RGD with instances: %v; lacks %q:\n%s", err, want, out)
				}
			}
			if _, err := c.get(t, "v1", "ConfigMap", ns, "one-copy"); !apierrors.IsNotFound(err) {
				t.Errorf("dry-run of a new RGD's instance created its ConfigMap: %v", err)
			}
			// An instance given beside a change to its RGD stands in for
			// the stored one of its name; the others are planned as stored.
			writeFile(t, dir+"/wide.yaml", fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: PreviewChange, metadata: {name: wide, namespace: %s}, spec: {level: low}}", ns))
			out, err = kro(t, cfg, nil, "dry-run", "-f", dir+"/rgd.yaml", "-f", dir+"/wide.yaml", "-n", ns)
			for _, want := range []string{
				"PreviewChange " + ns + "/narrow:\nbase: ConfigMap " + ns + "/narrow-base UPDATE\n",
				"PreviewChange " + ns + "/wide:\nbase: ConfigMap " + ns + "/wide-base UPDATE\n",
				"+  level: low\n",
				"+  level: high\n",
				"ResourceGraphDefinition previewchange: 2 instances of PreviewChange in namespace " + ns + ", 2 with changes",
			} {
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("dry-run of a changed RGD with an instance: %v; lacks %q:\n%s", err, want, out)
				}
			}
			if strings.Count(out, "PreviewChange "+ns+"/wide:") != 1 {
				t.Errorf("dry-run of a changed RGD plans the given instance and the stored one both:\n%s", out)
			}
			// A new RGD of a kind another defines is denied, as its
			// create would be.
			writeFile(t, file, strings.Replace(previewChangeRGD, "name: previewchange", "name: previewtwin", 1))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns); err == nil || !strings.Contains(err.Error(), "ResourceGraphDefinition previewtwin is refused: ") || !strings.Contains(err.Error(), "defined by ResourceGraphDefinition previewchange already") {
				t.Errorf("dry-run of a second RGD for a kind: %v\n%s", err, out)
			}
			// Two new RGDs, one using the other's kind, and an instance:
			// the webhook would deny the second in a dry run, as the first
			// is not applied, so it is checked offline, and its object of
			// the first's kind against the schema the first generates.
			writeFile(t, file, previewNestedRGDs+fmt.Sprintf("\n---\n{apiVersion: kro.run/v1alpha1, kind: PreviewOuter, metadata: {name: nest, namespace: %s}, spec: {size: 2}}", ns))
			out, err = kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns)
			for _, want := range []string{
				"Warning: ResourceGraphDefinition previewouter uses PreviewInner (served once ResourceGraphDefinition previewinner is applied): kro-agent's admission webhook cannot check it before that, so it was checked here as kubectl kro validate checks it",
				"PreviewOuter " + ns + "/nest:\ninner: PreviewInner " + ns + "/nest CREATE\n  PreviewInner is served once ResourceGraphDefinition previewinner is applied: checked against the schema it generates, not by a dry run\n",
				"+spec:\n  +  size: 2\n",
				"settings: ConfigMap " + ns + "/nest-settings PENDING\n",
				"ResourceGraphDefinition previewouter is new (applying it creates CustomResourceDefinition previewouters.kro.run, serving kro.run/v1alpha1 PreviewOuter): 1 instance of PreviewOuter given, 1 with changes (1 create, 1 pending)\n",
			} {
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("dry-run of an RGD using the kind of another given: %v; lacks %q:\n%s", err, want, out)
				}
			}
			writeFile(t, file, previewNestedRGDs+fmt.Sprintf("\n---\n{apiVersion: kro.run/v1alpha1, kind: PreviewOuter, metadata: {name: nest, namespace: %s}, spec: {size: 7}}", ns))
			if out, err := kro(t, cfg, nil, "dry-run", "-f", file, "-n", ns); !errors.Is(err, plugin.ErrInvalid) ||
				!strings.Contains(out, "inner: PreviewInner "+ns+"/nest INVALID\n  PreviewInner.kro.run \"nest\" is invalid: spec.size: Invalid value: 7: spec.size in body should be less than or equal to 5; spec.size is rendered from ${schema.spec.size}\n") {
				t.Errorf("dry-run of an object of a given RGD's kind that its schema refuses: %v\n%s", err, out)
			}
			for _, name := range []string{"previewinner", "previewouter"} {
				if _, err := c.get(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", name); !apierrors.IsNotFound(err) {
					t.Errorf("dry-run created ResourceGraphDefinition %s: %v", name, err)
				}
			}
			return ctx
		}).
		Assess("a resource depending on a skipped one is skipped with it, and says so", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, skipChainRGD)
			c.waitRGDActive(t, "skipchain")
			inst := fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: SkipChain, metadata: {name: dark, namespace: %s}}", ns)
			file := t.TempDir() + "/dark.yaml"
			writeFile(t, file, inst)
			preview, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil || !strings.Contains(preview, "first: ConfigMap SKIPPED\n  includeWhen ${schema.spec.enabled} is false") ||
				!strings.Contains(preview, "second: ConfigMap SKIPPED\n  it depends on first, which is skipped") {
				t.Errorf("dry-run of a chain left out: %v\n%s", err, preview)
			}
			c.apply(t, inst)
			c.waitState(t, "kro.run/v1alpha1", "SkipChain", ns, "dark", v1alpha1.InstanceActive)
			tree, err := kro(t, cfg, nil, "tree", "skipchain", "dark", "-n", ns)
			if err != nil || !regexp.MustCompile(`second +ConfigMap +- +Skipped +- +it depends on first, which is skipped`).MatchString(tree) {
				t.Errorf("tree of a chain left out: %v\n%s", err, tree)
			}
			return ctx
		}).
		Assess("shell completion offers the kinds, rgd where an RGD is taken, names, namespaces and contexts", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			complete := func(args ...string) []string {
				// What the shell asks: the word being completed comes last.
				flags := kroFlags(cfg)
				var out bytes.Buffer
				cmd := plugin.NewRootCommandWithFlags(flags, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard})
				cmd.SetArgs(append([]string{"__complete", "--kubeconfig", *flags.KubeConfig, "-n", ns}, args...))
				if err := cmd.ExecuteContext(ctx); err != nil {
					t.Fatalf("completing %v: %v", args, err)
				}
				// The last line is cobra's directive (:4, no file completion).
				return strings.Split(strings.TrimSpace(out.String()), "\n")
			}
			if got := complete("why-not-ready", ""); !slices.Contains(got, "webapp") || !slices.Contains(got, "rgd") {
				t.Errorf("why-not-ready KIND offers %v, want the served kinds and rgd", got)
			}
			if got := complete("tree", ""); !slices.Contains(got, "webapp") || slices.Contains(got, "rgd") {
				t.Errorf("tree KIND offers %v, want the served kinds and not rgd (it has no tree)", got)
			}
			if got := complete("explain-conditions", "rgd", "web"); !slices.Contains(got, "webapp") {
				t.Errorf("explain-conditions rgd NAME offers %v, want webapp", got)
			}
			if got := complete("tree", "webapp/re"); !slices.Contains(got, "webapp/ready") {
				t.Errorf("tree KIND/NAME offers %v, want webapp/ready", got)
			}
			if got := complete("status", "--namespace", ns[:len(ns)-1]); !slices.Contains(got, ns) || slices.Contains(got, "default") {
				t.Errorf("status --namespace offers %v, want the namespaces that start with %q", got, ns[:len(ns)-1])
			}
			raw, err := kroFlags(cfg).ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				t.Fatal(err)
			}
			if got := complete("tree", "--context", ""); !slices.Contains(got, raw.CurrentContext) {
				t.Errorf("tree --context offers %v, want the kubeconfig's context %q", got, raw.CurrentContext)
			}
			return ctx
		}).
		Assess("kubectl itself completes kubectl kro through the kubectl_complete-kro shipped beside it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// What make build and the release archives put on PATH: the
			// plugin and its completion script, side by side.
			dir := t.TempDir()
			build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "kubectl-kro"), "./cmd/kubectl-kro")
			build.Dir = filepath.Join("..", "..")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("building kubectl-kro: %v\n%s", err, out)
			}
			script, err := os.ReadFile(filepath.Join("..", "..", "cmd", "kubectl-kro", "kubectl_complete-kro"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "kubectl_complete-kro"), script, 0o755); err != nil {
				t.Fatal(err)
			}
			bin, err := localcluster.BinDir(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// kubectl drops its own flags before asking a plugin, so the
			// kubeconfig comes from the environment, as in a user's shell.
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "__complete", "kro", "tree", "webapp", "-n", ns, "--cache-dir", kubeCacheDir, "re")
			cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cfg.KubeconfigFile())
			out, err := cmd.Output()
			if got := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || !slices.Contains(got, "ready") || got[len(got)-1] != ":4" {
				t.Errorf("kubectl __complete kro tree webapp re: %v, offered %q, want ready and no file completion (:4)", err, got)
			}
			// The binary takes kubectl's -v, and logs its requests at 6.
			cmd = exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "kro", "tree", "webapp", "ready", "-n", ns, "--cache-dir", kubeCacheDir, "-v=6")
			cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cfg.KubeconfigFile())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			instance := fmt.Sprintf(`verb="GET" url="%s/apis/kro.run/v1alpha1/namespaces/%s/webapps/ready"`, strings.TrimSuffix(cfg.Client().RESTConfig().Host, "/"), ns)
			if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "WebApp/ready") || !strings.Contains(stderr.String(), instance) {
				t.Errorf("kubectl kro tree -v=6: %v, want the tree on stdout and the GET of the instance logged on stderr (%s)\nstdout:\n%s\nstderr:\n%s", err, instance, out, stderr.String())
			}
			return ctx
		}).
		Assess("tree nests each resource under the one it depends on", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.apply(t, forkRGD)
			c.waitRGDActive(t, "fork")
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: Fork, metadata: {name: split, namespace: %s}}", ns))
			c.waitState(t, "kro.run/v1alpha1", "Fork", ns, "split", v1alpha1.InstanceActive)
			tree, err := kro(t, cfg, nil, "tree", "fork", "split", "-n", ns)
			if err != nil || !regexp.MustCompile(`(?m)^├─ left .*\n│  └─ leaf .*\n└─ right `).MatchString(tree) {
				t.Errorf("tree of a fork: %v\n%s", err, tree)
			}
			// -o json keeps the topological order why-not-ready walks.
			out, err := kro(t, cfg, nil, "tree", "fork", "split", "-n", ns, "-o", "json")
			var got struct {
				Resources []struct{ NodeID string } `json:"resources"`
			}
			if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got.Resources) != 3 || got.Resources[1].NodeID != "right" {
				t.Errorf("tree -o json of a fork: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("a mistyped kind is matched to an RGD's", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"tree", "webap", "ready"}, `the server has no kind "webap": did you mean webapp?`},
				{[]string{"why-not-ready", "webap/ready"}, `the server has no kind "webap": did you mean webapp?`},
				{[]string{"status", "workerpol"}, `the server has no kind "workerpol": did you mean workerpool?`},
			} {
				if _, err := kro(t, cfg, nil, append(tc.args, "-n", ns)...); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
				}
			}
			// A name without its kind: the kind whose instance it names.
			for _, args := range [][]string{{"tree", "ready"}, {"status", "ready"}} {
				if _, err := kro(t, cfg, nil, append(args, "-n", ns)...); err == nil ||
					err.Error() != `the server has no kind "ready", but namespace `+ns+` has a webapp of that name: give its kind before it, webapp ready` {
					t.Errorf("%s of an instance's name alone: %v", args[0], err)
				}
			}
			// A kind without a name: the names there are to give.
			if _, err := kro(t, cfg, nil, "tree", "webapp", "-n", ns); err == nil ||
				!strings.Contains(err.Error(), "which webapp? give its name too, as in kubectl kro tree webapp ") || !strings.Contains(err.Error(), "(namespace "+ns+" has ") {
				t.Errorf("tree of a kind without a name: %v", err)
			}
			if _, err := kro(t, cfg, nil, "tree", "webap", "-n", ns); err == nil || !strings.Contains(err.Error(), `the server has no kind "webap": did you mean webapp?`) {
				t.Errorf("tree of a mistyped kind without a name: %v", err)
			}
			// RGDs are named to the commands that take one, not to tree.
			if _, err := kro(t, cfg, nil, "why-not-ready", "rgd"); err == nil || !strings.Contains(err.Error(), "which rgd? give its name too, as in kubectl kro why-not-ready rgd ") {
				t.Errorf("why-not-ready rgd without a name: %v", err)
			}
			if _, err := kro(t, cfg, nil, "tree", "rgd"); err == nil || !strings.Contains(err.Error(), "tree takes an instance, not a ResourceGraphDefinition") {
				t.Errorf("tree rgd without a name: %v", err)
			}
			// Nothing near: no suggestion.
			if _, err := kro(t, cfg, nil, "tree", "nosuchkindatall", "x", "-n", ns); err == nil || strings.Contains(err.Error(), "did you mean") {
				t.Errorf("a kind far from every RGD's: %v", err)
			}
			// A kind an RGD declares but the server does not serve (the
			// RGD never compiled) is no suggestion: it would fail alike.
			c := newClients(t, cfg)
			c.applyUnvalidated(t, "{apiVersion: kro.run/v1alpha1, kind: ResourceGraphDefinition, metadata: {name: unserved-typo}, spec: {schema: {apiVersion: v1alpha1, kind: Unserved, spec: {name: string}}, resources: [{id: cm, template: {apiVersion: v1, kind: ConfigMap, metadata: {name: '${schema.spec.nope}'}}}]}}")
			c.waitAgentWebhooks(t)
			defer c.delete(t, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "unserved-typo")
			for _, typed := range []string{"unserved", "unservd"} {
				want := fmt.Sprintf("the server has no kind %q (kubectl api-resources lists the kinds it serves)", typed)
				if _, err := kro(t, cfg, nil, "tree", typed, "x", "-n", ns); err == nil || err.Error() != want {
					t.Errorf("tree %s: got %v, want %s", typed, err, want)
				}
			}
			return ctx
		}).
		Assess("an instance or RGD not found is looked for in other namespaces, and among near names", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"tree", "webapp", "readdy", "-n", ns}, `webapps.kro.run "readdy" not found: did you mean ready?`},
				{[]string{"why-not-ready", "webapp/ready", "-n", "default"}, fmt.Sprintf(`webapps.kro.run "ready" not found: there is one in namespace %s (add -n %s)`, ns, ns)},
				{[]string{"explain-conditions", "webapp", "nothing-like-it", "-n", ns}, `webapps.kro.run "nothing-like-it" not found`},
				{[]string{"status", "webapp", "ready", "-n", "default"}, fmt.Sprintf(`webapps.kro.run "ready" not found: there is one in namespace %s (add -n %s)`, ns, ns)},
				// An RGD by name, likewise among the RGDs.
				{[]string{"why-not-ready", "rgd", "webap"}, `resourcegraphdefinitions.kro.run "webap" not found: did you mean webapp?`},
				{[]string{"status", "rgd", "wrokers"}, `resourcegraphdefinitions.kro.run "wrokers" not found: did you mean workers?`},
				{[]string{"explain-conditions", "rgd/nothing-like-it"}, `resourcegraphdefinitions.kro.run "nothing-like-it" not found`},
			} {
				_, err := kro(t, cfg, nil, tc.args...)
				if err == nil || err.Error() != tc.want {
					t.Errorf("%q: got %v, want %s", tc.args, err, tc.want)
				}
			}
			return ctx
		}).
		Assess("version names the plugin's, the API server's and the running agent's", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			out, err := kro(t, cfg, nil, "version")
			want := fmt.Sprintf("Client Version: %s\nServer Version: v1.36.", version.Version)
			if err != nil || !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\nAgent Version: "+version.Version+"\n") {
				t.Errorf("version: %v\n%s\nwant it to start with %q and end with the agent's version %s", err, out, want, version.Version)
			}
			out, err = kro(t, cfg, nil, "version", "-o", "json")
			var v plugin.Versions
			if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.AgentVersion != version.Version || !strings.HasPrefix(v.ServerVersion, "v1.36.") {
				t.Errorf("version -o json: %v\n%s", err, out)
			}
			// A user who may not read webhook configurations learns why the
			// agent's version is missing; the rest is still printed.
			out, err = kro(t, cfg, nil, "version", "--as", "e2e-no-permissions")
			if err != nil || !strings.Contains(out, "Server Version: v1.36.") ||
				!strings.Contains(out, "Agent Version: unknown: not allowed to get ValidatingWebhookConfiguration kro-agent") {
				t.Errorf("version without permission to read webhook configurations: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("status lists instances", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			out, err := kro(t, cfg, nil, "status", "-n", ns)
			if err != nil {
				t.Fatal(err)
			}
			sayAll(t, "status", out, "WebApp", "ready", "WorkerPool", "pool", "ACTIVE")
			if strings.Contains(out, "NAMESPACE") {
				t.Errorf("status of one namespace has a NAMESPACE column, as kubectl has only with -A:\n%s", out)
			}
			all, err := kro(t, cfg, nil, "status", "-A")
			if err != nil || !strings.HasPrefix(all, "NAMESPACE") || !strings.Contains(all, ns) {
				t.Errorf("status -A: %v\n%s", err, all)
			}
			if _, err := kro(t, cfg, nil, "status", "configmaps", "-n", ns); err == nil || !strings.Contains(err.Error(), "no ResourceGraphDefinition serves v1 ConfigMap") {
				t.Errorf("status of a kind no RGD serves: want an error, got %v", err)
			}
			one, err := kro(t, cfg, nil, "status", "workerpool/pool", "-n", ns)
			if err != nil || !strings.Contains(one, "pool") || strings.Contains(one, "WebApp") {
				t.Errorf("status of one instance as KIND/NAME: %v\n%s", err, one)
			}
			// --not-ready keeps what to look at: the blocked instance, not
			// the ready ones; and says so when all are Ready.
			if out, err := kro(t, cfg, nil, "status", "-n", ns, "--not-ready"); err != nil ||
				!regexp.MustCompile(`(?m)^Blocked +stuck +[A-Z_]+ +False `).MatchString(out) || strings.Contains(out, "WorkerPool") || strings.Contains(out, "ACTIVE") {
				t.Errorf("status --not-ready: %v\n%s", err, out)
			}
			if out, err := kro(t, cfg, nil, "status", "rgd", "workers", "-n", ns, "--not-ready"); err != nil || out != "No instances found that are not Ready in namespace "+ns+".\n" {
				t.Errorf("status --not-ready of ready instances: %v\n%s", err, out)
			}
			// That is said on standard error, as kubectl get says it: a
			// pipeline reading the table reads no line.
			if out, err := kroStdout(t, cfg, "status", "rgd", "workers", "-n", ns, "--not-ready"); err != nil || out != "" {
				t.Errorf("status --not-ready of ready instances printed on standard output: %v\n%q", err, out)
			}
			// --no-headers leaves one line per instance, for scripts.
			if lines, err := kro(t, cfg, nil, "status", "rgd", "workers", "-n", ns, "--no-headers"); err != nil || !strings.HasPrefix(lines, "WorkerPool ") || strings.Count(lines, "\n") != 1 {
				t.Errorf("status --no-headers: %v\n%s", err, lines)
			}
			// -o name gives what kubectl takes back.
			if names, err := kro(t, cfg, nil, "status", "-n", ns, "-o", "name"); err != nil || !strings.Contains(names, "workerpool.kro.run/pool\n") || !strings.Contains(names, "webapp.kro.run/ready\n") {
				t.Errorf("status -o name: %v\n%s", err, names)
			} else if out, err := kubectl(t, cfg, "", "get", "-n", ns, "workerpool.kro.run/pool", "-o", "name"); err != nil || out != "workerpool.kro.run/pool\n" {
				t.Errorf("kubectl get of what status -o name printed: %v\n%s", err, out)
			}
			// -o wide adds the RGD and the Ready condition's message.
			if wide, err := kro(t, cfg, nil, "status", "workerpool/pool", "-n", ns, "-o", "wide"); err != nil ||
				!regexp.MustCompile(`(?m)^KIND +NAME +STATE +READY +REASON +AGE +RGD +MESSAGE\nWorkerPool +pool +ACTIVE +True +- +\S+ +workers +-\n$`).MatchString(wide) {
				t.Errorf("status -o wide: %v\n%s", err, wide)
			}
			ofRGD, err := kro(t, cfg, nil, "status", "rgd", "workers", "-n", ns)
			if err != nil || !strings.Contains(ofRGD, "pool") || strings.Contains(ofRGD, "WebApp") {
				t.Errorf("status of one RGD's instances: %v\n%s", err, ofRGD)
			}
			// -l keeps the instances whose labels match, as kubectl get -l.
			c := newClients(t, cfg)
			if _, err := c.resource(t, "kro.run/v1alpha1", "WorkerPool").Namespace(ns).Patch(ctx, "pool", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"platform"}}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
				t.Fatal(err)
			}
			labelled, err := kro(t, cfg, nil, "status", "-n", ns, "-l", "team=platform")
			if err != nil || !strings.Contains(labelled, "pool") || strings.Contains(labelled, "WebApp") {
				t.Errorf("status -l team=platform: %v\n%s", err, labelled)
			}
			if none, err := kro(t, cfg, nil, "status", "webapp", "-n", ns, "-l", "team=platform"); err != nil || !strings.Contains(none, "No instances found in namespace "+ns+".") {
				t.Errorf("status of a kind none of whose instances match -l: %v\n%s", err, none)
			}
			if _, err := kro(t, cfg, nil, "status", "workerpool/pool", "-n", ns, "-l", "team=platform"); err == nil || !strings.Contains(err.Error(), "NAME and --selector cannot be given together") {
				t.Errorf("status of one instance with -l: want an error, got %v", err)
			}
			if _, err := kro(t, cfg, nil, "status", "-n", ns, "-l", "team in (platform"); err == nil || !strings.Contains(err.Error(), `--selector "team in (platform"`) {
				t.Errorf("status with a selector that does not parse: want an error naming it, got %v", err)
			}
			// --chunk-size lists as kubectl get does: the same rows, a
			// LIST request per chunk.
			c.apply(t, webapp(ns, "chunked", ", replicas: 0"))
			listsOf := func(chunkSize string) ([]plugin.InstanceStatusRow, int) {
				flags := kroFlags(cfg)
				var lists atomic.Int64
				flags.WrapConfigFn = countRequestsWhere(&lists, func(r *http.Request) bool {
					return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/"+ns+"/webapps")
				})
				var out bytes.Buffer
				if err := runKro(ctx, flags, &out, "status", "webapp", "-n", ns, "-o", "json", "--chunk-size", chunkSize); err != nil {
					t.Fatalf("status --chunk-size %s: %v\n%s", chunkSize, err, out.String())
				}
				var rows []plugin.InstanceStatusRow
				if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
					t.Fatal(err)
				}
				return rows, int(lists.Load())
			}
			whole, oneList := listsOf("0")
			chunked, chunkLists := listsOf("1")
			var names []string
			for _, r := range chunked {
				names = append(names, r.Name)
			}
			if len(whole) < 2 || oneList != 1 || chunkLists != len(whole) || !slices.Contains(names, "chunked") {
				t.Errorf("status of %d WebApps took %d LIST in one request and %d in chunks of one (%v), want 1 and one per instance", len(whole), oneList, chunkLists, names)
			}
			c.delete(t, "kro.run/v1alpha1", "WebApp", ns, "chunked")
			if _, err := kro(t, cfg, nil, "status", "webapp", "-n", ns, "--chunk-size", "-1"); err == nil || !strings.Contains(err.Error(), "--chunk-size") {
				t.Errorf("status --chunk-size -1: want an error naming the flag, got %v", err)
			}
			if _, err := kro(t, cfg, nil, "tree", "rgd", "webapp"); err == nil || !strings.Contains(err.Error(), "ResourceGraphDefinition webapp is not an instance: it serves WebApp") {
				t.Errorf("tree of an RGD: want an error naming the kind it serves, got %v", err)
			}
			if out, err := kro(t, cfg, nil, "why-not-ready", "rgd/webapp"); err != nil || !strings.Contains(out, "ResourceGraphDefinition webapp is Active") {
				t.Errorf("why-not-ready of an Active RGD: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("status --watch redraws when an instance changes, and reads nothing while none does", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// Only the instance this test creates matches: the others in
			// the namespace may still be changing.
			table := startKro(ctx, cfg, "status", "workerpool", "-n", ns, "-l", "watched=yes", "--watch", "--watch-interval", "200ms")
			yamlDocs := startKro(ctx, cfg, "status", "workerpool", "-n", ns, "-l", "watched=yes", "--watch", "-o", "yaml")
			names := startKro(ctx, cfg, "status", "workerpool", "-n", ns, "-l", "watched=yes", "--watch", "-o", "name")
			eventually(t, 10*time.Second, "the first table, and an empty list in YAML", func() (bool, string) {
				return strings.Contains(table.out.String(), "No instances found in namespace "+ns+".") && strings.HasPrefix(yamlDocs.out.String(), "[]\n"), table.out.String() + yamlDocs.out.String()
			})
			// Once its watch has started, nothing changing costs no request
			// (reading at every interval would list the kind five times a
			// second).
			table.quiet(t)
			c := newClients(t, cfg)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: watched, namespace: %s, labels: {watched: \"yes\"}}, spec: {queues: [a]}}", ns))
			eventually(t, 30*time.Second, "redraws that list the new instance, then its state ACTIVE", func() (bool, string) {
				last := table.lastFrame()
				return strings.Contains(last, "watched") && strings.Contains(last, "ACTIVE"), table.out.String()
			})
			eventually(t, 10*time.Second, "YAML documents one after another, the last with the instance ACTIVE", func() (bool, string) {
				s := yamlDocs.out.String()
				last := s[strings.LastIndex(s, "---\n")+1:]
				return strings.Contains(last, "name: watched") && strings.Contains(last, "state: ACTIVE"), s
			})
			// -o name prints the names again when they change, not when a
			// state does: nothing before the instance, then its name once.
			// Its watch is its own, and may see the instance after the
			// others did.
			eventually(t, 10*time.Second, "-o name printing the new instance", func() (bool, string) {
				return names.out.String() != "", names.out.String()
			})
			if got := names.out.String(); got != "workerpool.kro.run/watched\n" {
				t.Errorf("status --watch -o name printed %q", got)
			}
			// One instance, and the instances of one RGD, are followed
			// the same way.
			one := startKro(ctx, cfg, "status", "workerpool/watched", "-n", ns, "--watch")
			ofRGD := startKro(ctx, cfg, "status", "rgd", "workers", "-n", ns, "--watch")
			for _, w := range []*backgroundKro{one, ofRGD} {
				eventually(t, 10*time.Second, w.what+" to show the instance", func() (bool, string) {
					return strings.Contains(w.lastFrame(), "watched"), w.out.String()
				})
				w.quiet(t)
			}
			for _, w := range []*backgroundKro{table, yamlDocs, names, one, ofRGD} {
				w.stop(t)
			}
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "watched")
			return ctx
		}).
		Assess("status --watch without permission to watch reads at its interval, and says so", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			const user = "status-lister"
			c := newClients(t, cfg)
			c.grant(t, user, "{apiGroups: [kro.run], resources: [resourcegraphdefinitions, workerpools], verbs: [get, list]}")
			eventually(t, 10*time.Second, "the user's permission to list", func() (bool, string) {
				out, err := kro(t, cfg, nil, "status", "workerpool", "-n", ns, "--as", user)
				return err == nil, fmt.Sprint(out, err)
			})
			w := startKro(ctx, cfg, "status", "workerpool", "-n", ns, "-l", "watched=lister", "--watch", "--watch-interval", "200ms", "--as", user)
			eventually(t, 10*time.Second, "a note that it cannot watch", func() (bool, string) {
				s := w.out.String()
				return strings.Contains(s, "No instances found in namespace "+ns+".") && strings.Contains(s, "cannot watch workerpools.kro.run, reading again at --watch-interval instead"), s
			})
			// Created once the refused watch has stopped retrying: only
			// reading again finds it.
			time.Sleep(2 * time.Second)
			c.apply(t, fmt.Sprintf("{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: listed, namespace: %s, labels: {watched: lister}}, spec: {queues: [a]}}", ns))
			eventually(t, 30*time.Second, "a redraw that lists the new instance", func() (bool, string) {
				return strings.Contains(w.lastFrame(), "listed"), w.out.String()
			})
			w.stop(t)
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "listed")
			return ctx
		}).
		Assess("tree --watch draws the tree again as it changes, and reads nothing while it does not", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			pool := "{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: treewatched, namespace: %s}, spec: {queues: %s}}"
			c.apply(t, fmt.Sprintf(pool, ns, "[a]"))
			c.waitState(t, "kro.run/v1alpha1", "WorkerPool", ns, "treewatched", v1alpha1.InstanceActive)
			text := startKro(ctx, cfg, "tree", "workerpool/treewatched", "-n", ns, "--watch", "--watch-interval", "200ms")
			yamlDocs := startKro(ctx, cfg, "tree", "workerpool", "treewatched", "-n", ns, "--watch", "-o", "yaml")
			eventually(t, 10*time.Second, "the first tree, as text and in YAML", func() (bool, string) {
				return strings.Contains(text.lastFrame(), "Deployment/treewatched-a-eu") && strings.Contains(yamlDocs.out.String(), "name: treewatched-a-eu"), text.out.String() + yamlDocs.out.String()
			})
			text.quiet(t)
			yamlDocs.quiet(t)

			// A new queue is a new item of the collection, ready once its
			// Deployment is available.
			c.apply(t, fmt.Sprintf(pool, ns, "[a, b]"))
			eventually(t, 30*time.Second, "a tree with the new item ready", func() (bool, string) {
				for _, line := range strings.Split(text.lastFrame(), "\n") {
					if strings.Contains(line, "workers[1]") && strings.Contains(line, "Deployment/treewatched-b-eu") && strings.Contains(line, " Ready ") {
						return true, ""
					}
				}
				return false, text.out.String()
			})
			eventually(t, 10*time.Second, "YAML documents one after another, the last with the new item", func() (bool, string) {
				s := yamlDocs.out.String()
				return strings.Count(s, "---\n") >= 1 && strings.Contains(s[strings.LastIndex(s, "---\n"):], "name: treewatched-b-eu"), s
			})
			text.quiet(t)

			// Suspended, the instance is written no more: a resource
			// deleted now changes only the list it was read from.
			suspend := func(value string) {
				patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"kro.run/reconcile":%s}}}`, value)
				if _, err := c.resource(t, "kro.run/v1alpha1", "WorkerPool").Namespace(ns).Patch(ctx, "treewatched", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			suspend(`"suspended"`)
			eventually(t, 10*time.Second, "the instance's status to say it is suspended", func() (bool, string) {
				cond := condition(c.mustGet(t, "kro.run/v1alpha1", "WorkerPool", ns, "treewatched"), "ResourcesReady")
				return cond != nil && cond.Reason == "Suspended", fmt.Sprint(cond)
			})
			text.quiet(t)
			c.delete(t, "apps/v1", "Deployment", ns, "treewatched-b-eu")
			eventually(t, 10*time.Second, "a tree with the deleted item missing", func() (bool, string) {
				for _, line := range strings.Split(text.lastFrame(), "\n") {
					if strings.Contains(line, "workers[1]") && strings.Contains(line, "Missing") {
						return true, ""
					}
				}
				return false, text.out.String()
			})
			suspend("null")
			for _, w := range []*backgroundKro{text, yamlDocs} {
				w.stop(t)
			}

			// Deleting the instance is told, and the watch goes on, as
			// kubectl get --watch does: the instance made again is drawn.
			gone := startKro(ctx, cfg, "tree", "workerpool/treewatched", "-n", ns, "--watch", "--watch-interval", "200ms")
			eventually(t, 10*time.Second, "the first tree", func() (bool, string) {
				return strings.Contains(gone.lastFrame(), "treewatched-b-eu"), gone.out.String()
			})
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "treewatched")
			deleted := fmt.Sprintf("WorkerPool %s/treewatched is deleted; its tree is drawn again if it is created again", ns)
			eventually(t, 30*time.Second, "the tree to say the instance is deleted", func() (bool, string) {
				return strings.TrimSpace(gone.lastFrame()) == deleted, gone.out.String()
			})
			c.apply(t, fmt.Sprintf(pool, ns, "[a]"))
			eventually(t, 30*time.Second, "the tree of the instance made again", func() (bool, string) {
				return strings.Contains(gone.lastFrame(), "Deployment/treewatched-a-eu"), gone.out.String()
			})
			gone.stop(t)
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "treewatched")
			return ctx
		}).
		Assess("why-not-ready --watch says what the instance waits for until it is Ready, then ends", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			pool := "{apiVersion: kro.run/v1alpha1, kind: WorkerPool, metadata: {name: waited, namespace: %s, annotations: {kro.run/reconcile: %s}}, spec: {queues: [a]}}"
			c.apply(t, fmt.Sprintf(pool, ns, "suspended"))
			waiting := startKro(ctx, cfg, "why-not-ready", "workerpool/waited", "-n", ns, "--watch", "--watch-interval", "200ms")
			eventually(t, 10*time.Second, "the diagnosis of the suspended instance", func() (bool, string) {
				return strings.Contains(waiting.lastFrame(), "WorkerPool/waited is suspended"), waiting.out.String()
			})
			waiting.quiet(t)
			select {
			case err := <-waiting.done:
				t.Fatalf("why-not-ready --watch ended while the instance is not Ready: %v\n%s", err, waiting.out.String())
			default:
			}
			c.apply(t, fmt.Sprintf(pool, ns, "active"))
			select {
			case err := <-waiting.done:
				if err != nil || !strings.Contains(waiting.lastFrame(), "WorkerPool "+ns+"/waited is Ready") {
					t.Errorf("why-not-ready --watch ended with %v\n%s", err, waiting.out.String())
				}
			case <-time.After(30 * time.Second):
				t.Errorf("why-not-ready --watch went on after the instance turned Ready\n%s", waiting.out.String())
				waiting.cancel()
			}
			// Ready already, it prints that and ends at once.
			if out, err := kro(t, cfg, nil, "why-not-ready", "workerpool/waited", "-n", ns, "--watch", "-o", "json"); err != nil || !strings.Contains(out, `"ready": true`) {
				t.Errorf("why-not-ready --watch of a Ready instance: %v\n%s", err, out)
			}
			c.delete(t, "kro.run/v1alpha1", "WorkerPool", ns, "waited")
			return ctx
		}).
		Assess("tree's API requests do not grow with unrelated objects", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			// Discovery and OpenAPI reads are left out: they do not depend
			// on objects, and the OpenAPI index is read again when a run
			// outlasts its second (as one under the race detector can).
			requests := func() []string {
				var mu sync.Mutex
				var made []string
				flags := kroFlags(cfg)
				flags.WrapConfigFn = countRequestsWhere(new(atomic.Int64), func(r *http.Request) bool {
					if r.URL.Path == "/api" || r.URL.Path == "/apis" || strings.HasPrefix(r.URL.Path, "/openapi/") {
						return false
					}
					mu.Lock()
					defer mu.Unlock()
					made = append(made, r.Method+" "+r.URL.RequestURI())
					return true
				})
				var out bytes.Buffer
				if err := runKro(ctx, flags, &out, "tree", "webapp", "ready", "-n", ns); err != nil {
					t.Fatalf("%v\n%s", err, out.String())
				}
				return made
			}
			before := requests()
			if !slices.ContainsFunc(before, func(r string) bool { return strings.Contains(r, "labelSelector=") }) {
				t.Fatalf("tree listed no members by label:\n%s", strings.Join(before, "\n"))
			}
			c := newClients(t, cfg)
			namespace(t, c, "noise")
			createNoise(t, c, "noise", 3000)
			after := requests()
			t.Logf("tree made %d requests beside discovery before and %d after 3000 unrelated ConfigMaps", len(before), len(after))
			if len(after) != len(before) {
				t.Errorf("requests grew with unrelated objects: %d -> %d\nbefore:\n%s\nafter:\n%s", len(before), len(after),
					strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// createNoise creates n unrelated ConfigMaps with a few parallel clients.
func createNoise(t testing.TB, c *clients, ns string, n int) {
	t.Helper()
	cms := c.resource(t, "v1", "ConfigMap").Namespace(ns)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("noise-%d", i)}, "data": map[string]any{"k": "v"}}
				if _, err := cms.Create(context.Background(), toUnstructured(cm), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// One RGD composing another: its resource is an instance of the other's
// kind. tree shows what that instance manages under it, and why-not-ready
// points at it as an instance to follow.
func TestPluginFollowsNestedInstances(t *testing.T) {
	const ns = "nested"
	const inner = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: databases}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Database
    spec: {ready: boolean | default=false}
  resources:
  - id: config
    readyWhen: ["${config.data.ready == 'true'}"]
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-db"}
      data: {ready: "${string(schema.spec.ready)}"}
`
	const outer = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: services}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Service
    group: nested.example.com
    spec: {ready: boolean | default=false}
  resources:
  - id: database
    readyWhen: ["${database.status.state == 'ACTIVE'}"]
    template:
      apiVersion: kro.run/v1alpha1
      kind: Database
      metadata: {name: "${schema.metadata.name}"}
      spec: {ready: "${schema.spec.ready}"}
  - id: settings
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-settings"}
      data: {db: "${database.metadata.name}"}
`
	f := features.New("an RGD composing another").
		Assess("tree shows the inner instance's resources, why-not-ready points at it", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, inner)
			c.waitRGDActive(t, "databases")
			c.apply(t, outer)
			c.waitRGDActive(t, "services")
			c.waitInstanceWebhook(t, "nested.example.com/v1alpha1", "Service", ns)
			c.apply(t, "{apiVersion: nested.example.com/v1alpha1, kind: Service, metadata: {name: shop, namespace: "+ns+"}}")
			eventually(t, 30*time.Second, "the inner instance's ConfigMap", func() (bool, string) {
				_, err := c.get(t, "v1", "ConfigMap", ns, "shop-db")
				return err == nil, fmt.Sprint(err)
			})

			out, err := kro(t, cfg, nil, "tree", "services.nested.example.com", "shop", "-n", ns)
			if err != nil {
				t.Fatalf("tree: %v\n%s", err, out)
			}
			// The inner instance's ConfigMap, one level below it.
			if !regexp.MustCompile(`(?m)^└─ database +Database/shop .*\n   ├─ config +ConfigMap/shop-db +nested +NotReady .*\n   └─ settings +ConfigMap/shop-settings `).MatchString(out) {
				t.Errorf("tree does not show the inner instance's ConfigMap under it:\n%s", out)
			}
			out, err = kro(t, cfg, nil, "tree", "services.nested.example.com", "shop", "-n", ns, "-o", "json")
			if err != nil || !strings.Contains(out, `"nodeID": "database/config"`) {
				t.Errorf("tree -o json does not name the inner node by its path: %v\n%s", err, out)
			}

			out, err = kro(t, cfg, nil, "why-not-ready", "services.nested.example.com", "shop", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "kubectl kro why-not-ready database shop -n "+ns) {
				t.Errorf("why-not-ready does not point at the inner instance: %v\n%s", err, out)
			}
			out, err = kro(t, cfg, nil, "why-not-ready", "database", "shop", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "resource config (ConfigMap shop-db) is not ready") ||
				!strings.Contains(out, "What to do: look at the resource (kubectl describe configmap shop-db -n "+ns+"); its dependents wait for it") {
				t.Errorf("why-not-ready of the inner instance: %v\n%s", err, out)
			}
			return ctx
		}).
		Assess("a deletion held inside the inner instance: why-not-ready follows it to the finalizer", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := newClients(t, cfg)
			c.hold(t, "v1", "ConfigMap", ns, "shop-db")
			c.delete(t, "nested.example.com/v1alpha1", "Service", ns, "shop")
			eventually(t, 30*time.Second, "why-not-ready to point from the outer instance at the inner one", func() (bool, string) {
				out, _ := kro(t, cfg, nil, "why-not-ready", "services.nested.example.com", "shop", "-n", ns)
				return strings.Contains(out, "resource database is an instance of ResourceGraphDefinition databases in turn, deleting its own resources first: kubectl kro why-not-ready database shop -n "+ns+" follows it"), out
			})
			out, err := kro(t, cfg, nil, "why-not-ready", "database", "shop", "-n", ns)
			if !errors.Is(err, plugin.ErrNotReady) || !strings.Contains(out, "whoever owns the finalizers e2e.kro.run/hold has not released ConfigMap "+ns+"/shop-db") {
				t.Errorf("why-not-ready of the inner instance being deleted: %v\n%s", err, out)
			}
			c.release(t, "v1", "ConfigMap", ns, "shop-db")
			eventually(t, 30*time.Second, "both instances to be gone", func() (bool, string) {
				_, e1 := c.get(t, "nested.example.com/v1alpha1", "Service", ns, "shop")
				_, e2 := c.get(t, "kro.run/v1alpha1", "Database", ns, "shop")
				return e1 != nil && e2 != nil, fmt.Sprintf("outer: %v; inner: %v", e1, e2)
			})
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

// dry-run follows the agent's pass: what a resource reads from another
// is rendered from that one as the agent's apply would leave it, and what
// depends on a resource not ready once applied waits for it. Applied,
// the instance then does what the preview said.
func TestDryRunFollowsTheAgentsPass(t *testing.T) {
	const ns = "dry-run-pass"
	const rgd = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gated-chain}
spec:
  schema:
    apiVersion: v1alpha1
    kind: GatedChain
    spec: {ready: string | default="yes"}
    status:
      joined: "${joined.data.v}"
      conditions: [{type: Joined, status: "${joined.data.v.endsWith('-other')}"}]
  resources:
  - id: gate
    readyWhen: ['${gate.data.ready == "yes"}']
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-gate"}
      data: {ready: "${schema.spec.ready}"}
  - id: other
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-other"}
      data: {v: "-other"}
  - id: joined
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.metadata.name}-joined"}
      data: {v: "${gate.data.ready + other.data.v}"}
`
	f := features.New("dry-run as the agent's pass").
		Assess("a change to a resource others read, which leaves it not ready", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := agentIn(t, cfg, ns)
			c.apply(t, rgd)
			c.waitRGDActive(t, "gated-chain")
			c.waitInstanceWebhook(t, "kro.run/v1alpha1", "GatedChain", ns)
			instance := "{apiVersion: kro.run/v1alpha1, kind: GatedChain, metadata: {name: g, namespace: " + ns + "}, spec: {ready: %q}}"
			c.apply(t, fmt.Sprintf(instance, "yes"))
			c.waitState(t, "kro.run/v1alpha1", "GatedChain", ns, "g", v1alpha1.InstanceActive)
			if v := c.mustGet(t, "v1", "ConfigMap", ns, "g-joined").Object["data"]; !reflect.DeepEqual(v, map[string]any{"v": "yes-other"}) {
				t.Fatalf("joined holds %v", v)
			}

			file := filepath.Join(t.TempDir(), "g.yaml")
			writeFile(t, file, fmt.Sprintf(instance, "no"))
			out, err := kro(t, cfg, nil, "dry-run", "-f", file)
			if err != nil {
				t.Fatalf("dry-run: %v\n%s", err, out)
			}
			sayAll(t, "dry-run", out,
				// gate's new value is what joined reads...
				"gate: ConfigMap "+ns+"/g-gate UPDATE\n  not ready yet, so what depends on it waits: readyWhen ${gate.data.ready == \"yes\"} is false; it read gate.data.ready = \"no\"\n",
				"joined: ConfigMap "+ns+"/g-joined UPDATE\n  kro-agent updates it only after gate, which is not ready yet (above)\n",
				"-  v: yes-other\n  +  v: no-other\n")
			// ...and, until gate is ready, the status keeps what joined,
			// left as it is, gave it.
			if strings.Contains(out, "GatedChain "+ns+"/g UPDATE") {
				t.Errorf("dry-run plans a status change while joined waits:\n%s", out)
			}

			c.apply(t, fmt.Sprintf(instance, "no"))
			eventually(t, 30*time.Second, "joined to wait for gate", func() (bool, string) {
				u := c.mustGet(t, "kro.run/v1alpha1", "GatedChain", ns, "g")
				cond := condition(u, v1alpha1.ConditionGraphResolved)
				return cond != nil && strings.HasPrefix(cond.Message, "joined waits for gate"), conditionSummary(u)
			})
			u := c.mustGet(t, "kro.run/v1alpha1", "GatedChain", ns, "g")
			if joined, _, _ := unstructured.NestedString(u.Object, "status", "joined"); joined != "yes-other" {
				t.Errorf("status.joined = %q while joined waits, want what it gave before, yes-other", joined)
			}
			if cond := condition(u, "Joined"); cond == nil || cond.Status != metav1.ConditionTrue {
				t.Errorf("condition Joined while joined waits: %+v, want it True as before", cond)
			}
			if v := c.mustGet(t, "v1", "ConfigMap", ns, "g-joined").Object["data"]; !reflect.DeepEqual(v, map[string]any{"v": "yes-other"}) {
				t.Errorf("joined was applied while gate is not ready: %v", v)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
