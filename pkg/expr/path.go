package expr

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Step is one step of a path into an object: a map key or a list index.
type Step struct {
	Key     string
	Index   int
	IsIndex bool
}

// Path locates a value inside an object, from its root.
type Path []Step

// Child returns a copy of p extended by a map key.
func (p Path) Child(key string) Path {
	return append(p[:len(p):len(p)], Step{Key: key})
}

// Index returns a copy of p extended by a list index.
func (p Path) Index(i int) Path {
	return append(p[:len(p):len(p)], Step{Index: i, IsIndex: true})
}

// HasPrefix reports whether p is prefix or a path below it.
func (p Path) HasPrefix(prefix Path) bool {
	return len(prefix) <= len(p) && slices.Equal(prefix, p[:len(prefix)])
}

// IsItem reports whether p ends at a list item.
func (p Path) IsItem() bool { return len(p) > 0 && p[len(p)-1].IsIndex }

// String renders the path the way kubectl explain does: spec.containers[0].image.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case isPlainKey(s.Key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Key)
		default:
			b.WriteString("[" + strconv.Quote(s.Key) + "]")
		}
	}
	return b.String()
}

// Compare orders paths as a walk of sorted keys and ascending indexes
// visits them: a path comes before those below it.
func (p Path) Compare(q Path) int {
	for i := range min(len(p), len(q)) {
		a, b := p[i], q[i]
		if c := cmp.Compare(b2i(a.IsIndex), b2i(b.IsIndex)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Index, b.Index); c != 0 {
			return c
		}
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(p), len(q))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FieldPath appends p to base as a field.Path, for error lists. A key that
// is no plain name is a map key (an annotation's app.kubernetes.io/name, a
// ConfigMap's file.conf) and is written as one, as the API server writes
// it (metadata.annotations[app.kubernetes.io/name]): as a child it would
// read as a path of fields.
func (p Path) FieldPath(base *field.Path) *field.Path {
	fp := base
	for _, s := range p {
		switch {
		case s.IsIndex:
			fp = fp.Index(s.Index)
		case isPlainKey(s.Key):
			fp = fp.Child(s.Key)
		default:
			fp = fp.Key(s.Key)
		}
	}
	return fp
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
