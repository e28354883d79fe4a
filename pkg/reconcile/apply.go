package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kro-agent/kro-agent/pkg/jsonvalue"
	"github.com/kro-agent/kro-agent/pkg/managedfields"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/refusal"
	"github.com/kro-agent/kro-agent/pkg/takeover"
)

// applyOptions make the agent's server-side applies: its field manager,
// forcing conflicts within its own fields. patchOptions are its patches
// of instances.
//
// Neither asks the API server to validate the fields sent (its default
// decodes a patch a second time, strictly, for warnings about unknown and
// duplicate fields: about a tenth of its CPU for an apply). The agent
// writes JSON of Go maps, without duplicate keys; templates' fields are
// checked against their kinds' schemas when the RGD is admitted, and the
// API server still refuses a field its schema does not declare.
var (
	applyOptions = metav1.PatchOptions{FieldManager: ownership.FieldManager, Force: ptr.To(true), FieldValidation: metav1.FieldValidationIgnore}
	patchOptions = metav1.PatchOptions{FieldManager: ownership.FieldManager, FieldValidation: metav1.FieldValidationIgnore}
)

// objectRef names one managed object.
type objectRef struct {
	// Cluster is the registered Cluster it lives in; "" is the local one.
	Cluster   string
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// key is the object's key in its informer's store.
func (r objectRef) key() string { return cache.NewObjectName(r.Namespace, r.Name).String() }

// anyVersion names the object whichever version of its kind it is seen
// through: an RGD that moves a resource to another version still names
// the same object, which the informer of the old version holds too.
func (r objectRef) anyVersion() objectRef {
	r.GVR.Version = ""
	return r
}

// appliedCache remembers, per object, the digest of the last successful
// apply, and the object the API server returned until the informer has
// seen it: right after a create, the next reconcile must not mistake an
// object the cache has not caught up with for a deleted one. It is a cache:
// losing it (a restart) costs at most one apply per object.
type appliedCache struct {
	mu      sync.Mutex
	records map[objectRef]*appliedRecord
	byInst  map[types.UID][]objectRef
}

type appliedRecord struct {
	// inst is the instance the object was applied for, which forgets it.
	inst   types.UID
	digest [32]byte
	// resourceVersion is the object's version after our apply, or when we
	// last found it holding what we want: while the live object is still
	// that version, nobody has changed it.
	resourceVersion string
	// pending is the apply result, kept until the informer reports the
	// object (then dropped, to hold no second copy).
	pending *unstructured.Unstructured
	// stored is set only when the API server keeps some of our fields in
	// a form of its own (a quantity "1000m" as "1", an empty value
	// dropped): those fields as our apply left them. While the live object
	// still holds them so, nobody has changed them, though it never
	// visibly holds the desired object.
	stored map[string]any
	// contest counts the restorations of this digest in a row.
	contest contest
	// gone is set when the informer saw the object deleted by someone
	// else: applying it again re-creates it.
	gone bool
}

func newAppliedCache() *appliedCache {
	return &appliedCache{records: map[objectRef]*appliedRecord{}, byInst: map[types.UID][]objectRef{}}
}

func (c *appliedCache) get(ref objectRef) (appliedRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[ref]
	if !ok {
		return appliedRecord{}, false
	}
	return *r, true
}

func (c *appliedCache) put(inst types.UID, ref objectRef, d [32]byte, rv string, pending *unstructured.Unstructured, stored map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.records[ref]
	if !ok || prev.inst != inst {
		// New, or adopted from an earlier instance of the name.
		c.byInst[inst] = append(c.byInst[inst], ref)
	}
	next := &appliedRecord{inst: inst, digest: d, resourceVersion: rv, pending: pending, stored: stored}
	if ok && prev.digest == d {
		// A new desired object is a new story; the same one goes on.
		next.contest = prev.contest
	}
	c.records[ref] = next
}

// unchanged records that ref, still holding our fields as we left them,
// is now at version rv (someone changed other fields).
func (c *appliedCache) unchanged(ref objectRef, rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.records[ref]; ok {
		r.resourceVersion, r.gone = rv, false
	}
}

// repairWait tells how long restoring ref's fields must still wait at now,
// and the object's contest so far.
func (c *appliedCache) repairWait(ref objectRef, now time.Time) (contest, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[ref]
	if !ok {
		return contest{}, 0
	}
	wait := r.contest.wait(now)
	return r.contest, wait
}

// unsettled answers, for an object restored after waiting its turn and
// not yet left alone for long, the error saying it is still contested.
func (c *appliedCache) unsettled(ref objectRef, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[ref]
	if !ok {
		return nil
	}
	settle := r.contest.unsettled(now)
	if settle == 0 {
		return nil
	}
	// The last restoration has not been undone (yet).
	return &contestedError{repairs: r.contest.repairs - 1, field: r.contest.field, by: r.contest.by, restored: true, retryAfter: settle}
}

// repaired counts a restoration of ref's fields.
func (c *appliedCache) repaired(ref objectRef, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.records[ref]; ok {
		r.contest.repaired(now)
	}
}

// setContest stores who the other writer is, if the count has not moved on.
func (c *appliedCache) setContest(ref objectRef, ct contest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.records[ref]; ok && r.contest.repairs == ct.repairs {
		r.contest.field, r.contest.by, r.contest.byRepairs = ct.field, ct.by, ct.byRepairs
	}
}

// observed is called for every informer event on a managed object: once the
// cache holds the object, the pending copy goes; once it is deleted, the
// record is marked gone, so the object is applied again. It reports whether
// the event only echoes our own last apply: the object at the version that
// apply produced (or that we last found holding what we want). The
// reconcile that applied it has already gone on from its result, so such an
// event brings the instance nothing new. resourceVersion "" echoes nothing.
func (c *appliedCache) observed(ref objectRef, deleted bool, resourceVersion string) (echo bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[ref]
	switch {
	case !ok:
		return false
	case deleted:
		// Kept as a mark, so that the apply that makes it again can say
		// so; the object is applied again all the same.
		// A deletion ends a contest: the next one starts a new count.
		r.gone, r.pending, r.resourceVersion, r.contest = true, nil, "", contest{}
		return false
	}
	r.pending = nil
	return resourceVersion != "" && r.resourceVersion == resourceVersion
}

// drop forgets ref, an object the agent deleted itself (pruned): applied
// again some day, it is created, not re-created.
func (c *appliedCache) drop(ref objectRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.records, ref)
}

func (c *appliedCache) forget(inst types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ref := range c.byInst[inst] {
		// An object another instance has adopted since is that one's.
		if r, ok := c.records[ref]; ok && r.inst == inst {
			delete(c.records, ref)
		}
	}
	delete(c.byInst, inst)
}

// apply makes live match desired with server-side apply, unless nothing
// would change: the desired object is the one applied last time and the
// live object is still the version that apply produced, or it visibly holds
// every field we set. A quiet cluster therefore costs no writes, while a
// hand edit (a new version that no longer holds our fields) is reverted,
// at once unless the object is contested (contest.go): then it may wait,
// and the error says how long; it says so too while a restoration that
// waited has not settled. It returns the object as it now is, and the
// drift the apply undid.
func (e *Engine) apply(ctx context.Context, t *target, inst types.UID, ref objectRef, desired map[string]any, live *unstructured.Unstructured) (*unstructured.Unstructured, drift, error) {
	if ref.GVR == secrets {
		foldStringData(desired)
	}
	out, undone, err := e.applyIfChanged(ctx, t, inst, ref, desired, live)
	if err != nil {
		return out, drift{}, refusal.Readable(err)
	}
	return out, undone, e.applied.unsettled(ref, time.Now())
}

// drift is what an apply undid: someone else's deletion of the object, or
// their change of a field the RGD sets.
type drift struct {
	deleted bool
	// field is the first field found changed, as kubectl explain writes it.
	field string
	// repeated is set for an apply that left the object at the version
	// kro-agent's last apply of it made: it changed nothing, and the
	// informer's copy it was sent over was older than that apply. What
	// that copy showed (drift, another owner's labels) the last apply
	// dealt with.
	repeated bool
}

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// foldStringData moves a Secret's stringData into data, base64-encoded, as
// the API server does on every write (a key in both takes stringData's
// value). stringData is write-only: a live Secret never shows it, so the
// agent could not tell a hand edit of the data it came from, nor repair
// it. Applied as data, the fields are the agent's and compared like any
// other. A value that is not a string is left for the API server to
// refuse.
func foldStringData(secret map[string]any) {
	stringData, ok := secret["stringData"].(map[string]any)
	if !ok {
		return
	}
	for _, v := range stringData {
		if _, ok := v.(string); !ok {
			return
		}
	}
	data, ok := secret["data"].(map[string]any)
	switch {
	case secret["data"] == nil:
		data = make(map[string]any, len(stringData))
	case !ok:
		return
	}
	for k, v := range stringData {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	secret["data"] = data
	delete(secret, "stringData")
}

// appliedMore tells whether kro-agent's last apply of an object, found
// holding what it should right after a restart, set a field desired no
// longer sets: the graph or the values it was applied with may have
// changed while no kro-agent ran, and only an apply removes such a field.
// Only the object's managedFields tell, which the informers do not keep,
// so it is read, once, unless kro-agent never applied it; when it cannot
// be read, or its managedFields cannot tell, it is applied.
func appliedMore(ctx context.Context, t *target, ref objectRef, desired map[string]any) bool {
	if !t.applied(ref) {
		return false
	}
	obj, err := t.client.Resource(ref.GVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return true
	}
	dropped, ok := managedfields.Dropped(desired, obj.GetManagedFields())
	return !ok || len(dropped) > 0
}

func (e *Engine) applyIfChanged(ctx context.Context, t *target, inst types.UID, ref objectRef, desired map[string]any, live *unstructured.Unstructured) (*unstructured.Unstructured, drift, error) {
	// The JSON applied is also what tells whether it changed.
	body, err := json.Marshal(desired)
	if err != nil {
		return nil, drift{}, err
	}
	d := sha256.Sum256(body)
	last, known := e.applied.get(ref)
	same := known && last.digest == d
	switch {
	case live == nil && same && last.pending != nil:
		// Applied moments ago; the informer has not caught up yet.
		return last.pending, drift{}, nil
	case live == nil || live.GetDeletionTimestamp() != nil:
	case same && live.GetResourceVersion() == last.resourceVersion:
		return live, drift{}, nil
	case same && jsonvalue.Contains(live.Object, desired):
		// Changed by someone else (a status update, say) without touching
		// our fields.
		e.applied.unchanged(ref, live.GetResourceVersion())
		return live, drift{}, nil
	case same && last.stored != nil && jsonvalue.Contains(live.Object, last.stored):
		// The same, for an object whose fields the API server keeps in
		// its own form: applying again would change nothing.
		e.applied.unchanged(ref, live.GetResourceVersion())
		return live, drift{}, nil
	case !known && jsonvalue.Contains(live.Object, desired) && !appliedMore(ctx, t, ref, desired):
		// Found already right after a restart.
		e.applied.put(inst, ref, d, live.GetResourceVersion(), nil, nil)
		return live, drift{}, nil
	}
	// Someone changed fields of ours since we applied this very object,
	// or deleted it.
	restore := same && live != nil && live.GetDeletionTimestamp() == nil
	recreate := known && last.gone && live == nil
	now := time.Now()
	if restore {
		if c, wait := e.applied.repairWait(ref, now); wait > 0 {
			out, err := e.contested(ctx, t, inst, ref, d, last.stored, desired, live, c, wait)
			return out, drift{}, err
		}
	}
	out, err := t.client.Resource(ref.GVR).Namespace(ref.Namespace).Patch(ctx, ref.Name, types.ApplyPatchType, body, applyOptions)
	countWrite("apply", err)
	if err != nil {
		return nil, drift{}, err
	}
	if out, err = takeOverFromKro(ctx, t, ref, body, out); err != nil {
		// Not recorded as applied: the next run applies again, and tries
		// once more.
		return nil, drift{}, err
	}
	e.applied.recordApply(inst, ref, d, desired, out, live == nil, t.holds)
	undone := drift{repeated: known && out.GetResourceVersion() == last.resourceVersion}
	switch {
	case restore && !undone.repeated && !sameWhere(live.Object, out.Object, desired):
		// Only a restoration that changed a field we set counts: a value
		// the API server stores in its own form (a quantity "1000m" as
		// "1") makes live differ from desired after every change by
		// anyone, and applying it changes nothing. Nor does an apply
		// that left the object at the version our last one made: the
		// informer's copy was older than that apply, not changed since.
		e.applied.repaired(ref, now)
		if path, ok := changedField(live.Object, desired, last.stored); ok {
			undone.field = pathString(path)
		}
	case recreate:
		undone.deleted = true
	}
	return out, undone, nil
}

// takeOverFromKro hands the agent the fields upstream kro applied to out,
// an object of an instance kro served before, and applies body again: the
// fields kro set that the graph does not (its own labels, a key a template
// dropped since) are then the agent's alone, and that apply removes them.
// It writes only for such an object, once.
func takeOverFromKro(ctx context.Context, t *target, ref objectRef, body []byte, out *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !takeover.Held(out.Object) {
		return out, nil
	}
	patch, err := takeover.Patch(out, ownership.FieldManager)
	if patch == nil || err != nil {
		return out, err
	}
	res := t.client.Resource(ref.GVR).Namespace(ref.Namespace)
	_, err = res.Patch(ctx, ref.Name, types.JSONPatchType, patch, patchOptions)
	countWrite("takeover", err)
	if err != nil {
		return nil, fmt.Errorf("taking over the fields upstream kro applied (field manager %s): %w", takeover.KroFieldManager, err)
	}
	out, err = res.Patch(ctx, ref.Name, types.ApplyPatchType, body, applyOptions)
	countWrite("apply", err)
	return out, err
}

// recordApply records a successful apply. The result is kept as pending
// only for an object the informer has not reported yet, which is possible
// only for one that did not exist: the informer's copy of an updated object
// is at worst an event behind, never missing. The informer may have stored
// a new object before the record existed (the watch event and the apply
// response race); its event then found nothing to clear, so the cache is
// asked once more after the record is in place. Without that, the apply
// result of an object that never changes again (a ConfigMap, a Service)
// would be held for good beside the informer's copy.
func (c *appliedCache) recordApply(inst types.UID, ref objectRef, d [32]byte, desired map[string]any, out *unstructured.Unstructured, created bool, informerHas func(objectRef) bool) {
	stored := storedFields(out.Object, desired)
	if !created {
		c.put(inst, ref, d, out.GetResourceVersion(), nil, stored)
		return
	}
	c.put(inst, ref, d, out.GetResourceVersion(), out, stored)
	if informerHas(ref) {
		c.observed(ref, false, "")
	}
}

// storedFields is a copy of obj's values at the fields desired sets, when
// the API server keeps some of them in a form of its own; nil when obj
// visibly holds desired, as nearly every object does.
func storedFields(obj, desired map[string]any) map[string]any {
	if jsonvalue.Contains(obj, desired) {
		return nil
	}
	stored, _ := runtime.DeepCopyJSONValue(project(obj, desired)).(map[string]any)
	return stored
}

// project is have at the fields want sets: maps field by field, lists and
// scalars whole, a field have lacks left out.
func project(have, want any) any {
	w, ok := want.(map[string]any)
	if !ok {
		return have
	}
	h, ok := have.(map[string]any)
	if !ok {
		return have
	}
	out := make(map[string]any, len(w))
	for k, wv := range w {
		if hv, present := h[k]; present {
			out[k] = project(hv, wv)
		}
	}
	return out
}

// sameWhere reports whether a and b hold the same values at every field
// want sets (a list as a whole).
func sameWhere(a, b, want any) bool {
	w, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(a, b)
	}
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	for k, wv := range w {
		if !sameWhere(am[k], bm[k], wv) {
			return false
		}
	}
	return true
}
