package kinds

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// answers resolves with the errors given, one per call, then with info.
type answers struct {
	errs  []error
	calls int
}

func (a *answers) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	a.calls++
	if a.calls <= len(a.errs) {
		return nil, a.errs[a.calls-1]
	}
	return &Info{GVK: gvk}, nil
}

func TestAwaitingWaitsForAKindOnItsWay(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.net", Version: "v1", Kind: "Gizmo"}
	notPublished := &schemaNotPublished{gvk: gvk}
	notServed := fmt.Errorf("example.net/v1/Gizmo: the cluster does not serve example.net/v1: %w", ErrNotFound)
	never := make([]error, 100)
	for i := range never {
		never[i] = notServed
	}
	for _, tc := range []struct {
		name               string
		errs               []error
		coming             func(schema.GroupVersionKind) bool
		minCalls, maxCalls int
		wantErr            bool
	}{
		{name: "served and published", minCalls: 1, maxCalls: 1},
		{name: "served, published a moment later", errs: []error{notPublished, notPublished}, minCalls: 3, maxCalls: 3},
		{name: "served a moment later, then published", errs: []error{notServed, notPublished}, minCalls: 3, maxCalls: 3},
		// A typo is denied within the second, after a few looks.
		{name: "never served", errs: never, minCalls: 2, maxCalls: 6, wantErr: true},
		// Served after more than a second: too late for a kind nobody
		// said was coming, in time for one another RGD generates.
		{name: "served late", errs: never[:8], minCalls: 2, maxCalls: 6, wantErr: true},
		{name: "served late, known to be coming", errs: never[:8], coming: func(schema.GroupVersionKind) bool { return true }, minCalls: 9, maxCalls: 9},
		// Discovery lists it, but its CRD is being deleted.
		{name: "uninstalled", errs: []error{&UninstalledError{GVK: gvk, CRD: "gizmos.example.net"}, notServed}, minCalls: 1, maxCalls: 1, wantErr: true},
		{name: "another error", errs: []error{errors.New("connection refused")}, minCalls: 1, maxCalls: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &answers{errs: tc.errs}
			info, err := Awaiting(context.Background(), r, tc.coming).Resolve(gvk)
			if got := err != nil; got != tc.wantErr {
				t.Fatalf("Resolve = %v, %v; want an error: %v", info, err, tc.wantErr)
			}
			if err != nil && r.calls <= len(tc.errs) && !errors.Is(err, tc.errs[r.calls-1]) {
				t.Errorf("Resolve returned %v, not the last lookup's error %v", err, tc.errs[r.calls-1])
			}
			if r.calls < tc.minCalls || r.calls > tc.maxCalls {
				t.Errorf("%d lookups, want %d to %d", r.calls, tc.minCalls, tc.maxCalls)
			}
		})
	}
}

func TestAwaitingStopsWithItsRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &answers{errs: []error{&schemaNotPublished{}, &schemaNotPublished{}}}
	if _, err := Awaiting(ctx, r, nil).Resolve(schema.GroupVersionKind{Kind: "Gizmo"}); err == nil || r.calls != 1 {
		t.Errorf("after the request ended: %d lookups, error %v; want 1 lookup and the error", r.calls, err)
	}
}
