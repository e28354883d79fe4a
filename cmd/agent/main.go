// Command kro-agent serves kro ResourceGraphDefinitions: it turns each into
// a CRD and reconciles every instance's graph of resources.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kro-agent/kro-agent/pkg/agent"
	"github.com/kro-agent/kro-agent/pkg/version"
)

// usage says what the agent is before its flags, for kro-agent --help.
func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprint(out, `kro-agent serves kro.run/v1alpha1 ResourceGraphDefinitions: it generates a CRD for each
and reconciles every instance, applying its resources in dependency order, and serves
the admission webhooks that check RGDs and label instances. In a cluster it runs from
manifests/ (kubectl apply -k manifests); outside one, give it --kubeconfig and --webhook-url.

Usage:
  kro-agent [flags]

Flags:
`)
	flag.PrintDefaults()
}

func main() {
	var o agent.Options
	var qps float64
	flag.Float64Var(&qps, "kube-api-qps", -1, "client-side limit of queries per second to the API server; negative: none, the workers bound the load (each with at most 16 requests in flight, for a collection's items) and the API server's priority and fairness protects it")
	flag.IntVar(&o.Burst, "kube-api-burst", 100, "burst of queries to the API server, with a positive --kube-api-qps")
	// A reconcile spends most of its time waiting on the API server, and
	// with more requests in flight the API server, etcd and the agent each
	// spent less CPU per instance (bench/README.md, "Workers").
	flag.IntVar(&o.Workers, "workers", 64, "instances reconciled in parallel")
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint; 0 disables it")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 disables them")
	flag.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of net/http/pprof for profiling; 0 disables it")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader through a Lease so several replicas can run")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the agent's own, in a cluster)")
	flag.IntVar(&o.MaxCollectionSize, "max-collection-size", 1000, "most items one forEach resource may expand to")
	// Off by default: removing an API and every object of it stays a
	// human decision (SPEC §3); the flag needs delete on CRDs in the role.
	flag.StringVar(&o.GrantsRole, "grants-cluster-role", "kro-agent-managed-resources", "the ClusterRole the agent's grants of managed kinds are aggregated into (manifests/agent/rbac.yaml): as soon as it changes, an instance whose write was forbidden is tried again and a kind the agent could not list is listed again; empty: with backoff only")
	flag.BoolVar(&o.AllowCRDDeletion, "allow-crd-deletion", false, "delete the CRD of a deleted ResourceGraphDefinition, and every instance with it (their resources first, in reverse order); needs delete on customresourcedefinitions")
	flag.DurationVar(&o.GracefulShutdown, "graceful-shutdown-timeout", 30*time.Second, "how long in-flight reconciles may finish on shutdown")
	flag.DurationVar(&o.APIServerWait, "api-server-wait", time.Minute, "how long the agent waits at start for the API server to answer (a control plane restarting) before it gives up and exits")
	flag.BoolVar(&o.ReleaseStartupPages, "release-startup-pages", true, "hand back to the kernel, the first time the agent is idle, the pages of its binary that start-up read (package inits, wiring), which it would otherwise keep resident")
	flag.DurationVar(&o.ClusterCheckInterval, "cluster-check-interval", time.Minute, "how often each registered workload Cluster is checked (kubeconfig, API server, discovery)")
	flag.StringVar(&o.Webhooks.Addr, "webhook-bind-address", ":9443", "address of the admission webhooks; 0 disables them")
	flag.StringVar(&o.Webhooks.URL, "webhook-url", "", "base URL the API server calls, when the agent runs outside the cluster (e.g. https://127.0.0.1:9443)")
	flag.StringVar(&o.Webhooks.Service, "webhook-service", "kro-system/kro-agent-webhook", "namespace/name of the Service the API server calls in a cluster")
	flag.StringVar(&o.Webhooks.CertSecret, "webhook-cert-secret", "kro-system/kro-agent-webhook-certs", "namespace/name of the Secret holding the webhook CA and certificate")
	flag.DurationVar(&o.Webhooks.CertValidity, "webhook-cert-validity", 90*24*time.Hour, "validity of the serving certificate; renewed when a third is left")
	flag.DurationVar(&o.Webhooks.CAValidity, "webhook-ca-validity", 0, "validity of the CA that signs the serving certificate (default ten times --webhook-cert-validity); a new CA joins the trust bundle when two serving validities are left of it, and signs when one is left")
	flag.DurationVar(&o.Webhooks.CertCheck, "webhook-cert-check-interval", time.Hour, "how often the certificate's expiry is checked")
	flag.DurationVar(&o.Webhooks.RegistrationCheck, "webhook-registration-check-interval", 10*time.Minute, "how often the webhook configurations and guard policies are read back, and restored when deleted or changed, besides whenever the agent sees them change")
	showVersion := flag.Bool("version", false, "print the version and exit")
	// Errors are logged with what failed and for which object; the stack
	// of the worker that logged them is the same every time and buries
	// the message. --zap-stacktrace-level still asks for them.
	zapOpts := zap.Options{StacktraceLevel: zapcore.PanicLevel}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Usage = usage
	// --kubeconfig is registered by controller-runtime's config package.
	flag.Parse()
	// Most of the agent's heap is its informer caches; the default GC
	// headroom of 100% doubles it at peaks. 50% costs a little CPU and
	// keeps RSS closer to what is cached. GOGC still overrides it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	// The heap profile is read through --pprof-bind-address alone.
	// Without it, sampling allocations would only record their stacks for
	// nobody, a page of the runtime's 1.4 MB table of them resident for
	// each stack seen (a few hundred kB, idle).
	if o.PprofAddr == "" || o.PprofAddr == "0" {
		runtime.MemProfileRate = 0
	}
	if *showVersion {
		fmt.Println("kro-agent", version.Version)
		return
	}
	o.QPS = float32(qps)
	if err := checkFlags(o); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "kro-agent:", line)
		}
		os.Exit(2)
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(log)
	// client-go and the API machinery log through klog: one format, one
	// stream, for whoever reads or ships the agent's log.
	klog.SetLogger(log)
	o.Log = log
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kro-agent:", err)
		os.Exit(1)
	}
	o.Config = cfg
	log.Info("starting kro-agent", "version", version.Version, "workers", o.Workers)
	if err := agent.Run(ctrl.SetupSignalHandler(), o); err != nil {
		log.Error(err, "kro-agent stopped")
		os.Exit(1)
	}
}

// checkFlags rejects values the agent would otherwise quietly replace by
// a default (the Options treat zero as "the default") or could not run
// with at all (a ticker of a non-positive interval panics).
func checkFlags(o agent.Options) error {
	var errs []error
	atLeastOne := func(flag string, v int) {
		if v < 1 {
			errs = append(errs, fmt.Errorf("--%s must be at least 1, got %d", flag, v))
		}
	}
	positive := func(flag string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be a positive duration, got %s", flag, d))
		}
	}
	atLeastOne("workers", o.Workers)
	atLeastOne("max-collection-size", o.MaxCollectionSize)
	positive("cluster-check-interval", o.ClusterCheckInterval)
	positive("api-server-wait", o.APIServerWait)
	positive("webhook-cert-validity", o.Webhooks.CertValidity)
	positive("webhook-cert-check-interval", o.Webhooks.CertCheck)
	positive("webhook-registration-check-interval", o.Webhooks.RegistrationCheck)
	if o.GracefulShutdown < 0 {
		errs = append(errs, fmt.Errorf("--graceful-shutdown-timeout must not be negative, got %s", o.GracefulShutdown))
	}
	if o.QPS > 0 && o.Burst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1 with a positive --kube-api-qps, got %d", o.Burst))
	}
	// The certificate is renewed once a check finds less than a third of
	// it left: checked less often than that, it expires first, and the
	// API server can no longer call the webhooks.
	if w := o.Webhooks; w.CertValidity > 0 && w.CertCheck > 0 && w.CertCheck >= w.CertValidity/3 {
		errs = append(errs, fmt.Errorf("--webhook-cert-check-interval (%s) must be shorter than a third of --webhook-cert-validity (%s), or the certificate expires before a check renews it", w.CertCheck, w.CertValidity))
	}
	// A CA that lives less than three serving validities would have its
	// successor join the trust bundle within a validity of its making.
	if w := o.Webhooks; w.CAValidity < 0 {
		errs = append(errs, fmt.Errorf("--webhook-ca-validity must be a positive duration, or 0 for ten times --webhook-cert-validity, got %s", w.CAValidity))
	} else if w.CAValidity > 0 && w.CertValidity > 0 && w.CAValidity < 3*w.CertValidity {
		errs = append(errs, fmt.Errorf("--webhook-ca-validity (%s) must be at least three times --webhook-cert-validity (%s): a new CA joins the trust bundle when two serving validities are left of the one that signs", w.CAValidity, w.CertValidity))
	}
	errs = append(errs, checkRef("webhook-service", o.Webhooks.Service, validation.IsDNS1035Label)...)
	errs = append(errs, checkRef("webhook-cert-secret", o.Webhooks.CertSecret, validation.IsDNS1123Subdomain)...)
	if o.Webhooks.URL != "" {
		errs = append(errs, checkWebhookURL(o.Webhooks.URL)...)
	}
	return errors.Join(errs...)
}

// checkRef checks the namespace/name flag names: the API server takes
// neither a Service nor a Secret by a name it could not have, and a
// webhook configuration naming such a Service is admitted but never
// reaches it.
func checkRef(flag, ref string, validName func(string) []string) []error {
	if ref == "" {
		return nil // the default
	}
	var errs []error
	ns, name := agent.SplitRef(ref)
	for _, msg := range validation.IsDNS1123Label(ns) {
		errs = append(errs, fmt.Errorf("--%s %q: namespace %q: %s", flag, ref, ns, msg))
	}
	for _, msg := range validName(name) {
		errs = append(errs, fmt.Errorf("--%s %q: name %q: %s", flag, ref, name, msg))
	}
	return errs
}

// checkWebhookURL checks --webhook-url as the API server checks a webhook's
// URL, so that a wrong one stops the agent at start rather than leaving it
// running with its webhooks never registered.
func checkWebhookURL(raw string) []error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return []error{fmt.Errorf("--webhook-url: %w", err)}
	case u.Scheme != "https":
		return []error{fmt.Errorf("--webhook-url %q: the API server calls webhooks over https only", raw)}
	case u.Host == "":
		return []error{fmt.Errorf("--webhook-url %q: no host", raw)}
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return []error{fmt.Errorf("--webhook-url %q: the API server takes no user, query or fragment in a webhook's URL", raw)}
	}
	return nil
}
