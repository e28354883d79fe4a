package v1alpha1

import (
	"errors"
	"testing"
)

// kubectl kro finds the resource a GraphResolved message names by reading
// back what ResourceError wrote.
func TestResourceNamedReadsBackAResourceError(t *testing.T) {
	err := &ResourceError{ID: "deploy", Err: errors.New("spec.replicas: ${schema.spec.n} is \"3\" (a string), but the field expects int")}
	if id, ok := ResourceNamed(err.Error()); !ok || id != "deploy" {
		t.Errorf("ResourceNamed(%q) = %q, %v; want deploy", err.Error(), id, ok)
	}
	if !errors.Is(err, err.Err) {
		t.Error("a ResourceError does not unwrap to its cause")
	}
	for _, message := range []string{"projecting status: port: no such key", "resource : x", "resources not ready", ""} {
		if id, ok := ResourceNamed(message); ok {
			t.Errorf("ResourceNamed(%q) = %q, want none", message, id)
		}
	}
}
