// Package resolve evaluates a compiled graph for one instance: it renders
// resource templates, expands collections, decides includeWhen and
// readyWhen, and projects status. It is pure: no API calls, so every rule
// is testable with plain maps.
package resolve

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// absent is the value of an expression that holds nothing (an empty
// optional, omit()); a field set to it is left out of the object.
var absent = cellib.Absent

// ErrPending is wrapped by errors about data that does not exist yet: a
// status field a controller has not written, a resource not observed. It is
// a reason to wait, not a failure.
var ErrPending = errors.New("input not available yet")

// ErrUnset is wrapped by the pending errors of a field the instance does
// not set (UnsetError): only the instance's author can supply it.
var ErrUnset = fmt.Errorf("a field of the instance is not set: %w", ErrPending)

// ErrNeverComes is wrapped by the pending errors of an expression reading
// a field its object never has (graph.AbsentRead: a Secret's stringData):
// as the RGD is written, what waits for it waits for good. Its text is
// ErrPending's, so that what waits is told alike.
var ErrNeverComes = fmt.Errorf("%w", ErrPending)

// NotObservedError is the pending error of an expression that reads a
// resource not observed yet: it waits for that resource, not for a value
// inside what it reads.
type NotObservedError struct {
	// ID is the resource's.
	ID string
}

func (e *NotObservedError) Error() string {
	return e.ID + " is not observed: " + ErrPending.Error()
}

// Unwrap makes a NotObservedError pending.
func (e *NotObservedError) Unwrap() error { return ErrPending }

// Scope holds the values of the names expressions may read.
type Scope struct {
	vars map[string]any
	// fromInstance holds the names whose values come from the instance
	// alone: schema, and the iterators of lists computed from it.
	fromInstance map[string]bool
	// misfits are the fields the instance holds in another type than its
	// schema declares, from the instance's root: it was stored before an
	// RGD change allowed to break it (kro.run/allow-breaking-changes).
	misfits []celenv.Misfit
	// graph is the one whose expressions the scope is for, nil for none:
	// it tells which values are a Secret's, not to be quoted.
	graph *graph.Graph
	// items is the collection whose item each stands for, in a
	// collection's readyWhen; nil elsewhere.
	items *graph.Node
}

// NewScope starts a scope with the instance as `schema`, for expressions
// of g (nil for none). The instance's status is left out: expressions may
// not read it. The defaults of g's schema are filled in where the instance
// lacks them, as the API server does when it returns an instance written
// before its RGD gained them: a cache returns it as it was written.
func NewScope(g *graph.Graph, instance map[string]any) *Scope {
	in := map[string]any{}
	for k, v := range instance {
		if k != "status" {
			in[k] = v
		}
	}
	var v any = in
	var misfits []celenv.Misfit
	if g != nil {
		v = g.InstanceFormats.Apply(g.InstanceDefaults.Apply(in))
		misfits = celenv.Misfits(g.InstanceSpec, in["spec"])
		for i := range misfits {
			misfits[i].At = append(expr.Path{{Key: "spec"}}, misfits[i].At...)
		}
	}
	vars := map[string]any{graph.SchemaVar: v, cellib.ClockVar: cellib.NewClock(time.Now())}
	return &Scope{vars: vars, fromInstance: map[string]bool{graph.SchemaVar: true}, misfits: misfits, graph: g}
}

// Clock is the time time.now() gives s's expressions, one for the scope
// and every scope made from it; it keeps the earliest time at which an
// answer they computed from it turns, when the instance is to be looked at
// again.
func (s *Scope) Clock() *cellib.Clock {
	c, _ := s.vars[cellib.ClockVar].(*cellib.Clock)
	return c
}

// at returns s with time.now() giving now, without changing s.
func (s *Scope) at(now time.Time) *Scope {
	return s.bind(cellib.ClockVar, cellib.NewClock(now), false)
}

// instanceNamespace is the namespace of the instance the scope is for.
func (s *Scope) instanceNamespace() string {
	return s.instanceMetadata("namespace")
}

// instanceUID is the UID of the instance the scope is for; "" for one not
// created yet (a dry run of a new instance).
func (s *Scope) instanceUID() string {
	return s.instanceMetadata("uid")
}

func (s *Scope) instanceMetadata(key string) string {
	instance, _ := s.vars[graph.SchemaVar].(map[string]any)
	meta, _ := instance["metadata"].(map[string]any)
	v, _ := meta[key].(string)
	return v
}

// Observe binds node n to what was observed of it: its object, or the list
// of objects of a collection. The values are typed as n's expressions were
// checked: a Secret's data as bytes, timestamps as timestamps.
func (s *Scope) Observe(n *graph.Node, observed any) {
	s.vars[n.ID] = Typed(n, observed)
}

// Typed converts an object, or each of a list of objects, of n's kind to
// the values its schema types, with the defaults of a custom kind's schema
// filled in where the object lacks them, as the API server returns it. Observe
// and Ready do it themselves; a value Typed already returned is not
// converted or copied again, so a caller that hands one object to both
// converts it once.
func Typed(n *graph.Node, observed any) any {
	if n.Formats == nil && n.Defaults == nil {
		return observed
	}
	if list, ok := observed.([]any); ok {
		out := make([]any, len(list))
		for i, obj := range list {
			out[i] = n.Formats.Apply(n.Defaults.Apply(obj))
		}
		return out
	}
	return n.Formats.Apply(n.Defaults.Apply(observed))
}

// Has reports whether name is bound.
func (s *Scope) Has(name string) bool {
	_, ok := s.vars[name]
	return ok
}

// With returns a scope that adds one binding to s without changing s.
func (s *Scope) With(name string, v any) *Scope {
	return s.bind(name, v, false)
}

// Without returns a scope that leaves out the bindings of ids without
// changing s: what is known once those resources are not observed.
func (s *Scope) Without(ids ...string) *Scope {
	out := &Scope{vars: make(map[string]any, len(s.vars)), fromInstance: make(map[string]bool, len(s.fromInstance)), misfits: s.misfits, graph: s.graph, items: s.items}
	for k, v := range s.vars {
		if !slices.Contains(ids, k) {
			out.vars[k] = v
		}
	}
	for k, v := range s.fromInstance {
		if !slices.Contains(ids, k) {
			out.fromInstance[k] = v
		}
	}
	return out
}

// bind adds one binding to a copy of s; fromInstance says whether its
// value comes from the instance alone.
func (s *Scope) bind(name string, v any, fromInstance bool) *Scope {
	vars := make(map[string]any, len(s.vars)+1)
	for k, val := range s.vars {
		vars[k] = val
	}
	vars[name] = v
	from := make(map[string]bool, len(s.fromInstance)+1)
	for k, v := range s.fromInstance {
		from[k] = v
	}
	from[name] = fromInstance
	return &Scope{vars: vars, fromInstance: from, misfits: s.misfits, graph: s.graph, items: s.items}
}

// node is the resource the name ref stands for in s: a resource id, or
// each for the collection whose item it is; nil for another name.
func (s *Scope) node(ref string) *graph.Node {
	if ref == graph.EachVar {
		return s.items
	}
	if s.graph == nil {
		return nil
	}
	return s.graph.Node(ref)
}

// readsOnlyInstance reports whether every name e reads holds a value that
// comes from the instance alone: what it gives changes only when the
// instance (or the RGD) does.
func (s *Scope) readsOnlyInstance(e *graph.Expression) bool {
	for _, ref := range e.References {
		if !s.fromInstance[ref] {
			return false
		}
	}
	return len(e.References) > 0
}

// Eval evaluates e in s and returns a plain Go value (JSON-like: map,
// slice, string, int64, float64, bool, nil).
func Eval(e *graph.Expression, s *Scope) (any, error) {
	for _, ref := range e.References {
		if _, ok := s.vars[ref]; !ok {
			return nil, &NotObservedError{ID: ref}
		}
	}
	if err := s.misfitRead(e); err != nil {
		// CEL would take the value for the declared type and fail
		// anywhere, or pass it on for the API server to refuse.
		return nil, err
	}
	out, _, err := e.Program.Eval(s.vars)
	if err != nil {
		return nil, s.externalLacks(e, s.zeroLeftOut(e, neverComes(e, s.settled(e, s.unset(e, classify(err))))))
	}
	v, err := cellib.Native(out)
	if err != nil {
		return nil, classify(err)
	}
	return v, nil
}

// explained adds to err, the failure of e in s, the values of the fields
// e read: "type conversion error from 'string' to 'int'" says what went
// wrong, "it read schema.spec.port = \"eighty\"" with what. An error that
// waits for a value, or names the value already (a misfit), is returned as
// it is, and so is nil.
func (s *Scope) explained(e *graph.Expression, err error) error {
	var misfit *MisfitError
	if err == nil || errors.Is(err, ErrPending) || errors.As(err, &misfit) {
		return err
	}
	read := describeInputs(e, s, func(in *graph.Expression) bool { return s.graph != nil && s.graph.ReadsSecret(in) })
	if read == "" {
		return err
	}
	return fmt.Errorf("%w%s", err, read)
}

// misfitRead returns a MisfitError when e reads a field of the instance,
// or a part of one, that does not fit the instance's schema.
func (s *Scope) misfitRead(e *graph.Expression) error {
	for _, m := range s.misfits {
		for _, p := range e.InstanceReads {
			if m.At.HasPrefix(p) || p.HasPrefix(m.At) {
				return &MisfitError{Expression: e.Source, Misfit: m}
			}
		}
	}
	return nil
}

// MisfitError is the error of an expression that reads a field the
// instance holds in another type than its schema declares. The API server
// keeps an instance as it was stored when its CRD's schema changes, so one
// stored before an RGD change allowed to break it
// (kro.run/allow-breaking-changes) may hold what its schema no longer
// takes: only a change to the instance resolves it.
type MisfitError struct {
	// Expression is the expression's source, without ${}.
	Expression string
	// Misfit is the field, its path (At) from the instance's root.
	celenv.Misfit
}

func (e *MisfitError) Error() string {
	return fmt.Sprintf("${%s} reads %s, which %s by the instance's schema (it was stored under an earlier schema): set %s again", e.Expression, e.At, e.Describe(), e.At)
}

// UnsetError is the pending error of an expression that reads a field of
// the instance the instance does not set (and its schema gives no
// default): only the instance's author can supply it.
type UnsetError struct {
	// Expression is the expression's source, without ${}.
	Expression string
	// Field is the path of the missing field in the instance.
	Field expr.Path
}

func (e *UnsetError) Error() string {
	return fmt.Sprintf("${%s} reads %s, which the instance does not set and its schema gives no default", e.Expression, e.Field)
}

// Unwrap makes an UnsetError ErrUnset, and so pending: setting the field
// resolves it.
func (e *UnsetError) Unwrap() error { return ErrUnset }

// InstanceValueError is the pending error of an expression that reads
// nothing but the instance (and iterators over its lists) and misses a
// value in it: an index past the end of one of its lists, a key one of its
// maps does not have. As with a field the instance does not set, only its
// author can supply the value, so it is ErrUnset: nothing else is waited
// for.
type InstanceValueError struct {
	// Expression is the expression's source, without ${}.
	Expression string
	// Missing is CEL's words for what it did not find.
	Missing string
}

func (e *InstanceValueError) Error() string {
	return fmt.Sprintf("${%s}: %s (the expression reads only the instance, so only a change to the instance resolves it)", e.Expression, e.Missing)
}

// Unwrap makes an InstanceValueError ErrUnset, and so pending.
func (e *InstanceValueError) Unwrap() error { return ErrUnset }

// settled turns a pending error of an expression that reads nothing but
// the instance, other than an UnsetError, into an InstanceValueError.
func (s *Scope) settled(e *graph.Expression, err error) error {
	if !errors.Is(err, ErrPending) || errors.Is(err, ErrUnset) || !s.readsOnlyInstance(e) {
		return err
	}
	return &InstanceValueError{Expression: e.Source, Missing: withoutPending(err.Error())}
}

// unset turns a pending error of an expression that reads the instance
// into an UnsetError naming the field missing from it. CEL names only the
// key it did not find ("no such key: tags"), so the field must end at that
// key and be missing from the instance; otherwise err is returned as it is
// (a key missing from another resource the expression reads). Should that
// resource also lack a key of the same name, the instance's field is
// named: it is unset all the same.
func (s *Scope) unset(e *graph.Expression, err error) error {
	if len(e.InstanceFields) == 0 || !errors.Is(err, ErrPending) {
		return err
	}
	const noKey = "no such key: "
	msg := err.Error()
	i := strings.Index(msg, noKey)
	if i < 0 {
		return err
	}
	key := withoutPending(msg[i+len(noKey):])
	for _, p := range e.InstanceFields {
		if missing, ok := firstMissing(s.vars[graph.SchemaVar], p); ok && missing[len(missing)-1].Key == key {
			return &UnsetError{Expression: e.Source, Field: missing}
		}
	}
	return err
}

// firstMissing returns the part of p up to the first key v does not have.
// ok is false when everything along p is there, or when p passes through
// something other than an object.
func firstMissing(v any, p expr.Path) (expr.Path, bool) {
	for i, step := range p {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		next, found := m[step.Key]
		if !found {
			return p[:i+1], true
		}
		v = next
	}
	return nil, false
}

// neverComes adds to a pending error of e, which waits for a key its
// object never has (graph.AbsentRead), why and what to read instead: CEL
// says only that the key is not there, and it never will be.
// It stays pending: the RGD is legal, and a change to it resolves it.
func neverComes(e *graph.Expression, err error) error {
	w := e.AbsentRead
	if w == nil || !errors.Is(err, ErrPending) || errors.Is(err, ErrUnset) || !strings.Contains(err.Error(), "no such key: "+w.Key) {
		return err
	}
	return pendingWith(err, w.Advice, ErrNeverComes)
}

// pendingWith is err, pending, with words after CEL's saying why, marked
// pending by sentinel (ErrPending, or an error wrapping it).
func pendingWith(err error, words string, sentinel error) error {
	return fmt.Errorf("%s; %s: %w", withoutPending(err.Error()), words, sentinel)
}

// withoutPending is msg, the text of a pending error or the end of one,
// without the words that make it pending: what a message to the user
// quotes.
func withoutPending(msg string) string {
	return strings.TrimSuffix(msg, ": "+ErrPending.Error())
}

// classify marks errors caused by missing data as pending.
func classify(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "cost limit exceeded") {
		return fmt.Errorf("evaluation stopped: it costs more than the limit of %d the API server sets on one CEL expression (look for map, filter, all or exists nested over long lists)", celconfig.PerCallLimit)
	}
	for _, p := range []string{"no such key", "no such attribute", "no such field", "index out of bounds", "index out of range"} {
		if strings.Contains(msg, p) {
			return fmt.Errorf("%s: %w", msg, ErrPending)
		}
	}
	return err
}
