// Package managedfields reads what server-side apply records in an
// object's managedFields: which fields an apply of a new configuration by
// kro-agent would remove. An apply removes a field its applier set before
// and no longer sends, unless another manager holds it too; what kro-agent
// no longer sends, only those records tell.
package managedfields

import (
	"bytes"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// Dropped returns the fields of an object with managedFields entries that
// kro-agent's apply of config would remove: those its last apply set, that
// config does not set and that no other manager holds. A field is
// one path, the highest one removed (a container, not its fields). ok is
// false when that cannot be told: an entry cannot be read, or kro-agent's
// own names the fields of another version of the kind than config's
// (which need not be named alike). Another manager's entry of another
// version is read as if its fields were named as in config's: the API
// server converts them to compare, and most fields keep their names.
func Dropped(config map[string]any, entries []metav1.ManagedFieldsEntry) (dropped []fieldpath.Path, ok bool) {
	ours, others, complete := heldFields(config, entries)
	if !complete {
		return nil, false
	}
	return droppedFields(config, ours, others), true
}

// heldFields reads the fields entries hold, kro-agent's own apply's
// (ours) apart from every other manager's. An entry that cannot be read,
// or kro-agent's own of another version of the kind than config's, is left
// out, and complete says there was none.
func heldFields(config map[string]any, entries []metav1.ManagedFieldsEntry) (ours, others *fieldpath.Set, complete bool) {
	ours, others, complete = &fieldpath.Set{}, &fieldpath.Set{}, true
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		held := &fieldpath.Set{}
		if err := held.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
			complete = false
			continue
		}
		switch {
		case !ownership.Applied(e.Manager, string(e.Operation)) || e.Subresource != "":
			others = others.Union(held)
		case e.APIVersion != config["apiVersion"]:
			complete = false
		default:
			ours = ours.Union(held)
		}
	}
	return ours, others, complete
}

// droppedFields is Dropped from the fields held.
func droppedFields(config map[string]any, ours, others *fieldpath.Set) []fieldpath.Path {
	gone := &fieldpath.Set{}
	for p := range ours.Difference(others).All() {
		if !sets(config, p) {
			gone.Insert(p.Copy())
		}
	}
	var dropped []fieldpath.Path
	for p := range gone.All() {
		if !underAny(gone, p) {
			dropped = append(dropped, p.Copy())
		}
	}
	return dropped
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

// Merged is live as kro-agent's apply of config would leave it, as far as
// managedFields tell without the kind's schema: what Dropped finds taken
// out, then config laid over the rest as an apply merges it. Maps merge
// key by key; a list whose items managedFields name by key fields (a
// Deployment's containers by name) merges item by item, an item of config
// over the live one of its key, which keeps the fields the API server
// defaulted, and a list of as many items as live's item by item; anything
// else config replaces. live and config are copies it may keep.
func Merged(live, config map[string]any, entries []metav1.ManagedFieldsEntry) map[string]any {
	ours, others, complete := heldFields(config, entries)
	if complete {
		live = Remove(live, droppedFields(config, ours, others))
	}
	// Any manager's entry names a list's key fields.
	out, _ := merge(live, config, ours.Union(others)).(map[string]any)
	return out
}

// LaidOver is live as the first apply of config by a manager of its own
// would leave it: config laid over live as Merged lays it, nothing taken
// out, as that manager held nothing before. live and config are copies it
// may keep.
func LaidOver(live, config map[string]any, entries []metav1.ManagedFieldsEntry) map[string]any {
	ours, others, _ := heldFields(config, entries)
	out, _ := merge(live, config, ours.Union(others)).(map[string]any)
	return out
}

// merge lays set over live (see Merged); fields are the paths
// managedFields hold under this node.
func merge(live, set any, fields *fieldpath.Set) any {
	switch s := set.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return s
		}
		for k, v := range s {
			l[k] = merge(l[k], v, fields.WithPrefix(fieldpath.FieldNameElement(k)))
		}
		return l
	case []any:
		l, ok := live.([]any)
		if !ok {
			return s
		}
		if key := listKey(fields); key != nil {
			return mergeByKey(l, s, key, fields)
		}
		if len(l) != len(s) {
			return s
		}
		for i := range s {
			l[i] = merge(l[i], s[i], &fieldpath.Set{})
		}
		return l
	}
	return set
}

// mergeByKey merges set's items over live's of the same key (names the
// key fields): set's items in their order, then live's that set does not
// name, which an apply leaves.
func mergeByKey(live, set []any, key []string, fields *fieldpath.Set) []any {
	out := make([]any, 0, len(set)+len(live))
	merged := make([]bool, len(live))
	elements := make([]*fieldpath.PathElement, len(live))
	for j, item := range live {
		elements[j] = keyElement(item, key)
	}
	for _, item := range set {
		// The first live item of its key not merged yet, so that an
		// item named twice (which the API server refuses) is neither
		// lost nor doubled in the preview; an item that is no object,
		// which a keyed list should not hold, matches only itself.
		j := -1
		for i := range live {
			pe := elements[i]
			if !merged[i] && (pe != nil && hasKey(item, *pe.Key, sent) || pe == nil && reflect.DeepEqual(live[i], item)) {
				j = i
				break
			}
		}
		switch {
		case j < 0:
			out = append(out, item)
		case elements[j] == nil:
			merged[j] = true
			out = append(out, item)
		default:
			merged[j] = true
			out = append(out, merge(live[j], item, fields.WithPrefix(*elements[j])))
		}
	}
	for j, item := range live {
		if !merged[j] {
			out = append(out, item)
		}
	}
	return out
}

// listKey is the names of the key fields of the list whose managedFields
// are fields, nil when they name its items otherwise or not at all.
func listKey(fields *fieldpath.Set) []string {
	var key []string
	find := func(pe fieldpath.PathElement) {
		if key == nil && pe.Key != nil {
			for _, f := range *pe.Key {
				key = append(key, f.Name)
			}
		}
	}
	fields.Members.Iterate(find)
	fields.Children.Iterate(find)
	return key
}

// keyElement is the path element of a stored item of a list by its key
// fields; nil for an item that is not an object.
func keyElement(item any, key []string) *fieldpath.PathElement {
	m, ok := item.(map[string]any)
	if !ok {
		return nil
	}
	fields := make(value.FieldList, 0, len(key))
	for _, name := range key {
		if v, ok := m[name]; ok {
			fields = append(fields, value.Field{Name: name, Value: value.NewValueInterface(v)})
		}
	}
	pe := fieldpath.KeyElement(fields...)
	return &pe
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
