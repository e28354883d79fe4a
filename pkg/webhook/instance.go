package webhook

import (
	"context"
	jsonstd "encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/json"

	agentv1 "github.com/kro-agent/kro-agent/pkg/apis/agent/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// RGDLookup finds the RGD serving a kind.
type RGDLookup func(ctx context.Context, gvk schema.GroupVersionKind) (*v1alpha1.ResourceGraphDefinition, bool)

// InstanceLabeler puts the ownership labels, the ApplySet annotations and
// the finalizer on instances at admission, so they are there from the
// first write and the agent has nothing to add.
//
// Every instance create and update waits for it, so it reads only the
// instance's metadata and answers with the JSON patch operations that
// add what is missing, rather than decoding the whole instance, encoding
// it again and diffing the two.
//
// An update by anyone but the agent keeps the ownership labels the guard
// policy protects as the instance had them, rather than moving them to the
// agent's values: the policy admits only the agent's change of them, so an
// update that moved a label kro-agent has not moved yet (after an upgrade
// of kro-agent, or on an instance created while the webhook was down) would
// be denied for a change its author never made, and a suspended instance
// could not even be resumed. The agent moves them at its next reconcile.
type InstanceLabeler struct {
	Lookup RGDLookup
	// AgentUser is the agent's own username: its updates (the labels it
	// adds at reconcile, its applies of instances an RGD composes) get the
	// agent's values.
	AgentUser string
}

var _ admission.Handler = (*InstanceLabeler)(nil)

// instanceMetadata is the part of an instance the labeler reads.
type instanceMetadata struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	Finalizers        []string          `json:"finalizers"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
}

// Handle implements admission.Handler.
func (l *InstanceLabeler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var inst struct {
		Metadata *instanceMetadata `json:"metadata"`
	}
	// Case-sensitive, as the API server reads objects.
	if err := json.UnmarshalCaseSensitivePreserveInts(req.Object.Raw, &inst); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the instance's metadata: %w", err))
	}
	gvk := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	def, ok := l.Lookup(ctx, gvk)
	if !ok {
		return admission.Allowed("not an instance of a served kind")
	}
	meta := inst.Metadata
	if meta == nil {
		meta = &instanceMetadata{}
	}
	if meta.DeletionTimestamp != nil {
		return admission.Allowed("")
	}
	ns := meta.Namespace
	if ns == "" {
		ns = req.Namespace
	}
	name := meta.Name
	if name == "" {
		name = req.Name
	}
	id := ownership.Instance{GVK: gvk, Name: name, Namespace: ns}
	labels := ownership.InstanceLabelsOver(ownership.RGD{Name: def.Name, UID: string(def.UID)}, id, meta.Labels)
	if name == "" {
		// Created with generateName: the API server names the instance
		// after admission, so its ApplySet ID is not known yet. The agent
		// sets it on its first reconcile, where it puts anything missing.
		delete(labels, v1alpha1.LabelApplySetID)
	}
	annotations := ownership.ApplySetAnnotations(id, ownership.TemplateGroupKinds(def), nil)
	// The instance before an update, read once for what follows; a
	// create, or an old object that does not decode, has none.
	before, decoded := readBefore(req)
	var unset []string
	if decoded && !l.fromAgent(req) {
		labels, unset = keepOwnership(before.Metadata.Labels, meta.Labels, labels)
	}
	resp := admission.Patched("", metadataPatch(inst.Metadata, labels, unset, annotations)...)
	if w := regionChangeWarning(&before, meta.Labels[agentv1.LabelRegion]); w != "" {
		resp = resp.WithWarnings(w)
	}
	if w := keptLabelsWarning(before.Metadata.Labels, meta.Labels, labels); w != "" {
		resp = resp.WithWarnings(w)
	}
	if len(unset) > 0 {
		resp = resp.WithWarnings("kro-agent sets these labels on its instances and has not set them on this one yet, so the update leaves them out: " + strings.Join(unset, ", "))
	}
	return resp
}

// fromAgent tells whether the agent itself made the request.
func (l *InstanceLabeler) fromAgent(req admission.Request) bool {
	return l.AgentUser != "" && req.UserInfo.Username == l.AgentUser
}

// instanceBefore is what the labeler reads of an instance before an
// update.
type instanceBefore struct {
	Metadata struct {
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Placement *agentv1.Placement `json:"placement"`
		v1alpha1.InstanceStatus
	} `json:"status"`
}

// readBefore reads the instance before an update; decoded says its labels
// were read. Its status is decoded apart, so that one someone wrote by
// hand, which need not decode, does not lose the labels.
func readBefore(req admission.Request) (before instanceBefore, decoded bool) {
	if req.Operation != admissionv1.Update {
		return before, false
	}
	var old struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Status jsonstd.RawMessage `json:"status"`
	}
	if err := json.UnmarshalCaseSensitivePreserveInts(req.OldObject.Raw, &old); err != nil {
		return before, false
	}
	before.Metadata = old.Metadata
	if len(old.Status) > 0 {
		status := before.Status
		if err := json.UnmarshalCaseSensitivePreserveInts(old.Status, &status); err == nil {
			before.Status = status
		}
	}
	return before, true
}

// keepOwnership turns want, the labels the agent sets on an instance, into
// those an update by someone else leaves it with: each label the guard
// policy protects keeps its value from before the update (old), and one
// the instance did not have stays unset; unset lists those the update
// itself adds (have holds its labels), which it must leave out.
func keepOwnership(old, have, want map[string]string) (kept map[string]string, unset []string) {
	kept = make(map[string]string, len(want))
	for k, v := range want {
		if !guard.Guarded(k) {
			kept[k] = v
			continue
		}
		if was, ok := old[k]; ok {
			kept[k] = was
		} else if _, ok := have[k]; ok {
			unset = append(unset, k)
		}
	}
	slices.Sort(unset)
	return kept, unset
}

// keptLabelsWarning warns that labels of kro-agent's that the request set
// to other values, or removed, keep kro-agent's values (want): the write is
// admitted all the same, and without a word kubectl label would report the
// instance relabelled. before are the instance's labels before an update
// (none on create). A label the request left as it was says nothing, so one
// kro-agent itself moves on (its version, after an upgrade) is put right
// quietly. "" when there is nothing to warn of.
func keptLabelsWarning(before, have, want map[string]string) string {
	var kept []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, has := have[k]
		was, had := before[k]
		switch {
		case has && v == want[k], !has && !had, has == had && v == was:
			continue
		}
		kept = append(kept, k+"="+want[k])
	}
	if len(kept) == 0 {
		return ""
	}
	return "kro-agent sets these labels on its instances, and they keep its values: " + strings.Join(kept, ", ")
}

// regionChangeWarning warns, as the update that changes it is admitted,
// that a changed region label does not move an instance already placed, or
// one reconciled in the local cluster (before is the instance before the
// update): its Placed condition says the same afterwards. "" when the label
// is unchanged or the instance neither.
func regionChangeWarning(before *instanceBefore, label string) string {
	if before.Metadata.Labels[agentv1.LabelRegion] == label {
		return ""
	}
	p := before.Status.Placement
	switch {
	case p != nil && p.Cluster != "":
		return p.StaysDespite(label)
	case label != "" && before.Status.ReconciledLocally(p != nil):
		return agentv1.StaysLocal(label)
	}
	return ""
}

// metadataPatch is the JSON patch that gives an instance's metadata (nil
// when the object has none) the labels, replacing values it has, without
// the labels unset, the annotations where it has none of those keys (the
// agent keeps them current: a value already there is its), and the agent's
// finalizer.
func metadataPatch(meta *instanceMetadata, labels map[string]string, unset []string, annotations map[string]string) []jsonpatch.JsonPatchOperation {
	finalizers := []string{v1alpha1.Finalizer}
	if meta == nil {
		return []jsonpatch.JsonPatchOperation{jsonpatch.NewOperation("add", "/metadata", map[string]any{
			"labels": labels, "annotations": annotations, "finalizers": finalizers,
		})}
	}
	ops := mapPatch(nil, "/metadata/labels", meta.Labels, labels, true)
	for _, k := range unset {
		ops = append(ops, jsonpatch.NewOperation("remove", "/metadata/labels/"+pointerEscaper.Replace(k), nil))
	}
	ops = mapPatch(ops, "/metadata/annotations", meta.Annotations, annotations, false)
	switch {
	case slices.Contains(meta.Finalizers, v1alpha1.Finalizer):
	case meta.Finalizers == nil:
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/finalizers", finalizers))
	default:
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/finalizers/-", v1alpha1.Finalizer))
	}
	return ops
}

// mapPatch appends the operations that put want's entries into the string
// map at path, which holds have (nil: there is none), replacing the values
// of keys it has when replace is set. "add" replaces an existing member
// of an object (RFC 6902, 4.1).
func mapPatch(ops []jsonpatch.JsonPatchOperation, path string, have, want map[string]string, replace bool) []jsonpatch.JsonPatchOperation {
	if have == nil {
		return append(ops, jsonpatch.NewOperation("add", path, want))
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[k]; ok && (!replace || v == want[k]) {
			continue
		}
		ops = append(ops, jsonpatch.NewOperation("add", path+"/"+pointerEscaper.Replace(k), want[k]))
	}
	return ops
}

// pointerEscaper escapes a key for a JSON pointer (RFC 6901, 3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
