package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Keys of the certificate Secret.
const (
	secretCACert  = "ca.crt"
	secretCAKey   = "ca.key"
	secretTLSCert = corev1.TLSCertKey
	secretTLSKey  = corev1.TLSPrivateKeyKey
)

// CertOptions configure the self-managed certificates.
type CertOptions struct {
	// Secret holds the CA and the serving certificate, so that replicas
	// share them: the first replica creates it, the others read it.
	Namespace, Name string
	// DNSNames and IPs go into the serving certificate.
	DNSNames []string
	IPs      []net.IP
	// Validity of the serving certificate; it is renewed once less than a
	// third of it is left.
	Validity time.Duration
	// CAValidity of a CA; ten times Validity when zero. A new CA joins the
	// trust bundle when two Validities are left of the one that signs, and
	// takes over signing when one is left (see rollover).
	CAValidity time.Duration
	// Log is told of every certificate issued and every failed check.
	Log logr.Logger
}

// Certs serves the current certificate and renews it before it expires.
type Certs struct {
	opts   CertOptions
	client kubernetes.Interface

	mu    sync.RWMutex
	cert  *tls.Certificate
	caPEM []byte
	// data is what the Secret held when last read, to write it again as
	// it was if someone deletes the Secret: a new CA would leave the
	// other replicas serving what the webhook configurations no longer
	// trust until their next check.
	data map[string][]byte
	// resourceVersion of the Secret data came from, to tell the changes
	// of others from this replica's own writes.
	resourceVersion string
	notify          []func(caBundle []byte)
}

// NewCerts returns a certificate source backed by a Secret.
func NewCerts(client kubernetes.Interface, opts CertOptions) *Certs {
	if opts.Validity == 0 {
		opts.Validity = 90 * 24 * time.Hour
	}
	if opts.CAValidity == 0 {
		opts.CAValidity = 10 * opts.Validity
	}
	return &Certs{opts: opts, client: client}
}

// OnRotate registers f, called with the CA bundle whenever it is loaded or
// changes, to write it into webhook configurations.
func (c *Certs) OnRotate(f func(caBundle []byte)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notify = append(c.notify, f)
}

// GetCertificate is tls.Config's hook: always the current certificate.
func (c *Certs) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.cert == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return c.cert, nil
}

// CABundle is the PEM of the CAs the serving certificates of every replica
// are signed by.
func (c *Certs) CABundle() []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.caPEM
}

// Ensure loads the certificates from the Secret, creating it or renewing
// what it holds as needed (rollover). It is called at start and then
// periodically.
func (c *Certs) Ensure(ctx context.Context) error {
	secrets := c.client.CoreV1().Secrets(c.opts.Namespace)
	ref := c.opts.Namespace + "/" + c.opts.Name
	secret, err := secrets.Get(ctx, c.opts.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.mu.RLock()
		data := c.data
		c.mu.RUnlock()
		next, changes, err := rollover(data, time.Now(), c.opts)
		if err != nil {
			return fmt.Errorf("issuing the webhook certificates: %w", err)
		}
		if next == nil {
			next = data
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.opts.Name, Namespace: c.opts.Namespace}, Type: corev1.SecretTypeOpaque, Data: next}
		created, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return c.Ensure(ctx) // another replica won the race
		}
		if err != nil {
			return fmt.Errorf("creating certificate Secret %s: %w", ref, err)
		}
		if data != nil {
			changes = append([]string{"wrote the certificate Secret again, as it was before it was deleted"}, changes...)
		}
		c.logChanges(ref, changes)
		secret = created
	case err != nil:
		return fmt.Errorf("reading certificate Secret %s: %w", ref, err)
	default:
		next, changes, err := rollover(secret.Data, time.Now(), c.opts)
		if err != nil {
			return fmt.Errorf("renewing the webhook certificates in Secret %s: %w", ref, err)
		}
		if next != nil {
			secret.Data = next
			// resourceVersion guards against two replicas renewing at once.
			updated, err := secrets.Update(ctx, secret, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				return c.Ensure(ctx)
			}
			if err != nil {
				return fmt.Errorf("renewing the webhook certificates in Secret %s: %w", ref, err)
			}
			c.logChanges(ref, changes)
			secret = updated
		}
	}
	return c.load(secret.Data, secret.ResourceVersion)
}

func (c *Certs) logChanges(ref string, changes []string) {
	for _, change := range changes {
		c.opts.Log.Info("webhook certificates: "+change, "secret", ref)
	}
}

// Run renews the certificate as it nears expiry until ctx ends. It checks
// every interval, and at once when the Secret is deleted or changed by
// someone else: another replica's renewal or newly staged CA is taken up
// here without waiting for the next check, and a Secret deleted by mistake
// is written back before a replica starting meanwhile issues a CA that the
// others' certificates are not signed by.
func (c *Certs) Run(ctx context.Context, every time.Duration) {
	changed := make(chan struct{}, 1)
	go c.follow(ctx, changed)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
		if err := c.Ensure(ctx); err != nil && ctx.Err() == nil {
			c.opts.Log.Error(err, "checking the webhook certificates; trying again at the next check", "in", every)
		}
	}
}

// follow watches the Secret by name, keeping none of its data, and signals
// changed when it is deleted or holds what this replica has not loaded.
func (c *Certs) follow(ctx context.Context, changed chan<- struct{}) {
	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.opts.Name).String()
	}
	inf := coreinformers.NewFilteredSecretInformer(c.client, c.opts.Namespace, 0, cache.Indexers{}, byName)
	if err := inf.SetTransform(func(obj any) (any, error) {
		if s, ok := obj.(*corev1.Secret); ok {
			s.Data, s.StringData, s.ManagedFields = nil, nil, nil
		}
		return obj, nil
	}); err != nil {
		c.opts.Log.Error(err, "following the certificate Secret; changes are seen at each check only")
		return
	}
	signal := func() {
		select {
		case changed <- struct{}{}:
		default: // a check is due already
		}
	}
	notLoaded := func(obj any) {
		if s, ok := obj.(*corev1.Secret); ok && s.ResourceVersion != c.loadedVersion() {
			signal()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notLoaded,
		UpdateFunc: func(_, obj any) { notLoaded(obj) },
		DeleteFunc: func(any) { signal() },
	}); err != nil {
		c.opts.Log.Error(err, "following the certificate Secret; changes are seen at each check only")
		return
	}
	inf.Run(ctx.Done())
}

func (c *Certs) loadedVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.resourceVersion
}

func (c *Certs) load(data map[string][]byte, resourceVersion string) error {
	pair, leaf, err := servingPair(data)
	if err != nil {
		return fmt.Errorf("the serving certificate in Secret %s/%s is invalid: %w", c.opts.Namespace, c.opts.Name, err)
	}
	certificateExpiry.WithLabelValues("serving").Set(float64(leaf.NotAfter.Unix()))
	for _, ca := range parseCerts(data[secretCACert]) {
		if leaf.CheckSignatureFrom(ca) == nil {
			certificateExpiry.WithLabelValues("ca").Set(float64(ca.NotAfter.Unix()))
		}
	}
	c.mu.Lock()
	// Only a new bundle is registered: a serving certificate renewed by
	// the same CA is trusted already.
	changed := c.caPEM == nil || !bytes.Equal(c.caPEM, data[secretCACert])
	c.cert, c.caPEM, c.data, c.resourceVersion = &pair, data[secretCACert], maps.Clone(data), resourceVersion
	notify := slices.Clone(c.notify)
	c.mu.Unlock()
	if changed {
		for _, f := range notify {
			f(data[secretCACert])
		}
	}
	return nil
}
