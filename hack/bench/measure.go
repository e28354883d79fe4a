package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

var (
	rgdGVR = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "resourcegraphdefinitions"}
	crdGVR = extv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	nsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// gvrOf is the resource of every kind the benchmark writes.
func gvrOf(apiVersion, kind string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.WithResource(resources[kind])
}

var resources = map[string]string{
	"ConfigMap": "configmaps", "Secret": "secrets", "Deployment": "deployments", "Service": "services", "Namespace": "namespaces",
	"CustomResourceDefinition": "customresourcedefinitions", "ResourceGraphDefinition": "resourcegraphdefinitions",
	agentBound.Kind: agentBound.Resource, podsBound.Kind: podsBound.Resource,
}

// applyFile server-side applies every document of a YAML file.
func (c *benchCluster) applyFile(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return c.applyYAML(ctx, string(b))
}

func (c *benchCluster) applyYAML(ctx context.Context, doc string) error {
	for _, part := range splitYAML(doc) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(part), &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if _, err := c.dyn.Resource(gvrOf(u.GetAPIVersion(), u.GetKind())).Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kro-bench", Force: true}); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// installCRDs applies CRD files and waits until every CRD is established.
func (c *benchCluster) installCRDs(ctx context.Context, files []string) error {
	for _, f := range files {
		if err := c.applyFile(ctx, f); err != nil {
			return err
		}
	}
	return c.waitEstablished(ctx)
}

func (c *benchCluster) waitEstablished(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, crd := range list.Items {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			ok := false
			for _, x := range conds {
				m, _ := x.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					ok = true
				}
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	})
}

func (c *benchCluster) namespaces(ctx context.Context, names ...string) error {
	for _, ns := range names {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := c.dyn.Resource(nsGVR).Apply(ctx, ns, u, metav1.ApplyOptions{FieldManager: "kro-bench", Force: true}); err != nil {
			return err
		}
	}
	return nil
}

func benchNamespaces() []string {
	var out []string
	for i := range 10 {
		out = append(out, fmt.Sprintf("bench-%d", i))
	}
	return out
}

// waitRGDActive waits for the RGD's status.state to be Active.
func (c *benchCluster) waitRGDActive(ctx context.Context, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := c.dyn.Resource(rgdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		return st == "Active", nil
	})
}

// createAll creates objects with parallel clients.
func (c *benchCluster) createAll(ctx context.Context, objs []map[string]any, parallel int) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(objs) {
					return
				}
				u := &unstructured.Unstructured{Object: objs[i]}
				if _, err := c.dyn.Resource(gvrOf(u.GetAPIVersion(), u.GetKind())).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
					once.Do(func() {
						firstErr = fmt.Errorf("creating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
					})
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// counter watches a kind and counts the objects for which done holds.
type counter struct {
	mu      sync.Mutex
	done    map[string]bool
	changed chan struct{}
	stop    chan struct{}
}

func (c *benchCluster) count(gvr schema.GroupVersionResource, done func(*unstructured.Unstructured) bool) *counter {
	k := &counter{done: map[string]bool{}, changed: make(chan struct{}, 1), stop: make(chan struct{})}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(c.dyn, 0)
	inf := factory.ForResource(gvr).Informer()
	update := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		k.mu.Lock()
		k.done[u.GetNamespace()+"/"+u.GetName()] = done(u)
		k.mu.Unlock()
		select {
		case k.changed <- struct{}{}:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: update, UpdateFunc: func(_, o any) { update(o) }})
	go inf.Run(k.stop)
	cache.WaitForCacheSync(k.stop, inf.HasSynced)
	return k
}

func (k *counter) n() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, d := range k.done {
		if d {
			n++
		}
	}
	return n
}

// waitFor returns when n objects are done, or fails at the deadline.
func (k *counter) waitFor(ctx context.Context, n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for k.n() < n {
		select {
		case <-k.changed:
		case <-time.After(time.Second):
		case <-deadline:
			return fmt.Errorf("timed out after %s: %d of %d done", timeout, k.n(), n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (k *counter) close() { close(k.stop) }

func stateActive(u *unstructured.Unstructured) bool {
	st, _, _ := unstructured.NestedString(u.Object, "status", "state")
	return st == "ACTIVE"
}

func deploymentAvailable(u *unstructured.Unstructured) bool {
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	return n >= 1
}

// percentiles returns p50 and p99 of durations, in milliseconds.
func percentiles(d []time.Duration) (float64, float64) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return at(0.50), at(0.99)
}

func splitYAML(doc string) []string { return strings.Split(doc, "\n---\n") }
