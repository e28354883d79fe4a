package plugin

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// withoutDropped removes from live, a copy it may change, the fields an
// apply of set would remove: server-side apply removes a field its
// applier set before and no longer sends, unless another manager holds it
// too. Which fields kro-agent's last apply set, and which other managers
// hold, live's managedFields tell. Nothing is removed when an entry cannot
// be read, or names the fields of another version of the kind than set's
// (which need not be the same): a field another manager holds must not
// look dropped.
func withoutDropped(live, set map[string]any, entries []metav1.ManagedFieldsEntry) map[string]any {
	ours, others := &fieldpath.Set{}, &fieldpath.Set{}
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		held := &fieldpath.Set{}
		if err := held.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil || e.APIVersion != set["apiVersion"] {
			return live
		}
		if ownership.Applied(e.Manager, string(e.Operation)) && e.Subresource == "" {
			ours = ours.Union(held)
		} else {
			others = others.Union(held)
		}
	}
	gone := &fieldpath.Set{}
	for p := range ours.Difference(others).All() {
		if _, ok := at(set, p); !ok {
			gone.Insert(p.Copy())
		}
	}
	var removed []fieldpath.Path
	for p := range gone.All() {
		if !underAny(gone, p) {
			removed = append(removed, p.Copy())
		}
	}
	// Last first: an item of a list by index goes before those it follows.
	for i := len(removed) - 1; i >= 0; i-- {
		live, _ = removeAt(live, removed[i]).(map[string]any)
	}
	return live
}

// underAny tells whether a path that holds p is in gone: p goes with it,
// and once a field that p's key names is gone p cannot be found.
func underAny(gone *fieldpath.Set, p fieldpath.Path) bool {
	for i := 1; i < len(p); i++ {
		if gone.Has(p[:i]) {
			return true
		}
	}
	return false
}

// at is the value at path p in obj, an object as JSON decodes it, and
// whether there is one.
func at(obj any, p fieldpath.Path) (any, bool) {
	for _, pe := range p {
		i, ok := indexOf(obj, pe)
		switch {
		case !ok:
			return nil, false
		case pe.FieldName != nil:
			obj = obj.(map[string]any)[*pe.FieldName]
		default:
			obj = obj.([]any)[i]
		}
	}
	return obj, true
}

// removeAt is node without what path p selects in it; node itself when p
// selects nothing.
func removeAt(node any, p fieldpath.Path) any {
	if len(p) == 0 {
		return node
	}
	i, ok := indexOf(node, p[0])
	if !ok {
		return node
	}
	if m, isMap := node.(map[string]any); isMap {
		if len(p) == 1 {
			delete(m, *p[0].FieldName)
		} else {
			m[*p[0].FieldName] = removeAt(m[*p[0].FieldName], p[1:])
		}
		return m
	}
	l := node.([]any)
	if len(p) == 1 {
		return append(l[:i:i], l[i+1:]...)
	}
	l[i] = removeAt(l[i], p[1:])
	return l
}

// indexOf finds the child pe selects in node: for a field of a map, ok
// alone tells; for an item of a list, its index. An item is selected by
// its key fields (a container by its name), by its value (an item of a
// set) or by its index (an item of an atomic list).
func indexOf(node any, pe fieldpath.PathElement) (int, bool) {
	if pe.FieldName != nil {
		m, ok := node.(map[string]any)
		if !ok {
			return 0, false
		}
		_, ok = m[*pe.FieldName]
		return 0, ok
	}
	l, ok := node.([]any)
	if !ok {
		return 0, false
	}
	for i, item := range l {
		switch {
		case pe.Index != nil && *pe.Index == i,
			pe.Value != nil && value.Equals(*pe.Value, value.NewValueInterface(item)),
			pe.Key != nil && hasKey(item, *pe.Key):
			return i, true
		}
	}
	return 0, false
}

// hasKey tells whether item, an item of an associative list, has the key
// fields of key.
func hasKey(item any, key value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(f.Value, value.NewValueInterface(v)) {
			return false
		}
	}
	return true
}
