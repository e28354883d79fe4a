package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objectRef names one managed object.
type objectRef struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// appliedCache remembers the digest of the last successful apply of each
// object. It is a cache: losing it (a restart) costs one apply per object.
type appliedCache struct {
	mu      sync.Mutex
	digests map[objectRef][32]byte
	byInst  map[types.UID][]objectRef
}

func newAppliedCache() *appliedCache {
	return &appliedCache{digests: map[objectRef][32]byte{}, byInst: map[types.UID][]objectRef{}}
}

func (c *appliedCache) get(ref objectRef) ([32]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.digests[ref]
	return d, ok
}

func (c *appliedCache) put(inst types.UID, ref objectRef, d [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.digests[ref]; !ok {
		c.byInst[inst] = append(c.byInst[inst], ref)
	}
	c.digests[ref] = d
}

func (c *appliedCache) forget(inst types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ref := range c.byInst[inst] {
		delete(c.digests, ref)
	}
	delete(c.byInst, inst)
}

func digest(obj map[string]any) [32]byte {
	b, _ := json.Marshal(obj)
	return sha256.Sum256(b)
}

// apply makes live match desired with server-side apply, unless nothing
// would change: the same desired object was applied before and every field
// of it still holds in the live object (so no one has drifted it). A
// quiet cluster therefore costs no writes. It returns the object as it now
// is and whether it wrote.
func (e *Engine) apply(ctx context.Context, inst types.UID, ref objectRef, desired map[string]any, live *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	d := digest(desired)
	if live != nil && live.GetDeletionTimestamp() == nil {
		if last, ok := e.applied.get(ref); ok && last == d && contains(live.Object, desired) {
			return live, false, nil
		}
		if _, ok := e.applied.get(ref); !ok && contains(live.Object, desired) {
			// After a restart: the live object already says everything we
			// would; remember that instead of writing it again.
			e.applied.put(inst, ref, d)
			return live, false, nil
		}
	}
	u := &unstructured.Unstructured{Object: desired}
	out, err := e.opts.Dynamic.Resource(ref.GVR).Namespace(ref.Namespace).Apply(ctx, ref.Name, u,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	countWrite("apply", err)
	if err != nil {
		return nil, false, err
	}
	e.applied.put(inst, ref, d)
	return out, true, nil
}

// contains reports whether every field set in want holds the same value in
// have. Maps may have more keys in have (defaults, other managers' fields);
// lists must match item by item, each item by the same rule.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if wv == nil {
					continue
				}
				return false
			}
			if !contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return equalScalar(have, want)
	}
}

// equalScalar compares JSON scalars, treating the integer kinds alike (the
// rendered object and the decoded one may differ in Go type).
func equalScalar(a, b any) bool {
	if af, ok := number(a); ok {
		bf, ok := number(b)
		return ok && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
