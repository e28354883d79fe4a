package clusters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Every client built from an Observed config tells the registry whether
// the API server answered: any status is an answer, a refused connection
// is not, and a request its caller gave up on tells nothing.
func TestObservedConnectionsReportWhetherTheClusterAnswered(t *testing.T) {
	arrived := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces/held" {
			// Held until the client gives up on it.
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		if r.Header.Get("Authorization") != "" {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`, http.StatusUnauthorized)
			return
		}
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}))
	r := NewRegistry()
	// Each request a recheck's spacing after the one before.
	now := time.Unix(0, 0)
	r.now = func() time.Time {
		now = now.Add(recheckSpacing)
		return now
	}
	var told []bool
	r.OnRecheck(func(_ string, answered bool) { told = append(told, answered) })
	// Checked unreachable, then reachable, so that each finding asks once.
	r.Set(Entry{Name: "c", Config: &rest.Config{}})
	client := kubernetes.NewForConfigOrDie(r.Observed("c", &rest.Config{Host: server.URL}))
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "x", metav1.GetOptions{}); err == nil {
		t.Fatal("the server answers 404, the client saw no error")
	}
	if !slices.Equal(told, []bool{true}) {
		t.Fatalf("after a 404: told %v, want [true]", told)
	}

	r.Set(Entry{Name: "c", Reachable: true, Config: &rest.Config{}})
	// Credentials the cluster refuses: as good as no answer.
	refused := kubernetes.NewForConfigOrDie(r.Observed("c", &rest.Config{Host: server.URL, BearerToken: "revoked"}))
	if _, err := refused.CoreV1().Namespaces().Get(context.Background(), "x", metav1.GetOptions{}); err == nil {
		t.Fatal("the server answers 401, the client saw no error")
	}
	if !slices.Equal(told, []bool{true, false}) {
		t.Fatalf("after a 401: told %v, want [true false]", told)
	}

	told = nil
	r.Set(Entry{Name: "c", Reachable: true, Config: &rest.Config{}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := client.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{}); err == nil {
		t.Fatal("the request was canceled, the client saw no error")
	}
	if len(told) != 0 {
		t.Fatalf("a canceled request told %v", told)
	}
	server.Close()
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "x", metav1.GetOptions{}); err == nil {
		t.Fatal("the server is closed, the client saw no error")
	}
	if !slices.Equal(told, []bool{false}) {
		t.Fatalf("after the server closed: told %v, want [false]", told)
	}
}
