package resolve

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kro-agent/kro-agent/pkg/cellib"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// DefaultMaxCollectionSize bounds the items one collection may expand to.
const DefaultMaxCollectionSize = 1000

// Included evaluates the node's includeWhen: all must be true.
func Included(n *graph.Node, s *Scope) (bool, error) {
	why, err := Excluded(n, s)
	return why == "" && err == nil, err
}

// Excluded is the first of n's includeWhen expressions that is not true,
// as ${...}, or "" when every one is.
func Excluded(n *graph.Node, s *Scope) (string, error) {
	for _, e := range n.IncludeWhen {
		v, err := Eval(e, s)
		if err != nil {
			return "", fmt.Errorf("includeWhen ${%s}: %w", e.Source, s.explained(e, err))
		}
		if b, ok := v.(bool); !ok || !b {
			return "${" + e.Source + "}", nil
		}
	}
	return "", nil
}

// Until says when the first of exprs to turn, of those reading
// time.now(), gives another answer in s: " until 2026-12-05T12:00:00Z",
// to follow "is false"; "" when none turns. Each is evaluated again on a
// clock of its own at s's time, so that what else s's clock noted does
// not count.
func Until(s *Scope, exprs ...*graph.Expression) string {
	var first time.Time
	for _, e := range exprs {
		if !e.CallsNow {
			continue
		}
		own := s.bind(cellib.ClockVar, s.Clock().SameTime(), false)
		if _, err := Eval(e, own); err != nil {
			continue
		}
		if at, ok := own.Clock().NextChange(); ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if first.IsZero() {
		return ""
	}
	return " until " + first.Format(time.RFC3339)
}

// Item is one member of a collection: its iterator values.
type Item struct {
	Index int
	// Scope binds the iterators on top of the instance's scope.
	Scope *Scope
}

// Expand evaluates a collection's lists and returns the cartesian product of
// their elements, in order (the last iterator varies fastest).
func Expand(n *graph.Node, s *Scope, maxItems int) ([]Item, error) {
	if maxItems <= 0 {
		maxItems = DefaultMaxCollectionSize
	}
	items := []Item{{Scope: s}}
	for _, it := range n.ForEach {
		v, err := Eval(it.List, s)
		if err != nil {
			return nil, fmt.Errorf("forEach %s: %w", it.Name, s.explained(it.List, err))
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("forEach %s: ${%s} gave %T, not a list", it.Name, it.List.Source, v)
		}
		if len(items)*len(list) > maxItems {
			// The caller names the resource.
			return nil, fmt.Errorf("forEach would expand to %d items, more than the limit of %d that kro-agent's --max-collection-size sets", len(items)*len(list), maxItems)
		}
		next := make([]Item, 0, len(items)*len(list))
		for _, item := range items {
			fromInstance := item.Scope.readsOnlyInstance(it.List)
			for _, elem := range list {
				next = append(next, Item{Scope: item.Scope.bind(it.Name, elem, fromInstance)})
			}
		}
		items = next
	}
	for i := range items {
		items[i].Index = i
	}
	return items, nil
}

// Readiness is the verdict of readyWhen on one observed object.
type Readiness struct {
	Ready bool
	// Reason says, when not ready, which expression failed and the values
	// of the fields it read.
	Reason string
}

// Ready evaluates readyWhen on observed, bound as self (the node id, or
// `each` for a collection's item). Without readyWhen an object that exists
// is ready.
func Ready(n *graph.Node, observed any, s *Scope) Readiness {
	self := n.ID
	if n.IsCollection() || n.IsExternalCollection() {
		self = graph.EachVar
	}
	scope := s.With(self, Typed(n, observed))
	if self == graph.EachVar {
		scope.items = n
	}
	for _, e := range n.ReadyWhen {
		v, err := Eval(e, scope)
		if err == nil {
			if b, ok := v.(bool); ok && b {
				continue
			}
		}
		why := "is false" + Until(scope, e)
		if err != nil {
			why = "cannot be evaluated yet (" + withoutPending(err.Error()) + ")"
			if !errors.Is(err, ErrPending) {
				why = "failed: " + err.Error()
			}
		}
		return Readiness{Reason: fmt.Sprintf("readyWhen ${%s} %s%s", e.Source, why, describeInputs(e, scope, secretData(n, self)))}
	}
	return Readiness{Ready: true}
}

// describeInputs renders the values of the fields an expression reads,
// but for those hidden says only whether they are there.
func describeInputs(e *graph.Expression, s *Scope, hidden func(in *graph.Expression) bool) string {
	inputs := e.Inputs()
	if len(inputs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(inputs))
	for _, in := range inputs {
		v, err := Eval(in, s)
		value := describe(v, err)
		if value != absentValue && hidden(in) {
			value = "<secret>"
		}
		parts = append(parts, in.Source+" = "+value)
	}
	return "; it read " + strings.Join(parts, ", ")
}

// secretData tells which inputs a readyWhen of n reads from a Secret's
// data (graph.ReadsSecretData): self is the name n's object is bound to.
func secretData(n *graph.Node, self string) func(in *graph.Expression) bool {
	if !n.IsSecret() {
		return func(*graph.Expression) bool { return false }
	}
	return func(in *graph.Expression) bool { return graph.ReadsSecretData(in.Source, self) }
}

// absentValue is how describe renders a field that is not there.
const absentValue = "<absent>"

func describe(v any, err error) string {
	switch {
	case err != nil:
		return absentValue
	case v == absent:
		return absentValue
	}
	b, _ := json.Marshal(v)
	return Shorten(string(b), 83)
}

// Shorten cuts s to at most n bytes, between characters, and marks the cut
// with "...": readiness reasons and the values quoted in them end up in
// conditions and in kubectl's columns, which must stay valid UTF-8.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Status projects the RGD's status fields. A field whose inputs are not
// available yet is left out; other errors are returned beside the partial
// status.
func Status(g *graph.Graph, s *Scope) (map[string]any, error) {
	return StatusKeeping(g, s, nil, nil)
}

// StatusKeeping is Status for a pass over the graph that did not get to
// every resource: a field that reads one of those (unreached), which s has
// not observed, keeps its value in current, the status as it is. Its
// objects stay as the last pass left them, and a field that went away
// while a dependency of theirs is not ready would come and go with every
// rollout. A list keeps its value whole, as it is projected whole; a
// value the field's type no longer takes (the RGD changed it) is not kept.
func StatusKeeping(g *graph.Graph, s *Scope, current map[string]any, unreached func(id string) bool) (map[string]any, error) {
	out := map[string]any{}
	var errs []error
	var kept []*graph.Field
	for _, f := range g.Status {
		v, ok, err := FieldValue(f, s)
		if unobserved := (*NotObservedError)(nil); unreached != nil && errors.As(err, &unobserved) && unreached(unobserved.ID) {
			kept = append(kept, f)
		}
		switch {
		case err != nil && !errors.Is(err, ErrPending):
			errs = append(errs, err)
			fallthrough
		case err != nil:
			if !inList(f.Path) {
				continue
			}
			// A list is projected whole or not at all.
			v = unresolvedItem{}
		case !ok:
			if !inList(f.Path) {
				continue
			}
			v = omittedItem{}
		}
		setNested(out, f.Path, v)
	}
	complete(out, false)
	for _, f := range kept {
		p := outsideLists(f.Path)
		if _, projected := valueAt(out, p); projected {
			continue
		}
		if v, had := valueAt(current, p); had && (len(p) < len(f.Path) || fitsType(f.Schema, v)) {
			// A copy: the status written is remembered, and current is
			// the instance's.
			setNested(out, p, runtime.DeepCopyJSONValue(v))
		}
	}
	return out, errors.Join(errs...)
}

// fitsType tells whether v is of the type s gives a field, as far as its
// JSON type goes; nil s, or no type, takes anything.
func fitsType(s *extv1.JSONSchemaProps, v any) bool {
	if s == nil || s.Type == "" || s.XIntOrString {
		return true
	}
	switch v.(type) {
	case string:
		return s.Type == "string"
	case bool:
		return s.Type == "boolean"
	case int64, float64:
		return s.Type == "integer" || s.Type == "number"
	case map[string]any:
		return s.Type == "object"
	case []any:
		return s.Type == "array"
	}
	return true
}

// outsideLists is p up to its first list index: the value a field of
// a list is projected with.
func outsideLists(p expr.Path) expr.Path {
	if i := slices.IndexFunc(p, func(s expr.Step) bool { return s.IsIndex }); i >= 0 {
		return p[:i]
	}
	return p
}

// valueAt is the value at p, a path of map keys, in v.
func valueAt(v any, p expr.Path) (any, bool) {
	for _, step := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[step.Key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// unresolvedItem stands, while status is assembled, for a value in a list
// whose inputs are not available: the list is left out.
type unresolvedItem struct{}

func inList(p expr.Path) bool {
	return slices.ContainsFunc(p, func(s expr.Step) bool { return s.IsIndex })
}

// setNested writes v at p in out, making the maps and lists on the way.
func setNested(out map[string]any, p expr.Path, v any) {
	var cur any = out
	for i, step := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[step.Key] = v
				return
			}
			next, ok := c[step.Key]
			if !ok {
				next = container(p[i+1])
				c[step.Key] = next
			}
			cur = next
		case *[]any:
			for len(*c) <= step.Index {
				*c = append(*c, nil)
			}
			if last {
				(*c)[step.Index] = v
				return
			}
			if (*c)[step.Index] == nil {
				(*c)[step.Index] = container(p[i+1])
			}
			cur = (*c)[step.Index]
		}
	}
}

// container is the empty map, or list being built, that step goes into.
func container(step expr.Step) any {
	if step.IsIndex {
		return &[]any{}
	}
	return map[string]any{}
}

// complete turns the lists setNested built into plain ones, dropping items
// left out by omit() and the values holding an unresolved item: a list (or
// a map within one) is incomplete and reported so; a map outside lists
// leaves the key of an incomplete value out.
func complete(v any, inList bool) (any, bool) {
	switch c := v.(type) {
	case unresolvedItem:
		return nil, true
	case map[string]any:
		for k, child := range c {
			done, incomplete := complete(child, inList)
			switch {
			case incomplete && inList:
				return nil, true
			case incomplete:
				delete(c, k)
			default:
				c[k] = done
			}
		}
		return c, false
	case *[]any:
		out := make([]any, 0, len(*c))
		for _, item := range *c {
			if _, omitted := item.(omittedItem); omitted {
				continue
			}
			done, incomplete := complete(item, true)
			if incomplete {
				return nil, true
			}
			out = append(out, done)
		}
		return out, false
	}
	return v, false
}
