package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// selectingWorkloads are the kinds whose spec.selector must match the
// labels of their pod template, spec.template.metadata.labels: the API
// server refuses one that does not, at every apply.
var selectingWorkloads = map[string]bool{
	"apps/Deployment": true, "apps/ReplicaSet": true, "apps/StatefulSet": true, "apps/DaemonSet": true,
}

// warnSelectorMismatch notes a warning for each label of a workload's
// spec.selector.matchLabels that its pod template does not carry, or
// carries with another value, as written: a label the template lacks, or
// two texts without expressions that differ, are refused for every
// instance; two that differ in their expressions are refused unless they
// always render alike. A selector or labels given whole by an expression
// is not compared.
func (c *compiler) warnSelectorMismatch(n *Node, path *field.Path) {
	if n.Kind == nil || !selectingWorkloads[n.Kind.GVK.Group+"/"+n.Kind.GVK.Kind] {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	matchLabels, ok := selector["matchLabels"].(map[string]any)
	if !ok {
		return
	}
	podTemplate, ok := spec["template"].(map[string]any)
	if !ok {
		return // given whole by an expression, or left out
	}
	var labels map[string]any
	labelsGiven := false
	if metadata, given := podTemplate["metadata"]; given {
		meta, ok := metadata.(map[string]any)
		if !ok {
			return // given by an expression
		}
		if l, given := meta["labels"]; given {
			if labels, ok = l.(map[string]any); !ok {
				return // given by an expression
			}
			labelsGiven = true
		}
	}
	for _, key := range slices.Sorted(maps.Keys(matchLabels)) {
		want, _ := matchLabels[key].(string)
		at := expr.Path{{Key: "spec"}, {Key: "selector"}, {Key: "matchLabels"}, {Key: key}}.FieldPath(path)
		got, carried := labels[key].(string)
		switch {
		case !labelsGiven || !carried:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s: the pod template's labels (spec.template.metadata.labels) do not hold %s, so the API server refuses every %s so written: its selector must match its pods' labels",
				at, want, key, n.Kind.GVK.Kind))
		case got == want:
		default:
			unless := ""
			if strings.Contains(got+want, "${") {
				unless = " unless the two always render alike"
			}
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s: the pod template gives %s the value %s, so the API server refuses every %s so written%s: its selector must match its pods' labels",
				at, want, key, got, n.Kind.GVK.Kind, unless))
		}
	}
}
