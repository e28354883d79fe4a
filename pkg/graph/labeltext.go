package graph

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// notInLabel matches the runs of characters no label value holds.
var notInLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// warnLabelText notes a warning for each label of the template v (at p)
// whose key, or whose value's text outside its expressions, no label may
// hold (a space, a second '/', more than 63 characters): the API server
// refuses every object so written. Keys and values given by expressions are
// the instance's to get right, and are not checked.
func (c *compiler) warnLabelText(v any, p expr.Path, base *field.Path) {
	walk(v, p, func(v any, p expr.Path) bool {
		// An object's or a pod template's metadata.labels, and a label
		// selector's matchLabels: the labels of other things, such as a
		// Prometheus rule's, follow rules of their own.
		labels, ok := v.(map[string]any)
		if ok && (lastKey(p) == "matchLabels" || lastKey(p) == "labels" && parentKey(p) == "metadata") {
			c.checkLabels(labels, p, base)
			return false
		}
		return true
	})
}

// checkLabels checks one map of labels (see warnLabelText).
func (c *compiler) checkLabels(labels map[string]any, p expr.Path, base *field.Path) {
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		at := p.Child(key).FieldPath(base)
		if !strings.Contains(key, "${") {
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				c.warnRefused(at, key, "label key", errs)
				continue
			}
		}
		value, ok := labels[key].(string)
		if !ok {
			continue
		}
		if !strings.Contains(value, "${") {
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				msg := refusedText(at, value, "label value", errs)
				if fixed := strings.Trim(notInLabel.ReplaceAllString(value, "-"), "-_."); fixed != "" && len(validation.IsValidLabelValue(fixed)) == 0 {
					msg += fmt.Sprintf("; write %q", fixed)
				}
				c.warnings = append(c.warnings, msg)
			}
			continue
		}
		segs, err := expr.Parse(value)
		if err != nil {
			continue
		}
		var bad []string
		for _, s := range segs {
			if !s.IsExpr {
				bad = append(bad, notInLabel.FindAllString(s.Literal, -1)...)
			}
		}
		if chars := strings.Join(bad, ""); chars != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s: its text holds %q, which no label value may: a label value is letters, digits, '-', '_' and '.', so the API server refuses every object so written",
				at, value, chars))
		}
	}
}
