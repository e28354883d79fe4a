package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Paths the webhooks are served on.
const (
	PathValidateRGD    = "/validate-rgd"
	PathMutateInstance = "/mutate-instance"
)

// Server serves the admission webhooks over TLS with the certificate Certs
// provides, picking up renewed certificates without a restart.
type Server struct {
	Addr     string
	Certs    *Certs
	RGDs     *RGDValidator
	Instance *InstanceLabeler
	// Ready is closed once the listener is open.
	Ready chan struct{}
}

// Handler returns the HTTP handler of both webhooks.
func (s *Server) Handler() http.Handler {
	recover := true
	mux := http.NewServeMux()
	mux.Handle(PathValidateRGD, &admission.Webhook{Handler: s.RGDs, RecoverPanic: &recover})
	mux.Handle(PathMutateInstance, &admission.Webhook{Handler: s.Instance, RecoverPanic: &recover})
	return mux
}

// Start serves until ctx ends. Webhooks run on every replica, leader or not.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.Certs.GetCertificate},
	}
	if s.Ready != nil {
		close(s.Ready)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// NeedLeaderElection lets every replica serve admission requests.
func (s *Server) NeedLeaderElection() bool { return false }
