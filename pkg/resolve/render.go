package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// FieldValue evaluates one field: a standalone expression's value, or the
// text of an embedded one. ok is false when an optional standalone
// expression holds nothing, which leaves the field out.
func FieldValue(f *graph.Field, s *Scope) (v any, ok bool, err error) {
	if f.Standalone() {
		v, err := Eval(f.Exprs[0], s)
		if err != nil {
			return nil, false, fieldError(f.Path, f.Exprs[0], s.explained(f.Exprs[0], err))
		}
		if v == absent {
			return v, false, nil
		}
		// A value typed only now: refused here, naming the expression,
		// rather than by the API server in its decoder's words.
		if err := celenv.ValueFits(f.Expects, v); err != nil {
			return nil, false, fmt.Errorf("%s: ${%s} %w%s", f.Path, f.Exprs[0].Source, err, base64Advice(f, v))
		}
		if err := quantityFits(f, v); err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	var b strings.Builder
	i := 0
	for _, seg := range f.Segments {
		if !seg.IsExpr {
			b.WriteString(seg.Literal)
			continue
		}
		v, err := Eval(f.Exprs[i], s)
		i++
		if err != nil {
			return nil, false, fieldError(f.Path, f.Exprs[i-1], s.explained(f.Exprs[i-1], err))
		}
		str, isString := v.(string)
		if !isString {
			return nil, false, fmt.Errorf("%s: ${%s} gave %T, not a string", f.Path, seg.Expr, v)
		}
		b.WriteString(str)
	}
	text := b.String()
	if f.Expects != nil {
		// Text where bytes go, which must be base64.
		if err := celenv.ValueFits(f.Expects, text); err != nil {
			return nil, false, fmt.Errorf("%s: %s %w%s", f.Path, expr.Format(f.Segments), err, base64Advice(f, text))
		}
	}
	if err := quantityFits(f, text); err != nil {
		return nil, false, err
	}
	return text, true, nil
}

// quantityFits checks text rendered into a field of a quantity (a
// container's memory limit), which the API server refuses otherwise in
// words that name no field; numbers are quantities.
func quantityFits(f *graph.Field, v any) error {
	text, ok := v.(string)
	if !f.Quantity || !ok {
		return nil
	}
	if why := graph.QuantityRefusal(text); why != "" {
		return fmt.Errorf("%s: %s is %q, which is no quantity: %s", f.Path, expr.Format(f.Segments), text, why)
	}
	return nil
}

// base64Advice says how to write text into the field f of bytes, whose
// value v did not fit it, when v is text (that is not base64): as bytes,
// which are written so. A Secret's data (the only data of bytes at the
// top of a kind) also takes text as it is under stringData.
func base64Advice(f *graph.Field, v any) string {
	if _, text := v.(string); !text || !celenv.TakesBytes(f.Expects) {
		return ""
	}
	// Text with expressions in it is their concatenation.
	parts := make([]string, 0, len(f.Segments))
	for _, seg := range f.Segments {
		switch {
		case !seg.IsExpr:
			parts = append(parts, strconv.Quote(seg.Literal))
		case len(f.Segments) > 1 && strings.ContainsAny(seg.Expr, " ?:+-*/%|&<>=!"):
			parts = append(parts, "("+seg.Expr+")")
		default:
			parts = append(parts, seg.Expr)
		}
	}
	advice := fmt.Sprintf("; write ${bytes(%s)} to have the text written in base64", strings.Join(parts, " + "))
	if len(f.Path) == 2 && f.Path[0].Key == "data" {
		advice += ", or give it under stringData, which takes text as it is"
	}
	return advice
}

// fieldError is the error of the expression e of the field at path, which
// names the expression (the field may hold it among others), unless what
// it waits for names it already: a resource not observed, a field the
// instance does not set or holds in another type than its schema's.
func fieldError(path expr.Path, e *graph.Expression, err error) error {
	var unobserved *NotObservedError
	var misfit *MisfitError
	if errors.As(err, &unobserved) || errors.Is(err, ErrUnset) || errors.As(err, &misfit) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s: ${%s}: %w", path, e.Source, err)
}

// WaitsForValue tells whether a pending error waits for a value missing
// from what an expression reads (a status field not written, a list too
// short), rather than for a resource not observed yet or a field the
// instance does not set: when the value is the instance's own, nothing but
// its author supplies it.
func WaitsForValue(err error) bool {
	var unobserved *NotObservedError
	return errors.Is(err, ErrPending) && !errors.Is(err, ErrUnset) && !errors.As(err, &unobserved)
}

// Waiting says what a pending error (of Eval, Render, Included or Expand)
// waits for, without the words that make it pending: a field the instance
// does not set or a value missing from it alone, a resource not observed
// yet, or a value an expression reads that is not there yet (a status
// field not written, a list too short).
func Waiting(err error) string {
	var unset *UnsetError
	var unobserved *NotObservedError
	var missing *InstanceValueError
	switch {
	case errors.As(err, &unset):
		return "the instance does not set " + unset.Field.String()
	case errors.As(err, &missing):
		// It names what is missing, and where.
		return err.Error()
	case errors.As(err, &unobserved):
		return "waiting for resource " + unobserved.ID
	}
	return "waiting for a value it reads: " + withoutPending(err.Error())
}

// Render returns the node's template with every field evaluated in s. The
// template is deep-copied; the graph stays untouched.
func Render(n *graph.Node, s *Scope) (map[string]any, error) {
	obj := runtime.DeepCopyJSON(n.Template)
	if err := fill(obj, n.Fields, s, nil); err != nil {
		return nil, err
	}
	return obj, nil
}

// RenderOr renders like Render, but a field that cannot be evaluated is
// given fallback(f, err) instead of failing the whole object, for previews
// of objects whose inputs do not all exist yet.
func RenderOr(n *graph.Node, s *Scope, fallback func(f *graph.Field, err error) any) map[string]any {
	obj := runtime.DeepCopyJSON(n.Template)
	// With a fallback no field fails, and the paths come from the template
	// itself, so they always fit it.
	_ = fill(obj, n.Fields, s, fallback)
	return obj
}

// fill evaluates fields in s and writes them into obj. A field that fails
// to evaluate fails the whole unless fallback gives it a value.
func fill(obj map[string]any, fields []*graph.Field, s *Scope, fallback func(f *graph.Field, err error) any) error {
	omittedItems := false
	for _, f := range fields {
		v, ok, err := FieldValue(f, s)
		if err != nil {
			if fallback == nil {
				return err
			}
			v, ok = fallback(f, err), true
		}
		if err := setPath(obj, f.Path, v, ok); err != nil {
			return err
		}
		omittedItems = omittedItems || !ok && f.Path.IsItem()
	}
	if omittedItems {
		dropOmittedItems(obj)
	}
	return nil
}

// Target is what an externalRef reads: one object by name, or the list
// Selector selects.
type Target struct {
	Name      string
	Namespace string
	// Selector is set for a reference by labels, as the RGD gives it;
	// Namespace "" then means every namespace. What is listed is
	// ListSelector's.
	Selector labels.Selector
	// reader is the UID of the instance that reads the target, if it
	// exists yet.
	reader string
}

// ListSelector is the selector a reference by labels lists and watches
// with: Selector, less the objects the reading instance manages. They are
// its outputs, not its inputs, and they carry the instance's own labels: an
// instance labelled team=red that reads the ConfigMaps labelled team=red
// would otherwise read its own, and a forEach over them would create a copy
// of every copy until the names grew too long.
func (t Target) ListSelector() labels.Selector {
	if t.Selector == nil || t.reader == "" {
		return t.Selector
	}
	notOwn, err := labels.NewRequirement(v1alpha1.LabelInstanceID, selection.NotEquals, []string{t.reader})
	if err != nil { // not a UID the API server gave
		return t.Selector
	}
	return t.Selector.Add(*notOwn)
}

// ExternalTarget evaluates an externalRef's metadata: the object's name and
// namespace (the instance's when it gives none), or the selector of a list;
// literal values stand as written.
func ExternalTarget(n *graph.Node, s *Scope) (Target, error) {
	ref := runtime.DeepCopyJSON(n.Reference)
	if err := fill(ref, n.Fields, s, nil); err != nil {
		return Target{}, err
	}
	meta, _ := ref["metadata"].(map[string]any)
	t := Target{}
	t.Name, _ = meta["name"].(string)
	t.Namespace, _ = meta["namespace"].(string)
	if sel, ok := meta["selector"]; ok {
		selector, err := labelSelector(sel)
		if err != nil {
			return Target{}, fmt.Errorf("metadata.selector: %w", err)
		}
		t.Selector, t.reader = selector, s.instanceUID()
	}
	if t.Namespace == "" && t.Selector == nil && n.Kind != nil && n.Kind.Namespaced {
		t.Namespace = s.instanceNamespace()
	}
	return t, nil
}

// labelSelector reads a rendered selector as a Kubernetes label selector,
// refusing fields a label selector does not have.
func labelSelector(v any) (labels.Selector, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ls metav1.LabelSelector
	if err := dec.Decode(&ls); err != nil {
		return nil, fmt.Errorf("%s is not a label selector: %w", raw, err)
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// omittedItem marks a list item whose expression left it out (omit(), an
// empty optional).
type omittedItem struct{}

// dropOmittedItems removes the items setPath marked from every list in v,
// as kro does: `["echo", "${x != "" ? x : omit()}"]` is ["echo"] when x is
// empty, not ["echo", ""].
func dropOmittedItems(v any) any {
	switch c := v.(type) {
	case map[string]any:
		for k, item := range c {
			c[k] = dropOmittedItems(item)
		}
	case []any:
		kept := c[:0]
		for _, item := range c {
			if _, omitted := item.(omittedItem); !omitted {
				kept = append(kept, dropOmittedItems(item))
			}
		}
		return kept
	}
	return v
}

// setPath writes v at p in obj, or removes the field when keep is false.
func setPath(obj map[string]any, p expr.Path, v any, keep bool) error {
	var cur any = obj
	for i, step := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if step.IsIndex {
				return fmt.Errorf("%s: expected a list", p)
			}
			if last {
				if keep {
					c[step.Key] = v
				} else {
					delete(c, step.Key)
				}
				return nil
			}
			cur = c[step.Key]
		case []any:
			if !step.IsIndex || step.Index >= len(c) {
				return fmt.Errorf("%s: expected a map", p)
			}
			if last {
				// An absent list item is only marked, so that the indexes of
				// the fields still to be set hold; dropOmittedItems removes it.
				if keep {
					c[step.Index] = v
				} else {
					c[step.Index] = omittedItem{}
				}
				return nil
			}
			cur = c[step.Index]
		default:
			return fmt.Errorf("%s: the template has no value there", p)
		}
	}
	return errors.New("empty path")
}
