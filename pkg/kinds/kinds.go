// Package kinds answers what the graph compiler needs to know about a kind:
// its resource name, whether it is namespaced and its OpenAPI schema. Built-in
// kinds come from an embedded snapshot of the supported Kubernetes version,
// so validation works offline; anything else comes from the cluster through
// discovery, cached.
package kinds

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ErrNotFound is wrapped by Resolve when the kind is not known.
var ErrNotFound = errors.New("kind not found")

// NotServed reports an API server's answer that the resource type itself
// is not served (a 404 for its path, naming no object): its CRD was
// deleted, or a cached mapping is stale.
func NotServed(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

// UninstalledError is a kind whose CustomResourceDefinition was deleted or
// is being deleted, which discovery may go on listing for a while.
type UninstalledError struct {
	GVK schema.GroupVersionKind
	// CRD is the CustomResourceDefinition's name.
	CRD string
}

func (e *UninstalledError) Error() string {
	return fmt.Sprintf("%s: its CustomResourceDefinition %s is deleted or being deleted", gvkString(e.GVK), e.CRD)
}

// Unwrap makes an uninstalled kind one not found.
func (e *UninstalledError) Unwrap() error { return ErrNotFound }

// Info is what is known about one kind.
type Info struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, for REST paths and RBAC.
	Resource string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// Schema is the kind's full OpenAPI schema with references inlined. It
	// is shared: callers must not modify it.
	Schema *spec.Schema
	// Custom is set for a kind a CustomResourceDefinition serves, where
	// the resolver knows the CRDs: the API server fills the defaults of
	// its schema in whenever it reads an object, also one written before
	// the schema had them, which a cache of the objects does not see.
	Custom bool
}

// GVR is the kind's group, version and resource.
func (i *Info) GVR() schema.GroupVersionResource {
	return i.GVK.GroupVersion().WithResource(i.Resource)
}

// Resolver finds the Info of a kind.
type Resolver interface {
	Resolve(gvk schema.GroupVersionKind) (*Info, error)
}

// A Suggester is a Resolver that can say which kind it knows a kind it
// does not know was probably meant to be, for the error that refuses it.
type Suggester interface {
	// Suggest is "" when nothing comes close.
	Suggest(gvk schema.GroupVersionKind) string
}

// Suggest asks r, when it is a Suggester, what gvk was meant to be.
func Suggest(r Resolver, gvk schema.GroupVersionKind) string {
	if s, ok := r.(Suggester); ok {
		return s.Suggest(gvk)
	}
	return ""
}

// Chain tries resolvers in order; the first that knows the kind answers.
type Chain []Resolver

// Suggest implements Suggester: the first suggestion of its resolvers.
func (c Chain) Suggest(gvk schema.GroupVersionKind) string {
	for _, r := range c {
		if s := Suggest(r, gvk); s != "" {
			return s
		}
	}
	return ""
}

// Resolve implements Resolver.
func (c Chain) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	var errs []error
	for _, r := range c {
		info, err := r.Resolve(gvk)
		if err == nil {
			return info, nil
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, fmt.Errorf("%s: %w", gvkString(gvk), ErrNotFound)
}

func gvkString(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}
