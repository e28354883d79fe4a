package webhook

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"
)

// secretNextCAKey holds the key of a CA that is in the trust bundle but
// does not sign yet.
const secretNextCAKey = "next-ca.key"

// backdate is how long before its issue a certificate is valid, for a
// clock a little behind this one.
const backdate = time.Minute

// rollover works out what the certificate Secret should hold at now: the
// data to write (nil when data is already so) and what changed, in words
// for the log.
//
// ca.crt is the trust bundle every replica writes into the webhook
// configurations, and ca.key the key of the CA in it that signs. A CA is
// replaced in two steps, so that no replica ever serves a certificate the
// API server does not trust yet. When two serving validities are left of
// the signing CA, a new one joins the bundle without signing (its key
// under next-ca.key), and every replica registers that bundle at its next
// check. The new CA signs once one validity is left, a whole validity
// later (more than three checks: a check comes more often than every third
// of a validity), so by then the bundle the API server holds trusts it
// whichever replica wrote it last. The old CA stays in the bundle until it
// expires: a replica that has not read the Secret again since still serves
// what it signed.
func rollover(data map[string][]byte, now time.Time, opts CertOptions) (map[string][]byte, []string, error) {
	bundle := parseCerts(data[secretCACert])
	signer := findAuthority(bundle, data[secretCAKey], now)
	next := findAuthority(bundle, data[secretNextCAKey], now)
	validity := opts.Validity
	var changes []string
	switch {
	case signer == nil && next != nil:
		signer, next = next, nil
		changes = append(changes, "the staged CA signs: the one that signed is missing or expired")
	case signer == nil:
		ca, err := newAuthority(now, opts.CAValidity)
		if err != nil {
			return nil, nil, err
		}
		signer = ca
		changes = append(changes, fmt.Sprintf("issued a new CA, valid until %s", stamp(ca.cert.NotAfter)))
	}
	left := signer.cert.NotAfter.Sub(now)
	if next == nil && left < 2*validity {
		ca, err := newAuthority(now, opts.CAValidity)
		if err != nil {
			return nil, nil, err
		}
		next = ca
		changes = append(changes, fmt.Sprintf("added a new CA to the trust bundle, to sign once the current one has %s left (it expires %s)", validity, stamp(signer.cert.NotAfter)))
	}
	// A staged CA normally waits a whole validity; one staged late (the
	// agent was down) waits a third of one, more than a check, unless the
	// signing CA expires before that.
	if next != nil && left < validity && (now.Sub(next.cert.NotBefore)-backdate >= validity/3 || left < validity/3) {
		changes = append(changes, fmt.Sprintf("the CA added to the trust bundle signs now; the one before stays in the bundle until it expires %s", stamp(signer.cert.NotAfter)))
		signer, next = next, nil
	}

	trusted := []*x509.Certificate{signer.cert}
	if next != nil {
		trusted = append(trusted, next.cert)
	}
	for _, c := range bundle {
		switch {
		case !now.Before(c.NotAfter):
			changes = append(changes, fmt.Sprintf("took the CA that expired %s out of the trust bundle", stamp(c.NotAfter)))
		case c.IsCA && !slices.ContainsFunc(trusted, c.Equal):
			trusted = append(trusted, c)
		}
	}
	// The same CAs make the same bytes, so a replica registering the
	// bundle while another moves the signing key writes nothing new.
	slices.SortFunc(trusted, func(a, b *x509.Certificate) int {
		if c := a.NotBefore.Compare(b.NotBefore); c != 0 {
			return c
		}
		return bytes.Compare(a.Raw, b.Raw)
	})
	out := map[string][]byte{secretCACert: encodeCerts(trusted), secretCAKey: signer.keyPEM}
	if next != nil {
		out[secretNextCAKey] = next.keyPEM
	}

	out[secretTLSCert], out[secretTLSKey] = data[secretTLSCert], data[secretTLSKey]
	if why := servingRenewal(data, signer.cert, now, opts); why != "" {
		cert, key, err := issueServing(signer, now, opts)
		if err != nil {
			return nil, nil, err
		}
		out[secretTLSCert], out[secretTLSKey] = cert, key
		changes = append(changes, "issued a new serving certificate: "+why)
	}
	if maps.EqualFunc(out, data, bytes.Equal) {
		return nil, nil, nil
	}
	return out, changes, nil
}

// authority is a CA and its key.
type authority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	keyPEM []byte
}

// findAuthority is the CA of the bundle whose key keyPEM holds, if it is
// valid at now.
func findAuthority(bundle []*x509.Certificate, keyPEM []byte, now time.Time) *authority {
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil
	}
	for _, c := range bundle {
		if c.IsCA && key.PublicKey.Equal(c.PublicKey) && !now.Before(c.NotBefore) && now.Before(c.NotAfter) {
			return &authority{cert: c, key: key, keyPEM: keyPEM}
		}
	}
	return nil
}

func newAuthority(now time.Time, lifetime time.Duration) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kro-agent webhook CA"},
		NotBefore: now.Add(-backdate), NotAfter: now.Add(lifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, keyPEM: keyPEM}, nil
}

// servingRenewal says why the serving certificate in data needs issuing
// again, or "" when it does not.
func servingRenewal(data map[string][]byte, signer *x509.Certificate, now time.Time, opts CertOptions) string {
	_, leaf, err := servingPair(data)
	if err != nil {
		return "there was none, or it did not match its key"
	}
	if !now.Before(leaf.NotAfter) {
		return fmt.Sprintf("it expired %s", stamp(leaf.NotAfter))
	}
	if leaf.NotAfter.Sub(now) < leaf.NotAfter.Sub(leaf.NotBefore.Add(backdate))/3 {
		return fmt.Sprintf("less than a third of its validity was left (it expires %s)", stamp(leaf.NotAfter))
	}
	for _, ip := range opts.IPs {
		if leaf.VerifyHostname(ip.String()) != nil {
			return "it was not for " + ip.String()
		}
	}
	for _, n := range opts.DNSNames {
		if leaf.VerifyHostname(n) != nil {
			return "it was not for " + n
		}
	}
	if leaf.CheckSignatureFrom(signer) != nil {
		return "it was signed by a CA that no longer signs"
	}
	return ""
}

// servingPair reads the serving certificate and its key from the Secret's
// data, and the certificate itself.
func servingPair(data map[string][]byte) (tls.Certificate, *x509.Certificate, error) {
	pair, err := tls.X509KeyPair(data[secretTLSCert], data[secretTLSKey])
	if err != nil || pair.Leaf != nil {
		return pair, pair.Leaf, err
	}
	// Leaf is nil only under GODEBUG=x509keypairleaf=0.
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return pair, leaf, err
}

// issueServing signs a serving certificate with ca, valid no longer than
// ca is.
func issueServing(ca *authority, now time.Time, opts CertOptions) (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kro-agent webhook"},
		NotBefore: now.Add(-backdate), NotAfter: minTime(now.Add(opts.Validity), ca.cert.NotAfter),
		DNSNames: opts.DNSNames, IPAddresses: opts.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	key, err = encodeKey(k)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// parseCerts reads every certificate of a PEM bundle, passing over what is
// not one.
func parseCerts(p []byte) []*x509.Certificate {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, p = pem.Decode(p)
		if block == nil {
			return certs
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil {
			certs = append(certs, c)
		}
	}
}

func encodeCerts(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

func encodeKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// stamp is how the log writes a time.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

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
