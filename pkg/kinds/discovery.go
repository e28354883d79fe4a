package kinds

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/openapi"

	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// Discovery resolves kinds served by a cluster: its resource lists and its
// OpenAPI v3 documents. A kind resolved is cached for as long as its
// group-version's OpenAPI document stays the same, so compiling many RGDs
// costs one discovery round per group-version, and a CRD whose schema
// changed (a field added by an RGD or an upgrade) is read again.
type Discovery struct {
	client discovery.DiscoveryInterface
	// now is the clock the OpenAPI index's age is measured with.
	now func() time.Time

	mu    sync.Mutex
	cache map[schema.GroupVersionKind]cachedKind
	// index is the OpenAPI v3 index as last read, at indexRead, with the
	// documents read through it (keptDocument); indexGen counts the reads,
	// so that the expiry of one leaves a newer one alone.
	index     map[string]openapi.GroupVersion
	indexRead time.Time
	indexGen  uint64
	// dropLater calls drop once an index has expired.
	dropLater func(drop func())
}

// cachedKind is a kind resolved, and the version of the OpenAPI document
// its schema came from.
type cachedKind struct {
	info *Info
	// document is the document's URL, whose hash parameter the API
	// server changes whenever the document does.
	document string
}

// indexMaxAge is how long the OpenAPI index is reused: a burst of
// resolutions (an RGD's kinds, or every RGD when the agent starts) reads it
// once, and a schema changed is seen within this and the API server's own
// delay in publishing it.
const indexMaxAge = time.Second

// NewDiscovery returns a resolver backed by client.
func NewDiscovery(client discovery.DiscoveryInterface) *Discovery {
	return &Discovery{client: client, now: time.Now, cache: map[schema.GroupVersionKind]cachedKind{},
		dropLater: func(drop func()) { time.AfterFunc(indexMaxAge, drop) }}
}

// openAPIIndex is the OpenAPI v3 index, read again when it is older than
// indexMaxAge. A document read through it is kept with it, so the kinds of
// one group-version resolved together (an RGD's ConfigMap and Service, both
// in the core group's 1.6 MB document) read it once; and both are dropped
// once the index expires. A cached discovery client would keep every
// document it fetched for the life of the process; the kinds resolved from
// them, all that is needed, are cached by Discovery instead.
func (d *Discovery) openAPIIndex() (map[string]openapi.GroupVersion, error) {
	if d.index != nil && d.now().Sub(d.indexRead) < indexMaxAge {
		return d.index, nil
	}
	paths, err := openapi.NewClient(d.client.RESTClient()).Paths()
	if err != nil {
		return nil, err
	}
	index := make(map[string]openapi.GroupVersion, len(paths))
	for path, gv := range paths {
		index[path] = &keptDocument{GroupVersion: gv}
	}
	d.indexGen++
	gen := d.indexGen
	d.index, d.indexRead = index, d.now()
	d.dropLater(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.indexGen == gen {
			d.index = nil
		}
	})
	return index, nil
}

// keptDocument is a document of the OpenAPI index, read from the API server
// once for as long as the index is used. Discovery's lock guards it.
type keptDocument struct {
	openapi.GroupVersion
	contentType string
	bytes       []byte
}

func (k *keptDocument) Schema(contentType string) ([]byte, error) {
	if k.bytes != nil && k.contentType == contentType {
		return k.bytes, nil
	}
	b, err := k.GroupVersion.Schema(contentType)
	if err != nil {
		return nil, err
	}
	k.contentType, k.bytes = contentType, b
	return b, nil
}

// indexedOpenAPI serves the OpenAPI index Discovery read to the schema
// resolver, which would read it again for each kind.
type indexedOpenAPI struct {
	discovery.DiscoveryInterface
	index map[string]openapi.GroupVersion
}

func (i indexedOpenAPI) OpenAPIV3() openapi.Client { return i }

func (i indexedOpenAPI) Paths() (map[string]openapi.GroupVersion, error) { return i.index, nil }

// documentOf is the URL of the OpenAPI document of gv in index, "" when
// the index lists none.
func documentOf(index map[string]openapi.GroupVersion, gv schema.GroupVersion) string {
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	if doc, ok := index[path]; ok {
		return doc.ServerRelativeURL()
	}
	return ""
}

// Invalidate forgets everything, for when CRDs come and go.
func (d *Discovery) Invalidate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cache = map[schema.GroupVersionKind]cachedKind{}
	d.index = nil
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

// Resolve implements Resolver. A kind resolved before is answered from the
// cache while its OpenAPI document is the one it was read from. A kind that
// cached discovery does not know, or knows but without a published schema,
// is looked up once more after the cache is dropped: a CRD created since
// the cache was filled (another RGD's kind, a controller just installed)
// must resolve without waiting for something else to drop it, and one
// deleted since must be reported as not served rather than as not
// published yet.
func (d *Discovery) Resolve(gvk schema.GroupVersionKind) (*Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	known, wasKnown := d.cache[gvk]
	if wasKnown {
		index, err := d.openAPIIndex()
		if err != nil || documentOf(index, gvk.GroupVersion()) == known.document {
			// Unchanged, or the index cannot be read just now: what
			// was resolved is the best answer there is.
			return known.info, nil
		}
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
	if wasKnown && NotPublished(err) {
		// Still served, its document gone or unreadable for a moment, as
		// while its CRD is deleted: the schema read before stands, and
		// what follows the CRDs says it is going.
		return known.info, nil
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
		index, err := d.openAPIIndex()
		if err != nil {
			return nil, fmt.Errorf("OpenAPI schema of %s: %w", gvkString(gvk), err)
		}
		s, err := (&resolver.ClientDiscoveryResolver{Discovery: indexedOpenAPI{d.client, index}}).ResolveSchema(gvk)
		if errors.Is(err, resolver.ErrSchemaNotFound) {
			// The API server publishes a new CRD's schema a few seconds
			// after serving it: the next attempt reads the index and
			// the document anew, and sees it.
			d.index = nil
			return nil, &schemaNotPublished{gvk: gvk}
		}
		if apierrors.IsNotFound(err) || errors.As(err, new(*json.SyntaxError)) {
			// A CRD being deleted: the API server takes its group's
			// document down (or answers it empty) while discovery still
			// lists the kind, for a moment.
			d.index = nil
			return nil, &schemaNotPublished{gvk: gvk, unreadable: err}
		}
		if err != nil {
			return nil, fmt.Errorf("OpenAPI schema of %s: %w", gvkString(gvk), err)
		}
		info := &Info{GVK: gvk, Resource: r.Name, Namespaced: r.Namespaced, Schema: markDyn(s)}
		d.cache[gvk] = cachedKind{info: info, document: documentOf(index, gvk.GroupVersion())}
		return info, nil
	}
	return nil, fmt.Errorf("%s: the cluster serves %s but not kind %s: %w", gvkString(gvk), gvk.GroupVersion(), gvk.Kind, ErrNotFound)
}

// EachResource calls f with each resource discovery lists for the versions
// of group g, in the order g gives them (the preferred one first), leaving
// out subresources and the versions whose list cannot be read.
func EachResource(client discovery.DiscoveryInterface, g metav1.APIGroup, f func(metav1.GroupVersionForDiscovery, metav1.APIResource)) {
	for _, v := range g.Versions {
		list, err := client.ServerResourcesForGroupVersion(v.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				f(v, r)
			}
		}
	}
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
		EachResource(d.client, g, func(v metav1.GroupVersionForDiscovery, r metav1.APIResource) {
			if r.Kind == gvk.Kind {
				sameKind = append(sameKind, "apiVersion "+v.GroupVersion)
			}
			served = append(served, schema.FromAPIVersionAndKind(v.GroupVersion, r.Kind))
			names = append(names, r.Kind)
		})
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
