package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/webhook"
)

// webhooks is what the rest of the agent needs of the admission setup.
type webhooks struct {
	registrar *webhook.Registrar
	log       logr.Logger
	// retry wakes retryRegistrations after a failed registration.
	retry chan struct{}
	// check wakes verifyRegistrations when something it registered changed.
	check chan struct{}
	// pass tells the registrar when the served kinds are complete.
	pass firstPass
}

// rgdReconciled is told each RGD reconciled, for the first pass.
func (w *webhooks) rgdReconciled() func(string) {
	if w == nil {
		return nil
	}
	return w.pass.reconciled
}

// firstPass follows the leader through the RGDs: once it has reconciled
// every RGD there was when it started leading, the kinds it serves are all
// the served kinds, and complete is called, once.
type firstPass struct {
	complete func()

	mu sync.Mutex
	// seen are the RGDs reconciled before the list was read.
	seen map[string]bool
	// pending are the listed RGDs not reconciled yet; nil until listed.
	pending map[string]bool
	done    bool
}

// reconciled records an RGD reconciled.
func (p *firstPass) reconciled(name string) {
	p.mu.Lock()
	if p.pending == nil {
		if p.seen == nil {
			p.seen = map[string]bool{}
		}
		p.seen[name] = true
	}
	delete(p.pending, name)
	finished := p.finishedLocked()
	p.mu.Unlock()
	if finished {
		p.complete()
	}
}

// listed records the RGDs there are as the leader starts.
func (p *firstPass) listed(names []string) {
	p.mu.Lock()
	p.pending = map[string]bool{}
	for _, n := range names {
		if !p.seen[n] {
			p.pending[n] = true
		}
	}
	p.seen = nil
	finished := p.finishedLocked()
	p.mu.Unlock()
	if finished {
		p.complete()
	}
}

func (p *firstPass) finishedLocked() bool {
	if p.done || p.pending == nil || len(p.pending) > 0 {
		return false
	}
	p.done = true
	return true
}

// kindsChanged feeds served instance kinds to the instance webhook.
func (w *webhooks) kindsChanged(ctx context.Context) func([]schema.GroupVersionResource) {
	if w == nil {
		return nil
	}
	return func(gvrs []schema.GroupVersionResource) {
		w.registered(ctx, w.registrar.SetInstanceKinds(ctx, gvrs))
	}
}

// registered takes the outcome of a registration. A failure is retried:
// otherwise a new kind's instances would be admitted without their labels
// (the agent writes them itself, one more write each) until the kinds
// next change, and a CA that failed to register would leave the API server
// unable to call the webhooks until it rotates. An agent that is stopping
// has nothing to report.
func (w *webhooks) registered(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	w.log.Error(err, "registering the webhook configurations; retrying")
	select {
	case w.retry <- struct{}{}:
	default: // a retry is already due
	}
}

// retryRegistrations registers what is pending after a failure, waiting
// twice as long after each failed try up to a minute, for as long as it
// takes; then it waits for the next failure.
func (w *webhooks) retryRegistrations(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.retry:
		}
		for delay := time.Second; ; delay = min(2*delay, time.Minute) {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(delay):
			}
			err := w.registrar.Sync(ctx)
			if err == nil {
				break
			}
			if ctx.Err() == nil {
				w.log.V(1).Info("registering the webhook configurations failed again", "error", err.Error(), "nextTryIn", min(2*delay, time.Minute).String())
			}
		}
	}
}

// admissionChanged is told each change to the cluster's admission
// configuration. One to what the agent registered wakes verifyRegistrations:
// a webhook configuration or guard policy deleted by hand comes back at
// once, not at the next periodic check.
func (w *webhooks) admissionChanged() func(schema.GroupResource, string) {
	if w == nil {
		return nil
	}
	return func(gr schema.GroupResource, name string) {
		if !w.registrar.Registers(gr, name) {
			return
		}
		select {
		case w.check <- struct{}{}:
		default: // a check is already due
		}
	}
}

// verifyRegistrations reads back what was registered when it changes, and
// every interval besides, and registers it again if someone deleted or
// changed it: a webhook configuration or guard policy removed by hand
// would otherwise stay gone until the agent restarts. The interval covers
// an agent that may not watch admission configuration.
func (w *webhooks) verifyRegistrations(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	// pause grows with each restoration in a row: someone who keeps
	// undoing what the agent registers (another controller with its own
	// idea of it) is answered ever more slowly, up to the interval,
	// rather than in a tight loop of writes.
	var pause time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-w.check:
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
		restored, err := w.registrar.Verify(ctx)
		w.registered(ctx, err)
		switch {
		case restored:
			pause = min(max(2*pause, time.Second), interval)
			if err == nil {
				// Whoever undoes them should find out from the log,
				// and so should whoever wonders why the agent writes.
				w.log.Info("the webhook configurations or guard policies were deleted or changed by someone else; registered them again", "nextRestoreAfter", pause.String())
			}
		case err == nil:
			pause = 0
		}
	}
}

// setupWebhooks prepares certificates, the webhook server and the
// registration of the webhook configurations and the guard policy.
// The RGD webhook refuses the kinds of CRDs being deleted, and CRDs that
// are not the RGD's to write, as crds last saw them.
func setupWebhooks(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, o Options, resolver kinds.Resolver, crds *kinds.CRDs) (*webhooks, error) {
	w := o.Webhooks
	if w.Addr == "0" {
		return nil, nil
	}
	if w.Addr == "" {
		w.Addr = ":9443"
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	agentUser, err := guard.Identity(ctx, kc)
	if err != nil {
		return nil, err
	}
	secretNS, secretName := SplitRef(orDefault(w.CertSecret, "kro-system/kro-agent-webhook-certs"))
	if err := ensureNamespace(ctx, kc, secretNS); err != nil {
		return nil, err
	}
	registrar := &webhook.Registrar{Client: kc, URL: strings.TrimSuffix(w.URL, "/"), AgentUser: agentUser}
	certOpts := webhook.CertOptions{Namespace: secretNS, Name: secretName, Validity: w.CertValidity, CAValidity: w.CAValidity, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Log: o.Log.WithName("webhook-certs")}
	if w.URL == "" {
		svcNS, svcName := SplitRef(orDefault(w.Service, "kro-system/kro-agent-webhook"))
		registrar.Service = &admissionregv1.ServiceReference{Namespace: svcNS, Name: svcName}
		certOpts.DNSNames = []string{svcName + "." + svcNS + ".svc", svcName + "." + svcNS + ".svc.cluster.local"}
	}
	certs := webhook.NewCerts(kc, certOpts)
	registrar.Refresh = certs.Ensure
	hooks := &webhooks{registrar: registrar, log: o.Log.WithName("webhooks"), retry: make(chan struct{}, 1), check: make(chan struct{}, 1)}
	hooks.pass.complete = func() { hooks.registered(ctx, registrar.KindsComplete(ctx)) }
	// The configurations are registered only once the server listens: a
	// validating webhook that fails closed must not be called before.
	serving := make(chan struct{})
	register := func(ca []byte) {
		hooks.registered(ctx, registrar.SetCABundle(ctx, ca))
	}
	certs.OnRotate(func(ca []byte) {
		select {
		case <-serving:
			register(ca)
		default:
		}
	})
	if err := certs.Ensure(ctx); err != nil {
		return nil, err
	}
	reader := mgr.GetClient()
	server := &webhook.Server{
		Addr:  w.Addr,
		Ready: serving,
		Certs: certs,
		Log:   o.Log.WithName("webhook-server"),
		RGDs:  &webhook.RGDValidator{Resolver: crds.Resolver(resolver), Client: mgr.GetClient(), RGDs: mgr.GetClient(), CRDLabels: crds.Labels, Stored: mgr.GetAPIReader(), Reviews: kc.AuthorizationV1()},
		Instance: &webhook.InstanceLabeler{AgentUser: agentUser, Lookup: func(ctx context.Context, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, bool) {
			// Every instance write is admitted here: read the cached RGDs
			// in place rather than copy them all each time (nothing below
			// writes to them).
			list := &v1alpha1.ResourceGraphDefinitionList{}
			if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
				return nil, false
			}
			for i := range list.Items {
				r := &list.Items[i]
				if s := r.Spec.Schema; s != nil && s.Kind == gvk.Kind && s.APIVersion == gvk.Version && orDefault(s.Group, v1alpha1.GroupVersion.Group) == gvk.Group {
					return r, true
				}
			}
			return nil, false
		}},
	}
	if err := mgr.Add(server); err != nil {
		return nil, err
	}
	// Configurations a previous run registered call this address already:
	// the agent is not ready before it answers them.
	if err := mgr.AddReadyzCheck("webhook-server", func(*http.Request) error {
		select {
		case <-serving:
			return nil
		default:
			return errors.New("the webhook server is not serving yet")
		}
	}); err != nil {
		return nil, err
	}
	if err := mgr.Add(everyReplica(func(ctx context.Context) error {
		select {
		case <-serving:
			register(certs.CABundle())
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		return nil, err
	}
	if err := mgr.Add(everyReplica(hooks.retryRegistrations)); err != nil {
		return nil, err
	}
	// The leader alone reads back and restores: only it knows the served
	// kinds, and a standby restoring its own view would undo the leader's
	// (and the leader, in turn, the standby's) at every check. A standby
	// still registers the CA, at start and at each rotation, keeping the
	// instance webhook's kinds as the leader left them. The leader's
	// instance engine tells it of changes (admissionChanged).
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		hooks.verifyRegistrations(ctx, cmp.Or(w.RegistrationCheck, 10*time.Minute))
		return nil
	})); err != nil {
		return nil, err
	}
	// The leader's first pass starts from the RGDs in its cache.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return nil // stopping
		}
		// The RGD controller's informer: no copies, nothing written.
		list := &v1alpha1.ResourceGraphDefinitionList{}
		if err := mgr.GetClient().List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("listing the RGDs for the instance webhook's kinds: %w", err)
		}
		names := make([]string, 0, len(list.Items))
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
		hooks.pass.listed(names)
		return nil
	})); err != nil {
		return nil, err
	}
	check := w.CertCheck
	if check == 0 {
		check = time.Hour
	}
	// Every replica serves, so every replica renews: a standby that only
	// loaded the certificate at start would serve it past its expiry.
	if err := mgr.Add(everyReplica(func(ctx context.Context) error {
		certs.Run(ctx, check)
		return nil
	})); err != nil {
		return nil, err
	}
	return hooks, nil
}

// everyReplica is a runnable that runs on every replica, leader or not.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }
func (f everyReplica) NeedLeaderElection() bool        { return false }

// SplitRef splits the namespace/name of --webhook-service or
// --webhook-cert-secret; a name alone is in kro-system.
func SplitRef(ref string) (namespace, name string) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return "kro-system", ref
	}
	return ns, name
}

// ensureNamespace creates the namespace of the certificate Secret when the
// agent runs outside the cluster and nothing has made it yet.
func ensureNamespace(ctx context.Context, kc kubernetes.Interface, ns string) error {
	_, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
