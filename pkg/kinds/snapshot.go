package kinds

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Snapshot is the stored form of what a cluster serves: its resources per
// group-version and the OpenAPI v3 component schemas they refer to. It is
// written by hack/openapi-snapshot from a fresh local cluster.
type Snapshot struct {
	KubernetesVersion string `json:"kubernetesVersion"`
	// Resources maps "group/version" ("v1" for the core group) to its kinds.
	Resources map[string][]SnapshotResource `json:"resources"`
	// Schemas are OpenAPI v3 components by name, shared by all versions.
	Schemas map[string]*spec.Schema `json:"schemas"`
}

// SnapshotResource is one kind of a group-version.
type SnapshotResource struct {
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespaced bool   `json:"namespaced"`
	// Schema names the component schema of the kind.
	Schema string `json:"schema"`
}

//go:embed builtin.json.gz
var builtinSnapshot []byte

var (
	builtinOnce sync.Once
	builtin     *snapshotResolver
	builtinErr  error
)

// Builtin resolves the kinds built into the Kubernetes version the snapshot
// was taken from. It needs no cluster. The snapshot is decoded on first use.
func Builtin() (Resolver, error) {
	builtinOnce.Do(func() {
		var s *Snapshot
		s, builtinErr = decodeSnapshot(builtinSnapshot)
		if builtinErr == nil {
			builtin = newSnapshotResolver(s)
		}
	})
	return builtin, builtinErr
}

// LazyBuiltin is Builtin decoded on the first kind it is asked for: the
// agent resolves kinds through discovery first and most often never needs
// the snapshot, whose decoded schemas would otherwise stay in memory.
func LazyBuiltin() Resolver { return lazyBuiltin{} }

type lazyBuiltin struct{}

func (lazyBuiltin) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	r, err := Builtin()
	if err != nil {
		return nil, err
	}
	return r.Resolve(gvk)
}

// BuiltinVersion is the Kubernetes version of the embedded snapshot.
func BuiltinVersion() string {
	r, err := Builtin()
	if err != nil {
		return "unknown"
	}
	return r.(*snapshotResolver).snap.KubernetesVersion
}

func decodeSnapshot(gz []byte) (*Snapshot, error) {
	raw, err := gunzip(gz)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("decoding the embedded OpenAPI snapshot: %w", err)
	}
	return s, nil
}

func gunzip(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("reading the embedded OpenAPI snapshot: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded OpenAPI snapshot: %w", err)
	}
	return raw, nil
}

// EncodeSnapshot writes s compressed, in the form Builtin reads.
func EncodeSnapshot(w io.Writer, s *Snapshot) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	if err := enc.Encode(s); err != nil {
		return err
	}
	return zw.Close()
}

type snapshotResolver struct {
	snap  *Snapshot
	mu    sync.Mutex
	cache map[schema.GroupVersionKind]*Info
}

func newSnapshotResolver(s *Snapshot) *snapshotResolver {
	return &snapshotResolver{snap: s, cache: map[schema.GroupVersionKind]*Info{}}
}

func (r *snapshotResolver) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if info, ok := r.cache[gvk]; ok {
		return info, nil
	}
	for _, res := range r.snap.Resources[gvk.GroupVersion().String()] {
		if res.Kind != gvk.Kind {
			continue
		}
		s, err := resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
			s, ok := r.snap.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
			return s, ok
		}, "#/components/schemas/"+res.Schema)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", gvkString(gvk), err)
		}
		info := &Info{GVK: gvk, Resource: res.Resource, Namespaced: res.Namespaced, Schema: markDyn(s)}
		r.cache[gvk] = info
		return info, nil
	}
	return nil, fmt.Errorf("%s: %w", gvkString(gvk), ErrNotFound)
}
