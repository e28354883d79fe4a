package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// warnPodNames notes a warning for each name in a pod spec of the template
// v (at p), written without expressions, that the API server refuses for
// every object so written: a container's, which is a DNS label
// (Web_Server), and a container port's, which is at most 15 characters
// (http-metrics-port). Pod specs are found by their containers list,
// wherever the kind nests them.
func (c *compiler) warnPodNames(v any, p expr.Path, base *field.Path) {
	switch x := v.(type) {
	case map[string]any:
		for _, list := range []string{"containers", "initContainers"} {
			containers, _ := x[list].([]any)
			for i, item := range containers {
				container, _ := item.(map[string]any)
				at := p.Child(list).Index(i)
				if name, ok := container["name"].(string); ok && !strings.Contains(name, "${") {
					c.warnRefused(at.Child("name").FieldPath(base), name, "container name", validation.IsDNS1123Label(name))
				}
				ports, _ := container["ports"].([]any)
				for j, port := range ports {
					port, _ := port.(map[string]any)
					if name, ok := port["name"].(string); ok && !strings.Contains(name, "${") {
						c.warnRefused(at.Child("ports").Index(j).Child("name").FieldPath(base), name, "port name", validation.IsValidPortName(name))
					}
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k != "containers" && k != "initContainers" {
				c.warnPodNames(x[k], p.Child(k), base)
			}
		}
	case []any:
		for i, item := range x {
			c.warnPodNames(item, p.Index(i), base)
		}
	}
}

// warnRefused notes the warning for a text the API server refuses, what
// it is (a port name), in every object so written; errs are its words,
// none for a text it takes.
func (c *compiler) warnRefused(at *field.Path, text, what string, errs []string) {
	if msg := refusedText(at, text, what, errs); msg != "" {
		c.warnings = append(c.warnings, msg)
	}
}

// refusedText is warnRefused's warning, "" when errs is empty.
func refusedText(at *field.Path, text, what string, errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the %s %q is refused by the API server for every object so written: %s", at, what, text, strings.Join(errs, "; "))
}
