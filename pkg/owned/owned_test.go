package owned

import (
	"context"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// store is an API server's storage of one binding, as far as Put sees it:
// it fills in a default and records who wrote the object.
type store struct {
	obj    *admissionregv1.ValidatingAdmissionPolicyBinding
	writes int
}

func (s *store) get(context.Context, string, metav1.GetOptions) (*admissionregv1.ValidatingAdmissionPolicyBinding, error) {
	if s.obj == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "validatingadmissionpolicybindings"}, "b")
	}
	return s.obj.DeepCopy(), nil
}

func (s *store) write(obj *admissionregv1.ValidatingAdmissionPolicyBinding, manager string) (*admissionregv1.ValidatingAdmissionPolicyBinding, error) {
	s.writes++
	stored := obj.DeepCopy()
	if stored.Spec.MatchResources == nil {
		// The API server's default.
		stored.Spec.MatchResources = &admissionregv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{}}
	}
	stored.UID, stored.Generation = "u", 1
	if s.obj != nil {
		stored.Generation = s.obj.Generation + 1
	}
	stored.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate}}
	s.obj = stored
	return stored.DeepCopy(), nil
}

func (s *store) put(t *testing.T, actions ...admissionregv1.ValidationAction) {
	t.Helper()
	b := &admissionregv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"app.kubernetes.io/managed-by": "kro-agent"}},
		Spec:       admissionregv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: actions},
	}
	_, err := Put(context.Background(), b, s.get,
		func(_ context.Context, obj *admissionregv1.ValidatingAdmissionPolicyBinding, o metav1.CreateOptions) (*admissionregv1.ValidatingAdmissionPolicyBinding, error) {
			return s.write(obj, o.FieldManager)
		},
		func(_ context.Context, obj *admissionregv1.ValidatingAdmissionPolicyBinding, o metav1.UpdateOptions) (*admissionregv1.ValidatingAdmissionPolicyBinding, error) {
			return s.write(obj, o.FieldManager)
		})
	if err != nil {
		t.Fatal(err)
	}
}

// An object found as Put wrote it, defaults filled in, is not written
// again; one someone else changed, removed a field from or added one to,
// or one kro-agent now wants otherwise, is.
func TestPutWritesOnlyWhatChanged(t *testing.T) {
	deny := admissionregv1.Deny
	for _, tc := range []struct {
		name   string
		change func(s *store)
		want   []admissionregv1.ValidationAction
		writes int
	}{
		{"unchanged", func(*store) {}, []admissionregv1.ValidationAction{deny}, 0},
		{"the API server wrote its status", func(s *store) {
			s.obj.ManagedFields = append(s.obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kube-apiserver", Subresource: "status"})
		}, []admissionregv1.ValidationAction{deny}, 0},
		{"kro-agent wants another value", func(*store) {}, []admissionregv1.ValidationAction{admissionregv1.Warn}, 1},
		{"kro-agent no longer sets a field", func(*store) {}, nil, 1},
		{"someone changed a field", func(s *store) {
			s.obj.Spec.ValidationActions = []admissionregv1.ValidationAction{admissionregv1.Audit}
			s.obj.ManagedFields = append(s.obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl-edit"})
		}, []admissionregv1.ValidationAction{deny}, 1},
		{"someone added a field", func(s *store) {
			s.obj.Spec.ParamRef = &admissionregv1.ParamRef{Name: "x"}
			s.obj.ManagedFields = append(s.obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl-edit"})
		}, []admissionregv1.ValidationAction{deny}, 1},
		{"someone removed a field", func(s *store) { s.obj.Spec.ValidationActions = nil }, []admissionregv1.ValidationAction{deny}, 1},
		{"someone removed a label", func(s *store) { s.obj.Labels = nil }, []admissionregv1.ValidationAction{deny}, 1},
		{"managed fields cleared", func(s *store) { s.obj.ManagedFields = nil }, []admissionregv1.ValidationAction{deny}, 1},
		{"written before the digest", func(s *store) { delete(s.obj.Annotations, AnnotationWritten) }, []admissionregv1.ValidationAction{deny}, 1},
	} {
		s := &store{}
		s.put(t, deny)
		if s.writes != 1 || s.obj.Annotations[AnnotationWritten] == "" || s.obj.ManagedFields[0].Manager != ownership.FieldManager {
			t.Fatalf("%s: the first Put wrote %d times, stored %+v", tc.name, s.writes, s.obj.ObjectMeta)
		}
		tc.change(s)
		s.put(t, tc.want...)
		if got := s.writes - 1; got != tc.writes {
			t.Errorf("%s: %d writes, want %d", tc.name, got, tc.writes)
		}
		if tc.writes == 1 {
			// What it wrote is found as written the next time.
			s.put(t, tc.want...)
			if got := s.writes - 2; got != 0 {
				t.Errorf("%s: written again after it was put right", tc.name)
			}
		}
	}
}
