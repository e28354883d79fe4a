package reconcile

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/conditions"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/refusal"
)

// currentStatus reads the agent's part of the instance's status.
func (r *run) currentStatus() *v1alpha1.InstanceStatus {
	raw, _ := r.inst.Object["status"].(map[string]any)
	return v1alpha1.DecodeInstanceStatus(raw)
}

// writeStatus writes state, conditions and projected fields, only when
// they differ from what the instance already says.
func (r *run) writeStatus(ctx context.Context, st *v1alpha1.InstanceStatus, projected map[string]any) error {
	old, _ := r.inst.Object["status"].(map[string]any)
	next := map[string]any{}
	for k, v := range projected {
		next[k] = v
	}
	if projected == nil {
		// Projection did not run (suspended, deleting): keep what is there.
		for k, v := range old {
			next[k] = v
		}
	}
	delete(next, graph.StatusPlacement)
	switch {
	case r.placement != nil:
		next[graph.StatusPlacement] = map[string]any{"cluster": r.placement.Cluster, "region": r.placement.Region}
	case r.waitsIn != "":
		next[graph.StatusPlacement] = map[string]any{"region": r.waitsIn}
	}
	if r.s.graph != nil && r.s.graph.ObservedGeneration {
		next[graph.StatusObservedGeneration] = r.inst.GetGeneration()
	}
	next[graph.StatusState] = string(st.State)
	conds, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		Conditions []metav1.Condition `json:"conditions"`
	}{st.Conditions})
	if err != nil {
		return err
	}
	next[graph.StatusConditions] = conds["conditions"]
	// Compared as JSON, which sorts keys and writes int and int64, typed
	// and untyped slices alike: most runs end here, with nothing to write.
	from, err := json.Marshal(old)
	if err != nil {
		return err
	}
	to, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if bytes.Equal(from, to) {
		return nil
	}
	body, err := statusPatch(from, to)
	if err != nil {
		return err
	}
	out, err := r.e.opts.Dynamic.Resource(r.s.gvr).Namespace(r.inst.GetNamespace()).
		Patch(ctx, r.inst.GetName(), types.MergePatchType, body, patchOptions, "status")
	countWrite("status", err)
	if err != nil {
		return r.statusRefused(err, projected)
	}
	r.e.statusRefusals.forget(r.inst.GetUID())
	r.recordTransitions(old, st)
	stored, _ := out.Object["status"].(map[string]any)
	dropped := droppedFields("status", next, stored, r.statusSchema())
	if len(dropped) > 0 {
		// The API server pruned fields its schema of the kind lacks: the
		// RGD's change added them to the CRD, and the API server does not
		// use the new schema yet. What it did store is remembered, so
		// that the next run, soon, writes them again.
		next = stored
	}
	// Remembered over the version the write was based on.
	version := r.e.statuses.wrote(r.inst, next, out)
	// A later write in the same run compares with what is there now.
	r.inst.Object["status"] = next
	r.inst.SetResourceVersion(version)
	if len(dropped) > 0 {
		return &statusNotStoredError{kind: r.key.GVK.Kind, fields: dropped}
	}
	return nil
}

// writeProjected writes the status with the fields the RGD projects. When
// the instance with them is larger than the API server stores, the status
// is written without them and says so, naming the largest; the same fields
// are not sent again for the same generation of the instance (a megabyte
// or more, on every pass), as they would be refused the same way.
func (r *run) writeProjected(ctx context.Context, status *v1alpha1.InstanceStatus, projected map[string]any, projErr error) error {
	uid, generation := r.inst.GetUID(), r.inst.GetGeneration()
	tooLarge := r.e.oversized.refused(uid, generation, projected)
	if tooLarge == nil {
		err := r.writeStatus(ctx, status, projected)
		switch {
		case err == nil:
			r.e.oversized.forget(uid)
			return nil
		case !refusal.TooLarge(err) || len(projected) == 0:
			// Without fields of its own, the status does not make the
			// instance too large: the instance is, which statusRefused
			// has told in an Event.
			return err
		}
		tooLarge = newStatusTooLargeError(projected, err)
		r.e.oversized.remember(uid, generation, projected, tooLarge)
	}
	if r.failed == nil {
		status.MarkStatusTooLarge(errors.Join(tooLarge, projErr))
	}
	status.ComputeState(false, r.applyErr != nil)
	// GraphResolved was True on the way, in a write that failed (or
	// would have).
	status.KeepTransitionTimes(r.currentStatus().Conditions)
	return errors.Join(r.applyErr, tooLarge, r.writeStatus(ctx, status, map[string]any{}))
}

// oversizedStatuses remembers, per instance, the projected status fields
// the API server refused as too large, with the generation of the
// instance they were projected for, and the refusal.
type oversizedStatuses struct {
	mu sync.Mutex
	m  map[types.UID]oversizedStatus
}

type oversizedStatus struct {
	generation int64
	digest     [sha256.Size]byte
	err        *statusTooLargeError
}

// refused is the refusal of the fields projected, when they are those
// refused before for the same generation of the instance uid.
func (o *oversizedStatuses) refused(uid types.UID, generation int64, projected map[string]any) *statusTooLargeError {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[uid]
	if !ok || s.generation != generation || s.digest != digest(projected) {
		return nil
	}
	return s.err
}

func (o *oversizedStatuses) remember(uid types.UID, generation int64, projected map[string]any, err *statusTooLargeError) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[types.UID]oversizedStatus{}
	}
	o.m[uid] = oversizedStatus{generation: generation, digest: digest(projected), err: err}
}

func (o *oversizedStatuses) forget(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, uid)
}

// digest identifies fields by their JSON, whose keys are sorted.
func digest(fields map[string]any) [sha256.Size]byte {
	b, _ := json.Marshal(fields)
	return sha256.Sum256(b)
}

// statusTooLargeError is a status write the API server refused for its
// size: the instance with the fields the RGD projects is larger than it
// stores. It names the largest fields, for the RGD's author to see which
// expressions carry too much.
type statusTooLargeError struct {
	message string // made once: the fields may weigh megabytes
	err     error  // the refusal
}

// newStatusTooLargeError is err, the refusal of a status with fields,
// saying how much each of them weighs.
func newStatusTooLargeError(fields map[string]any, err error) *statusTooLargeError {
	type field struct {
		name string
		size int
	}
	var weighed []field
	total := 0
	for name, v := range fields {
		b, _ := json.Marshal(v)
		weighed = append(weighed, field{name, len(b)})
		total += len(b)
	}
	slices.SortFunc(weighed, func(a, b field) int {
		return cmp.Or(cmp.Compare(b.size, a.size), strings.Compare(a.name, b.name))
	})
	sizes := make([]string, len(weighed))
	for i, f := range weighed {
		sizes[i] = f.name + " " + byteSize(f.size)
	}
	return &statusTooLargeError{err: err, message: fmt.Sprintf("the status fields come to %s (%s), more than the API server stores with the instance (%s); they are left out until they fit",
		byteSize(total), joinMax(sizes, 3), refusal.Message(err))}
}

func (e *statusTooLargeError) Error() string { return e.message }

// Unwrap keeps the refusal's kind: retries wait as for any lasting one.
func (e *statusTooLargeError) Unwrap() error { return e.err }

// byteSize writes n bytes as people read sizes: bytes, KiB or MiB.
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// statusSchema is the schema of the instances' status in the CRD the
// served graph generated; for a kind held without a graph, whose runs
// write no field that was not there, one that keeps nothing.
func (r *run) statusSchema() *extv1.JSONSchemaProps {
	if r.s.graph == nil || r.s.graph.CRD == nil || len(r.s.graph.CRD.Spec.Versions) == 0 {
		return &extv1.JSONSchemaProps{}
	}
	v := r.s.graph.CRD.Spec.Versions[0]
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return &extv1.JSONSchemaProps{}
	}
	status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
	if !ok {
		return &extv1.JSONSchemaProps{}
	}
	return &status
}

// statusNotStoredError is a status write the API server took without some
// of its fields, which the schema it serves for the kind does not have yet.
type statusNotStoredError struct {
	kind   string
	fields []string
}

func (e *statusNotStoredError) Error() string {
	return fmt.Sprintf("the API server did not store %s of the status written: the schema it uses for %s does not have them yet (its CRD changed moments ago); writing them again",
		strings.Join(e.fields, ", "), e.kind)
}

// droppedFields are the paths, below path, of the fields written holds
// (null aside) that stored lacks, in objects and in lists of equal length,
// where the schema s keeps them: a field the kind's schema does not have
// is pruned for good, and not written again. A nil s keeps everything
// (x-kubernetes-preserve-unknown-fields).
func droppedFields(path string, written, stored any, s *extv1.JSONSchemaProps) []string {
	var out []string
	switch w := written.(type) {
	case map[string]any:
		st, _ := stored.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(w)) {
			fs, kept := fieldSchema(s, k)
			if w[k] == nil || !kept {
				continue
			}
			sv, found := st[k]
			if !found {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, droppedFields(path+"."+k, w[k], sv, fs)...)
		}
	case []any:
		var items *extv1.JSONSchemaProps
		if s != nil && s.Items != nil {
			items = s.Items.Schema
		}
		if st, ok := stored.([]any); ok && len(st) == len(w) {
			for i := range w {
				out = append(out, droppedFields(fmt.Sprintf("%s[%d]", path, i), w[i], st[i], items)...)
			}
		}
	}
	return out
}

// fieldSchema is the schema of an object's field k under s, and whether s
// keeps the field at all.
func fieldSchema(s *extv1.JSONSchemaProps, k string) (*extv1.JSONSchemaProps, bool) {
	switch {
	case s == nil:
		return nil, true
	case s.Properties != nil:
		if p, ok := s.Properties[k]; ok {
			return &p, true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return s.AdditionalProperties.Schema, true
	}
	return nil, s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// statusPatch is the merge patch from the status old to next, as JSON
// ("null" for no status yet): fields that are gone are nulled, also within
// objects (a merge patch merges them, and a projected field omitted
// because its inputs are gone would otherwise keep its last value).
func statusPatch(old, next []byte) ([]byte, error) {
	if bytes.Equal(old, []byte("null")) {
		old = []byte("{}")
	}
	patch, err := jsonpatch.CreateMergePatch(old, next)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]json.RawMessage{"status": patch})
}

// normalize returns a plain copy of v, as a JSON decoder makes it: numbers
// float64, slices untyped.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// recordTransitions tells in Events what the status write changed that
// needed attention (conditions.Newsworthy), so that `kubectl describe`
// tells the story; a refused apply has told its error already (tell).
func (r *run) recordTransitions(old map[string]any, st *v1alpha1.InstanceStatus) {
	// A held instance has no graph, and so no custom condition of either
	// polarity: False is unhappy throughout.
	var negative func(string) bool
	if r.g != nil {
		negative = r.g.Negative
	}
	prev := v1alpha1.DecodeInstanceStatus(old).Conditions
	ended := r.e.spells.Ended(r.inst.GetUID(),
		meta.FindStatusCondition(prev, v1alpha1.ConditionReady), meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady))
	for _, n := range conditions.Newsworthy(prev, st.Conditions, v1alpha1.ConditionReady, negative, ended) {
		r.tell(n.EventType(), n.Reason, n.Message, n.Note(), nil)
	}
}

// manage puts the finalizer, the instance labels and the ApplySet parent
// annotations on the instance, in one patch, only when something is missing.
func (r *run) manage(ctx context.Context) error {
	labels := map[string]string{}
	for k, v := range ownership.InstanceLabelsOver(r.rgd, r.id, r.inst.GetLabels()) {
		if r.inst.GetLabels()[k] != v {
			labels[k] = v
		}
	}
	annotations := map[string]string{}
	namespaces := ownership.RecordedNamespaces(r.inst)
	for k, v := range ownership.ApplySetAnnotations(r.id, r.applySetKinds(), namespaces) {
		if r.inst.GetAnnotations()[k] != v {
			annotations[k] = v
		}
	}
	finalizers := r.inst.GetFinalizers()
	hasFinalizer := slices.Contains(finalizers, v1alpha1.Finalizer)
	if len(labels) == 0 && len(annotations) == 0 && hasFinalizer {
		return nil
	}
	meta := map[string]any{"resourceVersion": r.inst.GetResourceVersion()}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	if !hasFinalizer {
		meta["finalizers"] = append(slices.Clone(finalizers), v1alpha1.Finalizer)
	}
	body, _ := json.Marshal(map[string]any{"metadata": meta})
	out, err := r.e.opts.Dynamic.Resource(r.s.gvr).Namespace(r.inst.GetNamespace()).
		Patch(ctx, r.inst.GetName(), types.MergePatchType, body, patchOptions)
	countWrite("manage", err)
	if err != nil {
		return fmt.Errorf("adding finalizer and labels: %w", r.instanceWriteRefused(err))
	}
	r.inst.SetResourceVersion(out.GetResourceVersion())
	r.inst.SetLabels(out.GetLabels())
	r.inst.SetAnnotations(out.GetAnnotations())
	r.inst.SetFinalizers(out.GetFinalizers())
	return nil
}

// statusRefused is the error of a status write the API server refused,
// whose projected fields were fields. The status cannot say so, so a
// refusal that lasts (the agent may not write the status, the status does
// not validate, or the instance is too large to take one) is told as a
// Warning Event, once until a status is written; a conflict or an
// instance gone is routine, and a failure to reach the API server is not
// the instance's. A status too large with fields the RGD projects says so
// itself, written without them (writeProjected).
func (r *run) statusRefused(err error, fields map[string]any) error {
	err = fmt.Errorf("writing status: %w", r.instanceWriteRefused(err))
	told := err.Error()
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		// Tried again as soon as the instance's cluster's admission
		// configuration, or the agent's grants, change.
		r.e.local.admission.note(r.key, err)
	case refusal.TooLarge(err) && len(fields) == 0:
		told = fmt.Sprintf("%s (%s); it keeps the status it has until its spec is made smaller", v1alpha1.InstanceTooLargeForStatus, refusal.Message(err))
	default:
		return err
	}
	if r.e.statusRefusals.news(r.inst.GetUID(), told) {
		r.tell("Warning", v1alpha1.EventStatusWriteFailed, told, told, nil)
	}
	return err
}

// instanceWriteRefused is err, a write of the instance itself, with what
// to grant added when the authorizer denied it.
func (r *run) instanceWriteRefused(err error) error {
	if unauthorized, ok := asUnauthorized(err, r.s.gvr.GroupResource(), r.e.local); ok {
		unauthorized.instances = true
		return unauthorized
	}
	return err
}

// statusRefusals remembers, per instance, the refusal of a status write
// last told, so that its retries do not tell it again.
type statusRefusals struct {
	mu sync.Mutex
	m  map[types.UID]string
}

// news records message as the refusal of the instance uid's status write,
// and tells whether it is news.
func (s *statusRefusals) news(uid types.UID, message string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[uid] == message {
		return false
	}
	if s.m == nil {
		s.m = map[types.UID]string{}
	}
	s.m[uid] = message
	return true
}

func (s *statusRefusals) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, uid)
}

// statusMemo remembers the last status written to each instance and the
// version of the instance it was written over. A reconcile that still sees
// that version reads from a cache that has not caught up with the write; it
// works from the status it wrote instead, so it neither writes the same
// status again nor restarts condition transition times.
type statusMemo struct {
	mu sync.Mutex
	m  map[types.UID]statusWrite
}

type statusWrite struct {
	// over are the resourceVersions the write was based on: the version
	// of the instance it was written over, and, when that is the version
	// an earlier status write produced, the versions that write was based
	// on, which the cache may show still.
	over     []string
	produced string // resourceVersion the write produced
	// version is the resourceVersion of the instance the cache holds
	// with the status written: produced, when the write found nothing
	// else changed, so that the run's writes conditional on the version
	// (the finalizer's removal) go through rather than conflict with the
	// agent's own status write; else the version it was written over,
	// for the run to see the other change before it writes so.
	version string
	status  map[string]any // status written
}

// wrote remembers the status written over inst, the API server answering
// with out, and returns the resourceVersion inst takes with it (version).
func (s *statusMemo) wrote(inst *unstructured.Unstructured, status map[string]any, out *unstructured.Unstructured) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.UID]statusWrite{}
	}
	base := inst.GetResourceVersion()
	w := statusWrite{over: []string{base}, produced: out.GetResourceVersion(), version: base, status: runtime.DeepCopyJSON(normalize(status).(map[string]any))}
	if prev, ok := s.m[inst.GetUID()]; ok && prev.produced == base {
		w.over = append(slices.Clip(prev.over), base)
	}
	if sameBesideStatus(inst.Object, out.Object) {
		w.version = w.produced
	}
	s.m[inst.GetUID()] = w
	return w.version
}

// sameBesideStatus tells whether two versions of an object differ in
// nothing but their status (and version, and managedFields, which
// the informers do not keep).
func sameBesideStatus(a, b map[string]any) bool {
	strip := func(obj map[string]any) map[string]any {
		out := maps.Clone(obj)
		delete(out, "status")
		if md, ok := obj["metadata"].(map[string]any); ok {
			md = maps.Clone(md)
			delete(md, "resourceVersion")
			delete(md, "managedFields")
			out["metadata"] = md
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// echoed reports whether an instance update is the echo of our last status
// write: the instance at the version that write produced. The cache has
// then caught up, so the write is forgotten, and the run that wrote it had
// already gone on from it: the update brings nothing to reconcile.
func (s *statusMemo) echoed(uid types.UID, resourceVersion string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[uid]
	if !ok || resourceVersion == "" || w.produced != resourceVersion {
		return false
	}
	delete(s.m, uid)
	return true
}

// read reads an instance from the informer's store, with the status last
// written over the version it finds, if any, and the version that makes
// it: a reconcile then works from the status it wrote, not the one the
// cache still shows. A cache showing
// another version has caught up with the write, which is then forgotten:
// the memo holds only writes in flight, not a copy of every instance's
// status.
//
// The store is read under the memo's lock. The informer updates its store
// before it hands the update to echoed, which takes the same lock, so a
// write is never forgotten between a read of the store that still shows
// the version it was based on and the look into the memo.
func (s *statusMemo) read(fromStore func() (*heldObject, error)) (*heldObject, *statusWrite, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := fromStore()
	if err != nil || h == nil {
		return h, nil, err
	}
	w, ok := s.m[h.meta.UID]
	switch {
	case !ok:
		return h, nil, nil
	case slices.Contains(w.over, h.meta.ResourceVersion):
		w.status = runtime.DeepCopyJSON(w.status)
		return h, &w, nil
	}
	delete(s.m, h.meta.UID)
	return h, nil, nil
}

func (s *statusMemo) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, uid)
}
