package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

const parallelClients = 64

// bench holds what every scenario needs.
type bench struct {
	root, logDir string
	quiet        time.Duration
	driftTries   int
	// smallestN is where the measurements made once per controller and
	// workload are made.
	smallestN   int
	clusterName string
	// clusterLogs, when set, is where each cluster's logs are copied
	// before it is deleted.
	clusterLogs string
}

// freshCluster starts a fresh cluster for one measurement, with nodes
// fake nodes.
func (b *bench) freshCluster(ctx context.Context, nodes int) (*benchCluster, error) {
	c, err := freshCluster(ctx, b.root, b.clusterName, nodes)
	if err != nil {
		return nil, err
	}
	c.keepLogsIn = b.clusterLogs
	return c, nil
}

// restSettle is how long a controller is left alone before its RSS at
// rest is read.
const restSettle = 30 * time.Second

func nodesFor(w workload, n int) int {
	return n*w.PodsPerInstance/100 + 2 // kwok's fake nodes take 110 pods each
}

// floor creates the workload's objects directly and times it: until every
// create returned, and for pods-bound until every Deployment is available.
func (b *bench) floor(ctx context.Context, w workload, n int) (Floor, error) {
	out := Floor{Workload: w.Name, N: n}
	c, err := b.freshCluster(ctx, nodesFor(w, n))
	if err != nil {
		return out, err
	}
	defer c.delete(ctx, b.root)
	if err := c.namespaces(ctx, benchNamespaces()...); err != nil {
		return out, err
	}
	var objs []map[string]any
	for i := range n {
		name, ns := spread(i)
		objs = append(objs, w.Direct(name, ns)...)
	}
	var avail *counter
	if w.PodsPerInstance > 0 {
		avail = c.count(gvrOf("apps/v1", "Deployment"), deploymentAvailable)
		defer avail.close()
	}
	before, err := c.cpu()
	if err != nil {
		return out, err
	}
	start := time.Now()
	if err := c.createAll(ctx, objs, parallelClients); err != nil {
		return out, err
	}
	if avail != nil {
		if err := avail.waitFor(ctx, n, 30*time.Minute); err != nil {
			return out, err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	after, err := c.cpu()
	if err != nil {
		return out, err
	}
	out.ClusterCPU = cpuSince(before, after)
	return out, nil
}

// throughput creates n instances at once and measures the controller on
// the way to all ACTIVE, and optionally while nothing changes afterwards.
func (b *bench) throughput(ctx context.Context, ctl *controller, w workload, n int, first bool) (Throughput, error) {
	// What is measured once per controller, workload and N is measured in
	// the first run: RSS at rest, and at the smallest N the writes while
	// nothing changes and drift repair.
	quiet := first && n == b.smallestN && b.quiet > 0
	out := Throughput{Workload: w.Name, N: n, Controller: ctl.Name, QuietWrites: -1}
	c, err := b.freshCluster(ctx, nodesFor(w, n))
	if err != nil {
		return out, err
	}
	defer c.delete(ctx, b.root)
	p, err := b.startOn(ctx, c, ctl, w)
	if err != nil {
		return out, err
	}
	defer p.stop()
	active := c.count(rgdInstances(w), stateActive)
	defer active.close()
	var objs []map[string]any
	for i := range n {
		name, ns := spread(i)
		objs = append(objs, instance(w, name, ns))
	}
	// The API server builds a CRD's handler (schema, validators) on its
	// first request; a dry-run create pays for that before the clock runs,
	// as it would have long before in a cluster in use.
	name, ns := spread(0)
	if err := retry(ctx, 30*time.Second, func() error { return c.dryRun(ctx, instance(w, name, ns)) }); err != nil {
		return out, err
	}
	before, _ := p.usage()
	clusterBefore, err := c.cpu()
	if err != nil {
		return out, err
	}
	start := time.Now()
	if err := c.createAll(ctx, objs, parallelClients); err != nil {
		return out, err
	}
	out.CreatedSeconds = time.Since(start).Seconds()
	if err := active.waitFor(ctx, n, 60*time.Minute); err != nil {
		return out, fmt.Errorf("%s, %s N=%d: %w", ctl.Name, w.Name, n, err)
	}
	end := time.Now()
	out.Seconds = end.Sub(start).Seconds()
	after, err := p.usage()
	if err != nil {
		return out, err
	}
	out.PeakRSSMB, out.CPUSeconds = after.PeakRSSMB, after.CPUSeconds-before.CPUSeconds
	clusterAfter, err := c.cpu()
	if err != nil {
		return out, err
	}
	out.ClusterCPU = cpuSince(clusterBefore, clusterAfter)
	time.Sleep(2 * time.Second) // the audit log is written as requests complete
	reqs, err := c.countRequests(ctl.UserAgent, start, end)
	if err != nil {
		return out, err
	}
	out.PerInstance = perInstance(reqs, n)
	log.Printf("  writes on the way to ACTIVE: %v; all created after %.1fs", reqs.ByVerb, out.CreatedSeconds)
	if quiet {
		from := end.Add(time.Second)
		time.Sleep(b.quiet)
		to := time.Now()
		q, err := c.countRequests(ctl.UserAgent, from, to)
		if err != nil {
			return out, err
		}
		late, err := c.countRequests(ctl.UserAgent, from.Add(to.Sub(from)/2), to)
		if err != nil {
			return out, err
		}
		out.QuietWrites = q.Writes + q.Events
		out.QuietSeconds = b.quiet.Seconds()
		lateWrites := late.Writes + late.Events
		out.QuietWritesLate = &lateWrites
		if out.QuietWrites > 0 {
			log.Printf("  %d writes while nothing changed, %d of them in its second half: %v", out.QuietWrites, lateWrites, q.ByVerb)
		}
	}
	if first {
		if !quiet {
			time.Sleep(restSettle)
		}
		u, err := p.usage()
		if err != nil {
			return out, err
		}
		out.RestRSSMB = u.RSSMB
	}
	if w.Name == agentBound.Name && b.driftTries > 0 && first && n == b.smallestN {
		out.DriftP50ms, out.DriftP99ms, err = b.drift(ctx, c, min(b.driftTries, n))
		if err != nil {
			// Reported, not fatal: a controller that does not repair drift
			// has its other figures all the same.
			log.Printf("%s: drift repair: %v", ctl.Name, err)
			out.DriftP50ms, out.DriftP99ms = -1, -1
		}
	}
	return out, nil
}

// startOn installs the controller's CRDs, starts it and serves the
// workload's RGD.
func (b *bench) startOn(ctx context.Context, c *benchCluster, ctl *controller, w workload) (*process, error) {
	if err := c.installCRDs(ctx, ctl.CRDs); err != nil {
		return nil, err
	}
	if err := c.namespaces(ctx, benchNamespaces()...); err != nil {
		return nil, err
	}
	p, err := ctl.start(c, b.logDir)
	if err != nil {
		return nil, err
	}
	// The RGD is applied once the controller is up (and, for kro-agent,
	// its validating webhook registered), as an operator would.
	time.Sleep(3 * time.Second)
	if err := retry(ctx, 30*time.Second, func() error { return c.applyYAML(ctx, w.RGD) }); err != nil {
		p.stop()
		return nil, err
	}
	if err := c.waitRGDActive(ctx, rgdName(w)); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s did not make RGD %s Active: %w", ctl.Name, rgdName(w), err)
	}
	return p, nil
}

func rgdName(w workload) string { return strings.ToLower(w.Kind) }

// drift deletes the first ConfigMap of `tries` instances, one at a time,
// and times until the controller has put it back.
func (b *bench) drift(ctx context.Context, c *benchCluster, tries int) (float64, float64, error) {
	cms := gvrOf("v1", "ConfigMap")
	factory := dynamicinformer.NewDynamicSharedInformerFactory(c.dyn, 0)
	inf := factory.ForResource(cms).Informer()
	back := make(chan string, 16)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			select {
			case back <- u.GetNamespace() + "/" + u.GetName():
			default:
			}
		}
	}})
	stop := make(chan struct{})
	defer close(stop)
	go inf.Run(stop)
	cache.WaitForCacheSync(stop, inf.HasSynced)
	var lat []time.Duration
	for i := range tries {
		name, ns := spread(i)
		name += "-first"
		for len(back) > 0 {
			<-back
		}
		start := time.Now()
		if err := c.dyn.Resource(cms).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return 0, 0, err
		}
		timeout := time.After(2 * time.Minute)
	wait:
		for {
			select {
			case key := <-back:
				if key == ns+"/"+name {
					lat = append(lat, time.Since(start))
					break wait
				}
			case <-timeout:
				return 0, 0, fmt.Errorf("ConfigMap %s/%s was not put back within 2 minutes", ns, name)
			}
		}
	}
	p50, p99 := percentiles(lat)
	return p50, p99, nil
}

func retry(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		log.Printf("retrying: %v", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func perInstance(r requests, n int) Requests {
	f := float64(n)
	return Requests{Writes: float64(r.Writes) / f, Events: float64(r.Events) / f, Gets: float64(r.Gets) / f, Lists: float64(r.Lists) / f}
}
