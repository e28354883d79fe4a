package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
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
	// Log receives what the HTTP server itself reports (a connection
	// that failed or closed before its TLS handshake), which would
	// otherwise go to standard error unstructured.
	Log logr.Logger
}

// Handler returns the HTTP handler of both webhooks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(PathValidateRGD, measured("validate-rgd", s.RGDs))
	mux.Handle(PathMutateInstance, measured("mutate-instance", s.Instance))
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
		ErrorLog:          log.New(serverLog{s.Log}, "", 0),
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

// serverLog writes the HTTP server's messages to a structured logger. A
// failed TLS handshake is most often a TCP probe or a client that gave up,
// so it is logged at debug level; the rest as errors.
type serverLog struct{ log logr.Logger }

func (l serverLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, "TLS handshake error") {
		l.log.V(1).Info(msg)
	} else {
		l.log.Error(nil, msg)
	}
	return len(p), nil
}

// NeedLeaderElection lets every replica serve admission requests.
func (s *Server) NeedLeaderElection() bool { return false }
