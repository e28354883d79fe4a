package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// RGDLookup finds the RGD serving a kind.
type RGDLookup func(ctx context.Context, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, bool)

// InstanceLabeler puts the ownership labels, the ApplySet annotations and
// the finalizer on instances at admission, so they are there from the
// first write and the agent has nothing to add.
type InstanceLabeler struct {
	Lookup RGDLookup
}

var _ admission.Handler = (*InstanceLabeler)(nil)

// Handle implements admission.Handler.
func (l *InstanceLabeler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	inst := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &inst.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the instance: %w", err))
	}
	gvk := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	def, ok := l.Lookup(ctx, gvk)
	if !ok {
		return admission.Allowed("not an instance of a served kind")
	}
	if inst.GetDeletionTimestamp() != nil {
		return admission.Allowed("")
	}
	ns := inst.GetNamespace()
	if ns == "" {
		ns = req.Namespace
	}
	name := inst.GetName()
	if name == "" {
		name = req.Name
	}
	// The UID is not assigned yet on create; the agent fills that label in
	// on its first reconcile.
	id := ownership.Instance{GVK: gvk, Name: name, Namespace: ns}
	labels := inst.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range ownership.InstanceLabels(ownership.RGD{Name: def.Name, UID: string(def.UID)}, id) {
		labels[k] = v
	}
	inst.SetLabels(labels)
	annotations := inst.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range ownership.ApplySetAnnotations(id, ownership.TemplateGroupKinds(def), nil) {
		// The agent keeps them current; a value already there is its.
		if _, ok := annotations[k]; !ok {
			annotations[k] = v
		}
	}
	inst.SetAnnotations(annotations)
	if !slices.Contains(inst.GetFinalizers(), v1alpha1.Finalizer) {
		inst.SetFinalizers(append(inst.GetFinalizers(), v1alpha1.Finalizer))
	}
	mutated, err := json.Marshal(inst.Object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}
