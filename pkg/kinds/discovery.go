package kinds

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/openapi"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// Discovery resolves kinds served by a cluster: its resource lists and its
// OpenAPI v3 documents. Answers are cached until Invalidate, so compiling
// many RGDs costs one discovery round per group-version.
type Discovery struct {
	client discovery.DiscoveryInterface
	schema *resolver.ClientDiscoveryResolver

	mu    sync.Mutex
	cache map[schema.GroupVersionKind]*Info
}

// NewDiscovery returns a resolver backed by client.
func NewDiscovery(client discovery.DiscoveryInterface) *Discovery {
	return &Discovery{
		client: client,
		schema: &resolver.ClientDiscoveryResolver{Discovery: freshOpenAPI{client}},
		cache:  map[schema.GroupVersionKind]*Info{},
	}
}

// freshOpenAPI fetches OpenAPI documents anew each time. A cached discovery
// client would keep every document it fetched for the life of the process
// (megabytes for the core group alone); the kinds resolved from them, all
// that is needed, are cached by Discovery instead.
type freshOpenAPI struct{ discovery.DiscoveryInterface }

func (f freshOpenAPI) OpenAPIV3() openapi.Client { return openapi.NewClient(f.RESTClient()) }

// Invalidate forgets everything, for when CRDs come and go.
func (d *Discovery) Invalidate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cache = map[schema.GroupVersionKind]*Info{}
	if c, ok := d.client.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
}

// schemaNotPublished: discovery lists the kind, its OpenAPI schema is not
// there, or could not be read (unreadable).
type schemaNotPublished struct {
	gvk        schema.GroupVersionKind
	unreadable error
}

// NotPublished reports a kind served without its OpenAPI schema published
// yet, or with a schema that could not be read: a CRD created moments ago,
// which resolves on its own shortly, or one being deleted, whose group's
// OpenAPI document the API server takes down as discovery still lists it.
func NotPublished(err error) bool { return errors.As(err, new(*schemaNotPublished)) }

func (e *schemaNotPublished) Error() string {
	if e.unreadable != nil {
		return fmt.Sprintf("the API server serves %s but its OpenAPI schema could not be read (%v); a CRD created or deleted moments ago changes it for a few seconds", gvkString(e.gvk), e.unreadable)
	}
	return fmt.Sprintf("the API server serves %s but has not published its OpenAPI schema yet; a CRD created moments ago needs a few seconds", gvkString(e.gvk))
}

func (e *schemaNotPublished) Unwrap() error { return e.unreadable }

// Resolve implements Resolver. A kind that cached discovery does not know,
// or knows but without a published schema, is looked up once more after
// the cache is dropped: a CRD created since the cache was filled (another
// RGD's kind, a controller just installed) must resolve without waiting
// for something else to drop it, and one deleted since must be reported
// as not served rather than as not published yet.
func (d *Discovery) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if info, ok := d.cache[gvk]; ok {
		return info, nil
	}
	info, err := d.resolve(gvk)
	if c, cached := d.client.(discovery.CachedDiscoveryInterface); cached &&
		(errors.Is(err, ErrNotFound) || errors.Is(err, memory.ErrCacheNotFound) || NotPublished(err)) {
		c.Invalidate()
		info, err = d.resolve(gvk)
	}
	if errors.Is(err, memory.ErrCacheNotFound) {
		return nil, fmt.Errorf("%s: the cluster does not serve %s: %w", gvkString(gvk), gvk.GroupVersion(), ErrNotFound)
	}
	return info, err
}

// resolve asks discovery for gvk and caches what it finds.
func (d *Discovery) resolve(gvk schema.GroupVersionKind) (*Info, error) {
	list, err := d.client.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if errors.Is(err, memory.ErrCacheNotFound) {
		return nil, err
	}
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s: the cluster does not serve %s: %w", gvkString(gvk), gvk.GroupVersion(), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind != gvk.Kind || strings.Contains(r.Name, "/") {
			continue
		}
		s, err := d.schema.ResolveSchema(gvk)
		if errors.Is(err, resolver.ErrSchemaNotFound) {
			// The API server publishes a new CRD's schema a few seconds
			// after serving it; the OpenAPI documents are fetched anew
			// each time, so the next attempt sees it.
			return nil, &schemaNotPublished{gvk: gvk}
		}
		if apierrors.IsNotFound(err) || errors.As(err, new(*json.SyntaxError)) {
			// A CRD being deleted: the API server takes its group's
			// document down (or answers it empty) while discovery still
			// lists the kind, for a moment.
			return nil, &schemaNotPublished{gvk: gvk, unreadable: err}
		}
		if err != nil {
			return nil, fmt.Errorf("OpenAPI schema of %s: %w", gvkString(gvk), err)
		}
		info := &Info{GVK: gvk, Resource: r.Name, Namespaced: r.Namespaced, Schema: markDyn(s)}
		d.cache[gvk] = info
		return info, nil
	}
	return nil, fmt.Errorf("%s: the cluster serves %s but not kind %s: %w", gvkString(gvk), gvk.GroupVersion(), gvk.Kind, ErrNotFound)
}

// Suggest implements Suggester for a kind the cluster does not serve: the
// same kind at the versions the cluster serves its group at (an API moved
// on from v1alpha1), a kind of the group spelt nearly alike, or a group
// the cluster serves spelt nearly alike.
func (d *Discovery) Suggest(gvk schema.GroupVersionKind) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	groups, err := d.client.ServerGroups()
	if err != nil {
		return ""
	}
	var others []string
	for _, g := range groups.Groups {
		if g.Name != gvk.Group {
			others = append(others, g.Name)
			continue
		}
		var sameKind, names []string
		var served []schema.GroupVersionKind
		// The preferred version first: of equally close kinds, its wins.
		for _, v := range g.Versions {
			list, err := d.client.ServerResourcesForGroupVersion(v.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range list.APIResources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				if r.Kind == gvk.Kind {
					sameKind = append(sameKind, "apiVersion "+v.GroupVersion)
				}
				served = append(served, schema.FromAPIVersionAndKind(v.GroupVersion, r.Kind))
				names = append(names, r.Kind)
			}
		}
		if len(sameKind) > 0 {
			return fmt.Sprintf("the cluster serves %s as %s", gvk.Kind, strings.Join(sameKind, " or "))
		}
		if kind, ok := spelling.Closest(gvk.Kind, names); ok {
			best := served[slices.Index(names, kind)]
			return fmt.Sprintf("did you mean %s, apiVersion %s?", best.Kind, best.GroupVersion())
		}
		return ""
	}
	if group, ok := spelling.Closest(gvk.Group, others); ok && gvk.Group != "" {
		return fmt.Sprintf("the cluster serves no group %s: did you mean %s?", gvk.Group, group)
	}
	return ""
}
