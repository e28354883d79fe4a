// Package owned writes the cluster-scoped objects kro-agent owns outright,
// its webhook configurations and guard policies: each is written whole,
// replacing whatever anyone else changed in it (a server-side apply would
// keep what another manager added to a list that is a set, such as a
// binding's validationActions), and checked by its UID and generation, so
// that checking an untouched object costs one read and no write. An
// object found as kro-agent last wrote it is not written again, so a
// restarted agent registers itself with reads alone.
package owned

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/jsonvalue"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// AnnotationWritten holds, on an object Put wrote, a digest of what it
// wrote: a later Put of the same object finds it, and the object as it
// wrote it, and writes nothing. A field a later version of kro-agent no
// longer sets changes the digest, where the object still holds it.
const AnnotationWritten = "agent.kro.run/written"

// Object is a pointer to a typed API object.
type Object[T any] interface {
	*T
	metav1.Object
}

// Version is what Put left: the object, by its UID, and the generation of
// its spec. The API server's own writes to its status (an admission
// policy's type checking, right after each change) change neither, so
// they are not taken for someone else's edit. Nor does a change to its
// labels or annotations alone, which changes nothing the API server does
// with it.
type Version struct {
	UID        types.UID
	Generation int64
}

func versionOf(obj metav1.Object) Version {
	return Version{UID: obj.GetUID(), Generation: obj.GetGeneration()}
}

// Put creates obj, or replaces the existing object's contents with it, and
// returns the Version it left. An update that changes nothing is not
// written to storage, so putting an object that is already right leaves
// its generation as it was.
func Put[T any, P Object[T]](ctx context.Context, obj P,
	get func(context.Context, string, metav1.GetOptions) (P, error),
	create func(context.Context, P, metav1.CreateOptions) (P, error),
	update func(context.Context, P, metav1.UpdateOptions) (P, error)) (Version, error) {
	return PutFrom(ctx, obj.GetName(), func(P) P { return obj }, get, create, update)
}

// PutFrom is Put of the object desired makes of the one there now (nil
// when there is none): for an object part of which the caller keeps as
// someone else left it. The update is conditional on the read desired saw,
// so a change made in between fails it with a conflict instead of being
// undone.
func PutFrom[T any, P Object[T]](ctx context.Context, name string, desired func(cur P) P,
	get func(context.Context, string, metav1.GetOptions) (P, error),
	create func(context.Context, P, metav1.CreateOptions) (P, error),
	update func(context.Context, P, metav1.UpdateOptions) (P, error)) (Version, error) {
	cur, err := get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cur, err = create(ctx, stamped(desired(nil)), metav1.CreateOptions{FieldManager: ownership.FieldManager})
	case err == nil:
		obj := stamped(desired(cur))
		if asWritten(cur, obj) {
			return versionOf(cur), nil
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
		cur, err = update(ctx, obj, metav1.UpdateOptions{FieldManager: ownership.FieldManager})
	}
	if err != nil {
		return Version{}, err
	}
	return versionOf(cur), nil
}

// stamped sets obj's AnnotationWritten to the digest of the rest of obj,
// and returns obj.
func stamped[P metav1.Object](obj P) P {
	annotations := maps.Clone(obj.GetAnnotations())
	delete(annotations, AnnotationWritten)
	obj.SetAnnotations(annotations)
	raw, err := json.Marshal(obj)
	if err != nil {
		return obj // written unstamped, and so written again next time
	}
	sum := sha256.Sum256(raw)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationWritten] = hex.EncodeToString(sum[:16])
	obj.SetAnnotations(annotations)
	return obj
}

// asWritten tells whether cur, the object there, is want (stamped) as Put
// wrote it and no one changed since: it carries want's digest, holds every
// field want sets (the API server fills in defaults besides), and no one
// but kro-agent has written a field of it (a field someone added shows as
// their entry in its managed fields; one someone removed, as missing).
// The API server's writes to its status do not count.
func asWritten[P metav1.Object](cur, want P) bool {
	stamp, ok := want.GetAnnotations()[AnnotationWritten]
	if !ok || cur.GetAnnotations()[AnnotationWritten] != stamp {
		return false
	}
	// Without managed fields (cleared, or not kept), who wrote what
	// cannot be told.
	ours := false
	for _, m := range cur.GetManagedFields() {
		if m.Subresource != "" {
			continue
		}
		if m.Manager != ownership.FieldManager {
			return false
		}
		ours = true
	}
	if !ours {
		return false
	}
	have, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
	if err != nil {
		return false
	}
	wanted, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return false
	}
	// Of metadata, what the writer gives; the rest is the API server's.
	meta, _ := wanted["metadata"].(map[string]any)
	wanted["metadata"] = map[string]any{"name": meta["name"], "labels": meta["labels"], "annotations": meta["annotations"]}
	return jsonvalue.Contains(have, wanted)
}

// At reports whether the object called name is still at version: not
// deleted (nor deleted and made again), its spec not changed since it was
// put. A missing object is not an error.
func At[P metav1.Object](ctx context.Context, get func(context.Context, string, metav1.GetOptions) (P, error), name string, version Version) (bool, error) {
	cur, err := get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return versionOf(cur) == version, nil
}
