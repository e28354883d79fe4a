package reconcile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A conflict is the cache trailing the API server, retried at once: not an
// error for whoever reads the agent's log. Anything else is one.
func TestConflictsAreNotLoggedAsErrors(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	e := &Engine{opts: EngineOptions{Log: log}}
	key := InstanceKey{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, Namespace: "default", Name: "demo"}
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "kro.run", Resource: "webapps"}, "demo", errors.New("the object has been modified"))
	e.logFailure(key, fmt.Errorf("writing status: %w", conflict))
	if len(lines) != 0 {
		t.Errorf("a conflict was logged at the default level: %q", lines)
	}
	e.logFailure(key, errors.New("applying config: forbidden"))
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="reconciling instance"`) || !strings.Contains(lines[0], "forbidden") {
		t.Errorf("a failure was logged as %q", lines)
	}
}
