// Package owned writes the cluster-scoped objects kro-agent owns outright,
// its webhook configurations and guard policies: each is written whole,
// replacing whatever anyone else changed in it (a server-side apply would
// keep what another manager added to a list that is a set, such as a
// binding's validationActions), and checked by its UID and generation, so
// that checking an untouched object costs one read and no write.
package owned

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

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
		cur, err = create(ctx, desired(nil), metav1.CreateOptions{FieldManager: ownership.FieldManager})
	case err == nil:
		obj := desired(cur)
		obj.SetResourceVersion(cur.GetResourceVersion())
		cur, err = update(ctx, obj, metav1.UpdateOptions{FieldManager: ownership.FieldManager})
	}
	if err != nil {
		return Version{}, err
	}
	return versionOf(cur), nil
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
