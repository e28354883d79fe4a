package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
)

// An API server that answers only after a while (one restarting) is
// waited for, the wait logged once; one that never answers ends the wait
// with its last error; one that refuses the agent's credentials ends it at
// once.
func TestAwaitAPIServer(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	starting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if tries++; tries <= 2 {
			http.Error(w, "the server is starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"36","gitVersion":"v1.36.3"}`))
	}))
	defer starting.Close()
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	if err := awaitAPIServer(context.Background(), &rest.Config{Host: starting.URL}, time.Minute, log); err != nil {
		t.Fatalf("an API server answering on its third request: %v", err)
	}
	if tries != 3 || len(logged) != 2 || !strings.Contains(logged[0], "waiting for the API server to answer") || !strings.Contains(logged[1], "the API server answers") {
		t.Errorf("%d requests, logged %q; want 3 requests, the wait and its end logged once each", tries, logged)
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	err := awaitAPIServer(context.Background(), &rest.Config{Host: gone.URL}, 1500*time.Millisecond, funcr.New(func(string, string) {}, funcr.Options{}))
	if err == nil || !strings.Contains(err.Error(), "the API server at "+gone.URL+" did not answer within 1.5s: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("an API server that never answers: %v", err)
	}

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
	}))
	defer refusing.Close()
	start := time.Now()
	err = awaitAPIServer(context.Background(), &rest.Config{Host: refusing.URL}, time.Minute, funcr.New(func(string, string) {}, funcr.Options{}))
	if err == nil || !strings.Contains(err.Error(), "refuses the agent's credentials") || time.Since(start) > 5*time.Second {
		t.Errorf("an API server refusing the credentials: %v after %s, want that error at once", err, time.Since(start))
	}
}
