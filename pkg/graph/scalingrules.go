package graph

// Rules the API server enforces on how workloads update, scale and are
// disrupted, beyond the published schemas: a template breaking one
// compiles and is refused at every apply, so it is warned of.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// updateStrategies are where a workload of apps gives its update strategy,
// by kind, and the strategy type that takes no rollingUpdate. (A
// DaemonSet's OnDelete takes one, unused.)
var updateStrategies = map[string]struct{ field, whole string }{
	"Deployment":  {"strategy", "Recreate"},
	"StatefulSet": {"updateStrategy", "OnDelete"},
}

// warnUpdateStrategy notes a warning for a workload whose update strategy,
// written without expressions, is of the type that replaces pods without
// rolling (Recreate, OnDelete) and yet gives a rollingUpdate: the API
// server refuses every object so written.
func (c *compiler) warnUpdateStrategy(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "apps" {
		return
	}
	rule, ok := updateStrategies[n.Kind.GVK.Kind]
	if !ok {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	strategy, _ := spec[rule.field].(map[string]any)
	if kind, ok := literalText(strategy["type"]); ok && kind == rule.whole && strategy["rollingUpdate"] != nil {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: given with type %s, and the API server refuses every %s so written: rollingUpdate goes with type RollingUpdate alone",
			path.Child("spec", rule.field, "rollingUpdate"), kind, n.Kind.GVK.Kind))
	}
}

// warnAutoscaler notes a warning for what the API server refuses in a
// HorizontalPodAutoscaler, written without expressions, for every one so
// written: fewer maxReplicas than minReplicas, and a target of a resource
// metric that gives neither an averageUtilization nor an averageValue, or
// both.
func (c *compiler) warnAutoscaler(n *Node, path *field.Path) {
	if !isKind(n, "autoscaling", "HorizontalPodAutoscaler") {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	least, bounded := spec["minReplicas"].(int64)
	most, capped := spec["maxReplicas"].(int64)
	if bounded && capped && most < least {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %d is fewer than minReplicas (%d), and the API server refuses every HorizontalPodAutoscaler so written",
			path.Child("spec", "maxReplicas"), most, least))
	}
	metrics, _ := spec["metrics"].([]any)
	for i, item := range metrics {
		metric, _ := item.(map[string]any)
		for _, source := range []string{"resource", "containerResource"} {
			src, _ := metric[source].(map[string]any)
			target, ok := src["target"].(map[string]any)
			if !ok {
				continue
			}
			at := path.Child("spec", "metrics").Index(i).Child(source, "target")
			_, utilization := target["averageUtilization"]
			_, value := target["averageValue"]
			switch {
			case !utilization && !value:
				c.warnings = append(c.warnings, fmt.Sprintf("%s: gives neither averageUtilization nor averageValue, and the API server refuses every HorizontalPodAutoscaler so written: a resource's target is one of them (averageUtilization: 80)", at))
			case utilization && value:
				c.warnings = append(c.warnings, fmt.Sprintf("%s: gives both averageUtilization and averageValue, and the API server refuses every HorizontalPodAutoscaler so written: a resource's target is one of them", at))
			}
		}
	}
}

// warnDisruptionBudget notes a warning for a PodDisruptionBudget that
// gives both minAvailable and maxUnavailable: the API server takes one.
func (c *compiler) warnDisruptionBudget(n *Node, path *field.Path) {
	if !isKind(n, "policy", "PodDisruptionBudget") {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	_, least := spec["minAvailable"]
	if _, most := spec["maxUnavailable"]; least && most {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: given with minAvailable too, and the API server refuses every PodDisruptionBudget so written: a budget gives one of them", path.Child("spec", "maxUnavailable")))
	}
}
