// Package agent wires kro-agent together: the controller-runtime manager
// (metrics, probes, leader election), the RGD reconciler, the instance
// engine and the Cluster reconciler it places instances by. cmd/agent parses flags into Options; tests call Run directly.
package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/binarypages"
	"github.com/kro-agent/kro-agent/pkg/clusters"
	"github.com/kro-agent/kro-agent/pkg/conditions"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/reconcile"
)

// Options configure the agent.
type Options struct {
	// Config is the connection to the API server.
	Config *rest.Config
	// QPS and Burst limit the agent's client: a negative QPS turns the
	// client-side limit off, 0 keeps Config's.
	QPS   float32
	Burst int
	// Workers reconcile instances in parallel.
	Workers int
	// MetricsAddr serves /metrics; "0" disables it.
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz; "0" disables it.
	ProbeAddr string
	// PprofAddr serves net/http/pprof, for profiling; "" or "0" disables it.
	PprofAddr string
	// LeaderElection makes replicas elect one leader through a Lease.
	LeaderElection          bool
	LeaderElectionNamespace string
	// MaxCollectionSize bounds forEach expansion per resource.
	MaxCollectionSize int
	// AllowCRDDeletion deletes the CRD of a deleted RGD with every
	// instance, each one's resources first; otherwise they stay.
	AllowCRDDeletion bool
	// GrantsRole names the ClusterRole the grants of managed kinds are
	// aggregated into: writes forbidden for want of a grant are tried
	// again as soon as it changes. "" follows none.
	GrantsRole string
	// GracefulShutdown bounds how long in-flight reconciles may finish.
	GracefulShutdown time.Duration
	// APIServerWait bounds how long start-up waits for the API server to
	// answer; 1 minute when zero.
	APIServerWait time.Duration
	// ClusterCheckInterval is how often each registered workload Cluster
	// is checked; 1 minute when zero.
	ClusterCheckInterval time.Duration
	// ReleaseStartupPages hands the pages of the binary that start-up
	// read back to the kernel, the first time the agent is idle.
	ReleaseStartupPages bool
	Webhooks            WebhookOptions
	Log                 logr.Logger
}

// WebhookOptions configure the admission webhooks.
type WebhookOptions struct {
	// Addr serves the webhooks; "0" disables them.
	Addr string
	// URL is the base URL the API server calls when the agent runs outside
	// the cluster (local mode), such as https://127.0.0.1:9443.
	URL string
	// Service (namespace/name) the API server calls in a cluster.
	Service string
	// CertSecret (namespace/name) holds the CA and serving certificate.
	CertSecret string
	// CertValidity of the serving certificate; renewed at two thirds.
	CertValidity time.Duration
	// CAValidity of the CA that signs it; ten times CertValidity when
	// zero. It is replaced from two CertValidities before it expires.
	CAValidity time.Duration
	// CertCheck is how often the certificate's expiry is checked.
	CertCheck time.Duration
	// RegistrationCheck is how often the webhook configurations and guard
	// policies are read back, and registered again if gone or changed,
	// besides whenever the agent sees them change; 10 minutes when zero.
	RegistrationCheck time.Duration
}

// LeaderElectionID names the Lease replicas compete for.
const LeaderElectionID = "kro-agent.kro.run"

// Run runs the agent until ctx ends.
func Run(ctx context.Context, o Options) error {
	cfg := rest.CopyConfig(o.Config)
	if o.QPS != 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	cfg.UserAgent = "kro-agent"
	// Only the kinds the manager's client and caches handle: every other
	// API group registered would cost memory for nothing.
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1alpha1.AddToScheme, agentv1.AddToScheme, extv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	patience := o.APIServerWait
	if patience == 0 {
		patience = time.Minute
	}
	if err := awaitAPIServer(ctx, cfg, patience, o.Log); err != nil {
		return err
	}
	grace := o.GracefulShutdown
	if grace == 0 {
		grace = 30 * time.Second
	}
	ownedCRDs := labels.SelectorFromSet(labels.Set{v1alpha1.LabelOwned: "true"})
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  o.Log,
		Metrics:                 metricsserver.Options{BindAddress: orDefault(o.MetricsAddr, ":8080")},
		HealthProbeBindAddress:  orDefault(o.ProbeAddr, ":8081"),
		PprofBindAddress:        o.PprofAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Leaving the Lease on shutdown lets a standby take over at once.
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &grace,
		// Only the CRDs the agent generated are cached: a cluster with many
		// large CRDs costs no memory for the ones that are not ours.
		Cache: cache.Options{
			ByObject: map[client.Object]cache.ByObject{
				&extv1.CustomResourceDefinition{}: {Label: ownedCRDs},
			},
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	builtin := kinds.LazyBuiltin()
	disco := kinds.NewDiscovery(memory.NewMemCacheClient(dc))
	resolver := kinds.Chain{disco, builtin}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Every replica follows the CRDs, for the RGD webhook as for the
	// leader's RGD reconciler: a kind whose CRD is being deleted is
	// refused by both, though discovery still lists it.
	crds := kinds.NewCRDs(meta, v1alpha1.LabelOwned, v1alpha1.LabelRGDName)
	if err := mgr.Add(crds); err != nil {
		return err
	}
	registrar, err := setupWebhooks(ctx, mgr, cfg, o, resolver, crds)
	if err != nil {
		return err
	}
	recorder := notesWithinLimit{mgr.GetEventRecorder("kro-agent")}
	registry := clusters.NewRegistry()
	engine, err := reconcile.NewEngine(reconcile.EngineOptions{
		Clusters:          registry,
		Builtin:           builtin,
		Config:            cfg,
		Dynamic:           dyn,
		Mapper:            mgr.GetRESTMapper(),
		Recorder:          recorder,
		Workers:           o.Workers,
		MaxCollectionSize: o.MaxCollectionSize,
		OnKindsChanged:    registrar.kindsChanged(ctx),
		// The engine follows the admission configuration already.
		OnAdmissionChanged: registrar.admissionChanged(),
		GrantsRole:         o.GrantsRole,
		Log:                o.Log.WithName("instances"),
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(engine); err != nil {
		return err
	}
	rgds := &reconcile.RGDReconciler{
		Client:     mgr.GetClient(),
		APIReader:  mgr.GetAPIReader(),
		Recorder:   recorder,
		Engine:     engine,
		Resolver:   resolver,
		CRDs:       crds,
		Discovery:  disco,
		Reconciled: registrar.rgdReconciled(),

		AllowCRDDeletion: o.AllowCRDDeletion,
	}
	if err := rgds.SetupWithManager(mgr); err != nil {
		return err
	}
	workloadClusters := &reconcile.ClusterReconciler{
		Client:   mgr.GetClient(),
		Secrets:  mgr.GetAPIReader(),
		Registry: registry,
		Interval: o.ClusterCheckInterval,
		Recorder: recorder,
	}
	if err := workloadClusters.SetupWithManager(mgr); err != nil {
		return err
	}
	if o.ReleaseStartupPages {
		if err := mgr.Add(startupPages{cache: mgr.GetCache(), log: o.Log}); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// startupPages releases the pages of the agent's binary that start-up
// touched (package binarypages) once it is over: the caches have synced and
// the agent has been idle for a few seconds. Every replica does, leader or
// not.
type startupPages struct {
	cache interface {
		WaitForCacheSync(context.Context) bool
	}
	log logr.Logger
}

// startupQuiet is how long the agent is idle before it releases them.
const startupQuiet = 5 * time.Second

func (p startupPages) NeedLeaderElection() bool { return false }

func (p startupPages) Start(ctx context.Context) error {
	if !p.cache.WaitForCacheSync(ctx) {
		return nil
	}
	released, err := binarypages.ReleaseWhenIdle(ctx, startupQuiet)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		// The pages stay, as they would without the release.
		p.log.Info("start-up pages of the binary kept", "reason", err.Error())
	default:
		p.log.Info("start-up pages of the binary released", "bytes", released)
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// notesWithinLimit records every Event with its note cut to what the events
// API takes (conditions.EventNote): it refuses a longer note, and the Event
// with it, and an RGD's GraphAccepted message passes the limit with a dozen
// errors.
type notesWithinLimit struct{ events.EventRecorder }

func (r notesWithinLimit) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", conditions.EventNote(fmt.Sprintf(note, args...)))
}
