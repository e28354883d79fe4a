package reconcile

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// An instance seen deleted with the finalizer "orphan" is remembered as
// such after the garbage collector has taken the finalizer off, until it
// is forgotten; one deleted without it, or not deleted, is not.
func TestOrphanRequestsOutliveTheFinalizer(t *testing.T) {
	held := func(t *testing.T, doc string) *heldObject {
		t.Helper()
		h, err := holdJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var o orphanRequests
	o.seen(held(t, `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"a","uid":"u1","finalizers":["orphan","kro.run/finalizer"]}}`))
	o.seen(held(t, `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"b","uid":"u2","deletionTimestamp":"2026-11-29T05:00:00Z","finalizers":["kro.run/finalizer"]}}`))
	o.seen(held(t, `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"c","uid":"u3","deletionTimestamp":"2026-11-29T05:00:00Z","finalizers":["orphan","kro.run/finalizer"]}}`))

	afterGC := &unstructured.Unstructured{}
	afterGC.SetUID("u3")
	afterGC.SetFinalizers([]string{"kro.run/finalizer"})
	if !o.asked(afterGC) {
		t.Error("the instance seen deleted with the finalizer orphan is not remembered once it is gone")
	}
	for _, uid := range []string{"u1", "u2"} {
		other := &unstructured.Unstructured{}
		other.SetUID(types.UID(uid))
		if o.asked(other) {
			t.Errorf("%s: asked to orphan", uid)
		}
	}
	withFinalizer := &unstructured.Unstructured{}
	withFinalizer.SetUID("u4")
	withFinalizer.SetFinalizers([]string{metav1.FinalizerOrphanDependents})
	if !o.asked(withFinalizer) {
		t.Error("an instance carrying the finalizer orphan is not asked to orphan")
	}
	o.forget("u3")
	if o.asked(afterGC) {
		t.Error("forgotten, still asked to orphan")
	}
}

// A patch naming another UID than the object's is refused as an invalid
// change of metadata.uid: the object was made again since.
func TestReplacedSinceReadsTheUIDRefusal(t *testing.T) {
	gk := schema.GroupKind{Kind: "ConfigMap"}
	uid := apierrors.NewInvalid(gk, "a", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "field is immutable")})
	data := apierrors.NewInvalid(gk, "a", field.ErrorList{field.Invalid(field.NewPath("data"), "x", "bad")})
	if !replacedSince(uid) || replacedSince(data) || replacedSince(errors.New("boom")) || replacedSince(nil) {
		t.Errorf("replacedSince: uid %v, data %v", replacedSince(uid), replacedSince(data))
	}
}
