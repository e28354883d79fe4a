package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/jsonvalue"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// A managed object whose fields someone else keeps changing back is
// contested: an HPA and an RGD that both set a Deployment's replicas, a
// controller that owns an annotation the RGD also sets. Restoring at once
// every time makes the two writers take turns as fast as their watches
// deliver, each turn a write and, for a Deployment, a new generation and a
// rollout. The first few restorations in a row are immediate (a hand edit
// is reverted at once); after that each waits twice as long as the one
// before, and the instance says who the other writer is.
const (
	// freeRepairs restorations in a row happen at once.
	freeRepairs = 3
	// firstContestWait is the wait before the first restoration after
	// those; each further one waits twice as long, up to maxContestWait.
	firstContestWait = 5 * time.Second
	maxContestWait   = 5 * time.Minute
	// contestQuiet: an object left alone this long after its wait was over
	// is no longer contested; the next change starts a new count.
	contestQuiet = time.Minute
)

// contest counts the restorations of one object in a row.
type contest struct {
	repairs    int
	lastRepair time.Time
	// field and by are what the other writer changed and its field
	// manager, looked up once per restoration (a GET: the informers hold
	// no managedFields).
	field, by string
	byRepairs int
}

// contestWait is the wait before the restoration that follows repairs
// restorations in a row.
func contestWait(repairs int) time.Duration {
	if repairs < freeRepairs {
		return 0
	}
	shift := repairs - freeRepairs
	if shift >= 16 || firstContestWait<<shift > maxContestWait {
		return maxContestWait
	}
	return firstContestWait << shift
}

// wait tells how long a restoration needed at now must still wait.
func (c *contest) wait(now time.Time) time.Duration {
	since := now.Sub(c.lastRepair)
	if c.repairs > 0 && since > contestWait(c.repairs)+contestQuiet {
		*c = contest{}
	}
	return max(contestWait(c.repairs)-since, 0)
}

// unsettled tells, after a restoration that had to wait its turn, how long
// the object is still taken for contested: until it has stayed restored
// for contestQuiet. Without that the instance would turn ACTIVE right after
// each restoration and ERROR again at the other writer's next change, two
// status writes per round. Zero when the object is not contested.
func (c *contest) unsettled(now time.Time) time.Duration {
	if c.repairs <= freeRepairs {
		return 0
	}
	return max(contestQuiet-now.Sub(c.lastRepair), 0)
}

func (c *contest) repaired(now time.Time) {
	c.repairs++
	c.lastRepair = now
}

// contestedError is the answer of an apply that waits: the object is left
// as the other writer made it until retryAfter. With restored, the object
// was just restored after waiting its turn, and retryAfter is when it
// counts as settled if left alone.
type contestedError struct {
	repairs    int    // restorations in a row undone by the other writer
	field, by  string // what was changed and by whom, when known
	restored   bool
	retryAfter time.Duration
}

func (e *contestedError) Error() string {
	what, who := "fields the RGD sets", "another writer"
	if e.field != "" {
		what = e.field
	}
	if e.by != "" {
		who = fmt.Sprintf("field manager %q", e.by)
	}
	next := fmt.Sprintf("restoring it again in %s", e.retryAfter.Round(time.Second))
	if e.restored {
		next = fmt.Sprintf("restored it again, and it counts as contested until it has stayed so for %s", contestQuiet)
	}
	return fmt.Sprintf("%s was changed by %s after each of the last %d restorations; %s. "+
		"Leave the field to one of the two: remove it from the RGD's template, or stop the other writer from setting it",
		what, who, e.repairs, next)
}

// contested answers an apply that must wait its turn to restore: the
// object as it is and the error saying so, naming the field and its other
// writer. Those are read once per restoration (a GET: the informers hold
// no managedFields); when the object read already holds what we want (the
// informer was behind), there is nothing to restore and no error
// (changedField says what we want).
func (e *Engine) contested(ctx context.Context, t *target, inst types.UID, ref objectRef, d [32]byte, stored, desired map[string]any,
	live *unstructured.Unstructured, c contest, wait time.Duration) (*unstructured.Unstructured, error) {
	if c.byRepairs != c.repairs {
		obj, err := t.client.Resource(ref.GVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			path, differs := changedField(obj.Object, desired, stored)
			if !differs {
				e.applied.put(inst, ref, d, obj.GetResourceVersion(), nil, stored)
				return obj, nil
			}
			c.field, c.by = pathString(path), ownerOf(obj.GetManagedFields(), path)
			live = obj
		}
		c.byRepairs = c.repairs
		e.applied.setContest(ref, c)
	}
	return live, &contestedError{repairs: c.repairs, field: c.field, by: c.by, retryAfter: wait}
}

// changedField finds a field we set that have holds otherwise: compared
// with desired, or with our fields as the API server stored them (stored,
// when it keeps some in a form of its own), which is what have holds
// while nobody changed them.
func changedField(have, desired, stored map[string]any) ([]string, bool) {
	if stored != nil {
		return firstDifference(have, stored, nil)
	}
	return firstDifference(have, desired, nil)
}

// firstDifference finds a field of want that have lacks or holds otherwise,
// as the map keys leading to it; a list that differs is named as a whole.
// Keys are visited in order, so the answer is the same every time.
func firstDifference(have, want any, path []string) ([]string, bool) {
	w, ok := want.(map[string]any)
	if !ok {
		if jsonvalue.Contains(have, want) {
			return nil, false
		}
		return path, true
	}
	h, _ := have.(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(w)) {
		hv, present := h[k]
		if !present && w[k] == nil {
			continue
		}
		if p, ok := firstDifference(hv, w[k], append(slices.Clip(path), k)); ok {
			return p, true
		}
	}
	return nil, false
}

// ownerOf names the field manager, other than the agent, that owns the
// field at path (for a list, anything in it); the latest writer when
// several do.
func ownerOf(entries []metav1.ManagedFieldsEntry, path []string) string {
	var by string
	var at metav1.Time
	for _, f := range entries {
		if f.Manager == ownership.FieldManager || f.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &set) != nil {
			continue
		}
		owned := true
		for _, k := range path {
			next, ok := set["f:"+k].(map[string]any)
			if !ok {
				owned = false
				break
			}
			set = next
		}
		if owned && (by == "" || f.Time != nil && at.Before(f.Time)) {
			by = f.Manager
			if f.Subresource != "" {
				by += " (" + f.Subresource + ")"
			}
			if f.Time != nil {
				at = *f.Time
			}
		}
	}
	return by
}

// pathString writes a field path as kubectl explain and the API server's
// errors do: metadata.annotations[example.com/key].
func pathString(path []string) string {
	p := field.NewPath(path[0])
	for _, k := range path[1:] {
		if identifier.MatchString(k) {
			p = p.Child(k)
		} else {
			p = p.Key(k)
		}
	}
	return p.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
