package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	// third of it is left. The CA lives ten times as long.
	Validity time.Duration
}

// Certs serves the current certificate and renews it before it expires.
type Certs struct {
	opts   CertOptions
	client kubernetes.Interface

	mu     sync.RWMutex
	cert   *tls.Certificate
	leaf   *x509.Certificate
	caPEM  []byte
	notify []func(caBundle []byte)
}

// NewCerts returns a certificate source backed by a Secret.
func NewCerts(client kubernetes.Interface, opts CertOptions) *Certs {
	if opts.Validity == 0 {
		opts.Validity = 90 * 24 * time.Hour
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

// CABundle is the PEM of the CA that signs the serving certificate.
func (c *Certs) CABundle() []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.caPEM
}

// Ensure loads the certificates from the Secret, creating or renewing them
// as needed. It is called at start and then periodically.
func (c *Certs) Ensure(ctx context.Context) error {
	secrets := c.client.CoreV1().Secrets(c.opts.Namespace)
	secret, err := secrets.Get(ctx, c.opts.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		data, err := c.issue(nil, nil)
		if err != nil {
			return err
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.opts.Name, Namespace: c.opts.Namespace}, Type: corev1.SecretTypeOpaque, Data: data}
		created, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return c.Ensure(ctx) // another replica won the race
		}
		if err != nil {
			return fmt.Errorf("creating certificate Secret %s/%s: %w", c.opts.Namespace, c.opts.Name, err)
		}
		secret = created
	case err != nil:
		return fmt.Errorf("reading certificate Secret %s/%s: %w", c.opts.Namespace, c.opts.Name, err)
	default:
		if c.needsRenewal(secret.Data) {
			data, err := c.issue(secret.Data[secretCACert], secret.Data[secretCAKey])
			if err != nil {
				return err
			}
			secret.Data = data
			// resourceVersion guards against two replicas renewing at once.
			updated, err := secrets.Update(ctx, secret, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				return c.Ensure(ctx)
			}
			if err != nil {
				return fmt.Errorf("renewing the serving certificate: %w", err)
			}
			secret = updated
		}
	}
	return c.load(secret.Data)
}

// Rotate issues a new serving certificate now (same CA).
func (c *Certs) Rotate(ctx context.Context) error {
	secrets := c.client.CoreV1().Secrets(c.opts.Namespace)
	secret, err := secrets.Get(ctx, c.opts.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	data, err := c.issue(secret.Data[secretCACert], secret.Data[secretCAKey])
	if err != nil {
		return err
	}
	secret.Data = data
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return c.load(data)
}

// Run renews the certificate as it nears expiry until ctx ends.
func (c *Certs) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = c.Ensure(ctx) // a failure is retried at the next tick
		}
	}
}

func (c *Certs) needsRenewal(data map[string][]byte) bool {
	pair, err := tls.X509KeyPair(data[secretTLSCert], data[secretTLSKey])
	if err != nil {
		return true
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return true
	}
	left := time.Until(leaf.NotAfter)
	if left < leaf.NotAfter.Sub(leaf.NotBefore)/3 {
		return true
	}
	// The names may have changed with the flags.
	for _, ip := range c.opts.IPs {
		if leaf.VerifyHostname(ip.String()) != nil {
			return true
		}
	}
	for _, n := range c.opts.DNSNames {
		if leaf.VerifyHostname(n) != nil {
			return true
		}
	}
	caCert, err := parseCert(data[secretCACert])
	return err != nil || time.Until(caCert.NotAfter) < c.opts.Validity
}

// issue returns Secret data with a serving certificate signed by the given
// CA, or by a new CA when there is none (or it is about to expire).
func (c *Certs) issue(caCertPEM, caKeyPEM []byte) (map[string][]byte, error) {
	now := time.Now()
	caCert, errCert := parseCert(caCertPEM)
	caKey, errKey := parseKey(caKeyPEM)
	if errCert != nil || errKey != nil || time.Until(caCert.NotAfter) < c.opts.Validity {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(), Subject: pkix.Name{CommonName: "kro-agent webhook CA"},
			NotBefore: now.Add(-time.Minute), NotAfter: now.Add(10 * c.opts.Validity),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			return nil, err
		}
		caCert, _ = x509.ParseCertificate(der)
		caKey = key
		caCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyDER, _ := x509.MarshalECPrivateKey(key)
		caKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kro-agent webhook"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(c.opts.Validity),
		DNSNames: c.opts.DNSNames, IPAddresses: c.opts.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return map[string][]byte{
		secretCACert:  caCertPEM,
		secretCAKey:   caKeyPEM,
		secretTLSCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		secretTLSKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func (c *Certs) load(data map[string][]byte) error {
	pair, err := tls.X509KeyPair(data[secretTLSCert], data[secretTLSKey])
	if err != nil {
		return fmt.Errorf("the serving certificate in Secret %s/%s is invalid: %w", c.opts.Namespace, c.opts.Name, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	c.mu.Lock()
	changed := c.leaf == nil || !leaf.Equal(c.leaf) || string(c.caPEM) != string(data[secretCACert])
	c.cert, c.leaf, c.caPEM = &pair, leaf, data[secretCACert]
	notify := append([]func([]byte){}, c.notify...)
	c.mu.Unlock()
	if changed {
		for _, f := range notify {
			f(data[secretCACert])
		}
	}
	return nil
}

func parseCert(p []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(p []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Leaf is the current serving certificate, for tests and diagnostics.
func (c *Certs) Leaf() *x509.Certificate {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.leaf
}
