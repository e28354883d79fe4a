package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/jsonscan"
)

// heldClient lists and watches objects of any kind for the agent's
// informers and decodes what the API server sends straight into
// heldObjects. A dynamic client would first decode every object into maps,
// which the informer then had to encode again to hold it: a quarter of the
// agent's CPU while the cluster's controllers update the Deployments it
// manages (the pods-bound benchmark).
type heldClient struct {
	rest rest.Interface
}

func newHeldClient(cfg *rest.Config) (*heldClient, error) {
	if cfg == nil {
		return nil, errors.New("creating the informers' client: no connection to the cluster was configured")
	}
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	c.NegotiatedSerializer = heldSerializer{}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	r, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating the informers' client: %w", err)
	}
	return &heldClient{rest: r}, nil
}

// listWatch lists and watches one resource in every namespace; tweak, when
// set, narrows the requests (a label selector).
func (c *heldClient) listWatch(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) *cache.ListWatch {
	at := resourcePath(gvr)
	params := func(opts *metav1.ListOptions) *metav1.ListOptions {
		if tweak != nil {
			tweak(opts)
		}
		return opts
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.rest.Get().AbsPath(at).
				SpecificallyVersionedParams(params(&opts), metav1.ParameterCodec, metav1.Unversioned).
				Do(ctx).Get()
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return c.rest.Get().AbsPath(at).
				SpecificallyVersionedParams(params(&opts), metav1.ParameterCodec, metav1.Unversioned).
				Watch(ctx)
		},
	}
}

// resourcePath is the URL path of a resource across all namespaces.
func resourcePath(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return path.Join("/api", gvr.Version, gvr.Resource)
	}
	return path.Join("/apis", gvr.Group, gvr.Version, gvr.Resource)
}

// heldList is a page of a list of held objects.
type heldList struct {
	metav1.ListMeta
	Items []heldObject
}

func (l *heldList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (l *heldList) DeepCopyObject() runtime.Object {
	out := &heldList{ListMeta: *l.ListMeta.DeepCopy(), Items: make([]heldObject, len(l.Items))}
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*heldObject)
	}
	return out
}

// heldCodec decodes the JSON of an object, a list, a watch event's frame or
// a Status. It only decodes: the informers' requests have no body.
type heldCodec struct{}

func (heldCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if ev, ok := into.(*metav1.WatchEvent); ok {
		return decodeWatchEvent(data, ev)
	}
	top, err := jsonscan.Members(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a response of the API server: %w", err)
	}
	var tm metav1.TypeMeta
	var items *jsonscan.Member
	for i, m := range top {
		v := data[m.ValueStart:m.End]
		switch m.Name {
		case "apiVersion":
			err = decodeString(v, &tm.APIVersion)
		case "kind":
			err = decodeString(v, &tm.Kind)
		case "items":
			items = &top[i]
		}
		if err != nil {
			return nil, nil, fmt.Errorf("decoding %s: %w", m.Name, err)
		}
	}
	gvk := tm.GroupVersionKind()
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "Status":
		// An error, in a response or a watch's ERROR event.
		status := &metav1.Status{}
		if err := json.Unmarshal(data, status); err != nil {
			return nil, nil, fmt.Errorf("decoding a Status: %w", err)
		}
		return status, &gvk, nil
	case strings.HasSuffix(tm.Kind, "List") && items != nil:
		list, err := holdList(data, top, *items)
		return list, &gvk, err
	}
	h, err := holdMembers(data, top)
	return h, &gvk, err
}

// decodeWatchEvent splits the frame of a watch event into its type and its
// object's bytes; client-go decodes the object on its own, with heldCodec.
func decodeWatchEvent(data []byte, ev *metav1.WatchEvent) (runtime.Object, *schema.GroupVersionKind, error) {
	members, err := jsonscan.Members(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a watch event: %w", err)
	}
	*ev = metav1.WatchEvent{}
	for _, m := range members {
		v := data[m.ValueStart:m.End]
		switch m.Name {
		case "type":
			if err := decodeString(v, &ev.Type); err != nil {
				return nil, nil, fmt.Errorf("decoding the type of a watch event: %w", err)
			}
		case "object":
			ev.Object.Raw = bytes.Clone(v)
		}
	}
	return ev, nil, nil
}

func holdList(data []byte, top []jsonscan.Member, items jsonscan.Member) (*heldList, error) {
	list := &heldList{}
	if md, ok := last(top, "metadata"); ok {
		if err := json.Unmarshal(data[md.ValueStart:md.End], &list.ListMeta); err != nil {
			return nil, fmt.Errorf("decoding the metadata of a list: %w", err)
		}
	}
	// The page was scanned whole already; finding where each item starts
	// and ends scans its items once more, and nothing is copied but what
	// the informer keeps.
	v := data[items.ValueStart:items.End]
	if string(v) == "null" {
		return list, nil
	}
	elements, err := jsonscan.Elements(v)
	if err != nil {
		return nil, fmt.Errorf("decoding the items of a list: %w", err)
	}
	list.Items = make([]heldObject, len(elements))
	for i, item := range elements {
		h, err := holdJSON(item)
		if err != nil {
			return nil, err
		}
		list.Items[i] = *h
	}
	return list, nil
}

func (heldCodec) Encode(runtime.Object, io.Writer) error {
	return errors.New("the informers' client sends no objects")
}

func (heldCodec) Identifier() runtime.Identifier { return "kro-agent-held-json" }

// heldSerializer offers heldCodec for JSON, the one media type the
// informers' client asks for, with JSON framing for watches.
type heldSerializer struct{}

func (heldSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       heldCodec{},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    heldCodec{},
			Framer:        serializerjson.Framer,
		},
	}}
}

func (heldSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (heldSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
