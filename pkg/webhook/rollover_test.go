package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

var (
	rolloverStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rolloverOpts  = CertOptions{Validity: 9 * time.Hour, CAValidity: 90 * time.Hour, DNSNames: []string{"kro-agent-webhook.kro-system.svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}
)

// mustRollover runs rollover and keeps data when it has nothing to change.
func mustRollover(t *testing.T, data map[string][]byte, now time.Time, opts CertOptions) (map[string][]byte, []string) {
	t.Helper()
	next, changes, err := rollover(data, now, opts)
	if err != nil {
		t.Fatal(err)
	}
	if next == nil {
		if len(changes) != 0 {
			t.Fatalf("nothing written, yet changes told: %q", changes)
		}
		return data, nil
	}
	return next, changes
}

// verifies says whether the serving certificate of served is trusted by
// the bundle of registered at now, as the API server checks it.
func verifies(served, registered map[string][]byte, now time.Time) error {
	pair, err := tls.X509KeyPair(served[secretTLSCert], served[secretTLSKey])
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(registered[secretCACert]) {
		return fmt.Errorf("no CA in the bundle")
	}
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: "kro-agent-webhook.kro-system.svc", Roots: pool, CurrentTime: now})
	return err
}

func signerOf(t *testing.T, data map[string][]byte, now time.Time) *x509.Certificate {
	t.Helper()
	a := findAuthority(parseCerts(data[secretCACert]), data[secretCAKey], now)
	if a == nil {
		t.Fatalf("no signing CA at %s", now)
	}
	return a.cert
}

func TestRolloverIssuesOnceAndThenLeavesTheSecretAlone(t *testing.T) {
	data, changes := mustRollover(t, nil, rolloverStart, rolloverOpts)
	if len(changes) != 2 || !strings.HasPrefix(changes[0], "issued a new CA") || !strings.HasPrefix(changes[1], "issued a new serving certificate: there was none") {
		t.Errorf("changes of a first issue: %q", changes)
	}
	if err := verifies(data, data, rolloverStart); err != nil {
		t.Fatalf("the serving certificate is not trusted by its own bundle: %v", err)
	}
	if n := len(parseCerts(data[secretCACert])); n != 1 {
		t.Errorf("a new Secret's bundle holds %d CAs, want 1", n)
	}
	if _, ok := data[secretNextCAKey]; ok {
		t.Error("a new Secret stages a next CA already")
	}
	for _, at := range []time.Duration{0, time.Hour, 5 * time.Hour} {
		if next, changes, err := rollover(data, rolloverStart.Add(at), rolloverOpts); next != nil || err != nil {
			t.Errorf("%s later: rewritten (%q, %v), want left alone", at, changes, err)
		}
	}
}

func TestRolloverRenewsTheServingCertificateWithTheSameBundle(t *testing.T) {
	data, _ := mustRollover(t, nil, rolloverStart, rolloverOpts)
	at := rolloverStart.Add(7 * time.Hour) // less than a third of 9h left
	renewed, changes := mustRollover(t, data, at, rolloverOpts)
	if len(changes) != 1 || !strings.Contains(changes[0], "less than a third of its validity was left") {
		t.Errorf("changes: %q", changes)
	}
	if string(renewed[secretTLSCert]) == string(data[secretTLSCert]) {
		t.Fatal("the serving certificate was not renewed")
	}
	if string(renewed[secretCACert]) != string(data[secretCACert]) || string(renewed[secretCAKey]) != string(data[secretCAKey]) {
		t.Error("renewing the serving certificate changed the CA")
	}

	// Serving another name needs a new certificate, from the same CA.
	moved := rolloverOpts
	moved.DNSNames = []string{"other.kro-system.svc"}
	renamed, changes := mustRollover(t, data, rolloverStart.Add(time.Hour), moved)
	if len(changes) != 1 || changes[0] != "issued a new serving certificate: it was not for other.kro-system.svc" {
		t.Errorf("changes for a new name: %q", changes)
	}
	if string(renamed[secretCACert]) != string(data[secretCACert]) {
		t.Error("a new name changed the CA")
	}
}

// Replicas read the Secret at their own checks and each writes the bundle
// it last read into the webhook configurations, at any moment (a leader
// registers as instance kinds come and go). Whatever any of them last
// wrote, the API server must trust what every one of them serves, through
// two replacements of the CA.
func TestRolloverKeepsEveryReplicaTrustedByEveryBundle(t *testing.T) {
	const check = time.Hour // less than a third of the 9h validity
	offsets := []time.Duration{0, 20 * time.Minute, 50 * time.Minute}
	var secret map[string][]byte
	loaded := make([]map[string][]byte, len(offsets))
	signers := map[string]bool{}
	staged := 0
	step := 10 * time.Minute
	end := rolloverStart.Add(2*rolloverOpts.CAValidity + 10*time.Hour)
	for now := rolloverStart; now.Before(end); now = now.Add(step) {
		for i, off := range offsets {
			if loaded[i] != nil && (now.Sub(rolloverStart)-off)%check != 0 {
				continue
			}
			next, changes := mustRollover(t, secret, now, rolloverOpts)
			for _, c := range changes {
				if strings.HasPrefix(c, "added a new CA") {
					staged++
				}
			}
			secret, loaded[i] = next, next
		}
		signers[string(signerOf(t, secret, now).Raw)] = true
		for i, served := range loaded {
			for j, registered := range loaded {
				if served == nil || registered == nil {
					continue
				}
				if err := verifies(served, registered, now); err != nil {
					t.Fatalf("at %s, replica %d's certificate is not trusted by the bundle replica %d registers: %v", now.Sub(rolloverStart), i, j, err)
				}
			}
		}
	}
	if len(signers) < 3 || staged < 2 {
		t.Errorf("%d CAs signed and %d were staged over %s; the test wants two replacements", len(signers), staged, end.Sub(rolloverStart))
	}
	if n := len(parseCerts(secret[secretCACert])); n > 2 {
		t.Errorf("the bundle holds %d CAs; expired ones should have left it", n)
	}
}

// An agent that was down past the moment a new CA should have joined the
// bundle stages it when it comes back, and lets it sign only a third of a
// validity later, not at once.
func TestRolloverStagesLateAndWaitsBeforeSigning(t *testing.T) {
	data, _ := mustRollover(t, nil, rolloverStart, rolloverOpts)
	old := signerOf(t, data, rolloverStart)
	back := old.NotAfter.Add(-8 * time.Hour) // less than one validity left, none staged
	staged, changes := mustRollover(t, data, back, rolloverOpts)
	if _, ok := staged[secretNextCAKey]; !ok || !signerOf(t, staged, back).Equal(old) {
		t.Fatalf("coming back late: %q; want a CA staged and the old one still signing", changes)
	}
	if err := verifies(staged, data, back); err != nil {
		t.Errorf("the serving certificate after staging is not trusted by the bundle before it: %v", err)
	}
	if soon, _ := mustRollover(t, staged, back.Add(2*time.Hour), rolloverOpts); !signerOf(t, soon, back).Equal(old) {
		t.Error("the staged CA signed before a third of a validity had passed")
	}
	at := back.Add(3*time.Hour + 2*time.Minute)
	promoted, changes := mustRollover(t, staged, at, rolloverOpts)
	if signerOf(t, promoted, at).Equal(old) {
		t.Fatalf("a third of a validity after staging: %q; want the staged CA signing", changes)
	}
	if err := verifies(promoted, staged, at); err != nil {
		t.Errorf("the serving certificate of the new CA is not trusted by the bundle staged before it: %v", err)
	}
	if n := len(parseCerts(promoted[secretCACert])); n != 2 {
		t.Errorf("the bundle after the new CA took over holds %d CAs, want the old one too", n)
	}
}

// A Secret whose CA expired while no agent ran gets a new CA at once: no
// replica can serve anything the old one signed.
func TestRolloverReplacesAnExpiredCA(t *testing.T) {
	data, _ := mustRollover(t, nil, rolloverStart, rolloverOpts)
	later := rolloverStart.Add(rolloverOpts.CAValidity + time.Hour)
	fresh, changes := mustRollover(t, data, later, rolloverOpts)
	if err := verifies(fresh, fresh, later); err != nil {
		t.Fatalf("after the CA expired: %v (%q)", err, changes)
	}
	if n := len(parseCerts(fresh[secretCACert])); n != 1 {
		t.Errorf("the bundle holds %d CAs, want the expired one gone", n)
	}
	if !strings.HasPrefix(changes[0], "issued a new CA") {
		t.Errorf("changes: %q", changes)
	}
}

// Loading the certificates reports when the serving certificate and the
// CA that signed it expire, the one that signs among those the bundle
// holds while a new CA is staged.
func TestLoadReportsWhenTheCertificatesExpire(t *testing.T) {
	data, _ := mustRollover(t, nil, time.Now(), rolloverOpts)
	signer := signerOf(t, data, time.Now())
	// A CA staged beside it does not sign yet.
	staged, _ := mustRollover(t, data, signer.NotAfter.Add(-2*rolloverOpts.Validity+time.Hour), rolloverOpts)
	if _, ok := staged[secretNextCAKey]; !ok {
		t.Fatal("no CA staged")
	}
	c := NewCerts(nil, rolloverOpts)
	if err := c.load(staged, "1"); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(staged[secretTLSCert], staged[secretTLSKey])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testutil.ToFloat64(certificateExpiry.WithLabelValues("serving")), float64(pair.Leaf.NotAfter.Unix()); got != want {
		t.Errorf("serving certificate expiry %v, want %v", got, want)
	}
	if got, want := testutil.ToFloat64(certificateExpiry.WithLabelValues("ca")), float64(signer.NotAfter.Unix()); got != want {
		t.Errorf("CA expiry %v, want the signing CA's %v", got, want)
	}
}
