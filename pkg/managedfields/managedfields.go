// Package managedfields reads what server-side apply records in an
// object's managedFields: which fields an apply of a new configuration by
// kro-agent would remove. An apply removes a field its applier set before
// and no longer sends, unless another manager holds it too; what kro-agent
// no longer sends, only those records tell.
package managedfields

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// Dropped returns the fields of an object with managedFields entries that
// kro-agent's apply of config would remove: those its last apply set, that
// config does not set and that no other manager holds. A field is
// one path, the highest one removed (a container, not its fields). ok is
// false when that cannot be told: an entry cannot be read, or names the
// fields of another version of the kind than config's (which need not be
// named alike), and a field another manager holds must not look dropped.
func Dropped(config map[string]any, entries []metav1.ManagedFieldsEntry) (dropped []fieldpath.Path, ok bool) {
	ours, others := &fieldpath.Set{}, &fieldpath.Set{}
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		held := &fieldpath.Set{}
		if err := held.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil || e.APIVersion != config["apiVersion"] {
			return nil, false
		}
		if ownership.Applied(e.Manager, string(e.Operation)) && e.Subresource == "" {
			ours = ours.Union(held)
		} else {
			others = others.Union(held)
		}
	}
	gone := &fieldpath.Set{}
	for p := range ours.Difference(others).All() {
		if !sets(config, p) {
			gone.Insert(p.Copy())
		}
	}
	for p := range gone.All() {
		if !underAny(gone, p) {
			dropped = append(dropped, p.Copy())
		}
	}
	return dropped, true
}

// Remove takes the fields at paths (as Dropped returns them) out of obj,
// which it changes, and returns it.
func Remove(obj map[string]any, paths []fieldpath.Path) map[string]any {
	// Last first: an item of a list by index goes before those it follows.
	for i := len(paths) - 1; i >= 0; i-- {
		obj, _ = removeAt(obj, paths[i]).(map[string]any)
	}
	return obj
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

// keyMatch says how an item of a list is found by its key fields.
type keyMatch int

const (
	// stored: an item of a stored object has every key field.
	stored keyMatch = iota
	// sent: an item of a configuration as it is sent may leave out a key
	// field the API server defaults, as a container's port leaves out
	// its protocol, which its key in managedFields holds.
	sent
)

// sets tells whether config, a configuration as JSON decodes it, sets
// the field at path p.
func sets(config any, p fieldpath.Path) bool {
	for _, pe := range p {
		i, ok := indexOf(config, pe, sent)
		switch {
		case !ok:
			return false
		case pe.FieldName != nil:
			config = config.(map[string]any)[*pe.FieldName]
		default:
			config = config.([]any)[i]
		}
	}
	return true
}

// removeAt is node without what path p selects in it; node itself when p
// selects nothing.
func removeAt(node any, p fieldpath.Path) any {
	if len(p) == 0 {
		return node
	}
	i, ok := indexOf(node, p[0], stored)
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
func indexOf(node any, pe fieldpath.PathElement, match keyMatch) (int, bool) {
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
			pe.Key != nil && hasKey(item, *pe.Key, match):
			return i, true
		}
	}
	return 0, false
}

// hasKey tells whether item, an item of an associative list, has the key
// fields of key; as sent, a key field it leaves out is not told apart.
func hasKey(item any, key value.FieldList, match keyMatch) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, ok := m[f.Name]
		switch {
		case !ok && match == sent:
		case !ok || !value.Equals(f.Value, value.NewValueInterface(v)):
			return false
		}
	}
	return true
}
