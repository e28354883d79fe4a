package graph

// Rules the API server enforces on the containers of a pod spec beyond
// their published schema: a template breaking one compiles and is refused
// at every apply, so it is warned of.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// claimTemplateKinds are the kinds of Kubernetes' own with claim templates
// beside their pod template, which its containers mount as volumes.
var claimTemplateKinds = map[string]bool{"StatefulSet": true}

// warnContainers notes a warning for what the API server refuses in the
// containers of a pod spec of n's template, written without expressions,
// for every object so written: a container's name, which is a DNS label
// (Web_Server), and a container port's, which is at most 15 characters
// (http-metrics-port), as is a probe's port given by name. In a kind of
// Kubernetes' own, whose validation judges them as pods, also: a
// container without an image, a request more than its limit, a port out
// of range or two ports of one name, an env var given both a value and
// valueFrom, a probe that says nothing or more than one thing to do, and
// a volume mount naming
// no volume of the pod. Pod specs are found by their containers list,
// wherever the kind nests them.
func (c *compiler) warnContainers(n *Node, base *field.Path) {
	builtin := n.Kind != nil && !n.Kind.Custom
	walk(n.Template, nil, func(v any, p expr.Path) bool {
		pod, ok := v.(map[string]any)
		if _, listed := pod["containers"].([]any); !ok || !listed {
			return true
		}
		volumes := map[string]bool{}
		known := addLiteralNames(volumes, pod["volumes"], func(v map[string]any) any { return v["name"] })
		if builtin && claimTemplateKinds[n.Kind.GVK.Kind] && known {
			spec, _ := n.Template["spec"].(map[string]any)
			known = addLiteralNames(volumes, spec["volumeClaimTemplates"], func(claim map[string]any) any {
				metadata, _ := claim["metadata"].(map[string]any)
				return metadata["name"]
			})
		}
		for _, list := range []string{"containers", "initContainers"} {
			items, _ := pod[list].([]any)
			for i, item := range items {
				container, ok := item.(map[string]any)
				if !ok {
					continue
				}
				at := p.Child(list).Index(i)
				c.warnContainerNames(container, at, base)
				if !builtin {
					continue
				}
				if _, given := container["image"]; !given {
					c.warnings = append(c.warnings, fmt.Sprintf("%s: left out, and the API server refuses every %s so written: a container of its pods needs an image", at.Child("image").FieldPath(base), n.Kind.GVK.Kind))
				}
				c.warnRequestsOverLimits(container, at.Child("resources"), base)
				c.warnContainerPorts(container, at.Child("ports"), base)
				c.warnEnvBothWays(container, at.Child("env"), base)
				c.warnProbeActions(container, at, base)
				if known {
					c.warnMountsOfNoVolume(container, at.Child("volumeMounts"), base, volumes)
				}
			}
		}
		return false
	})
}

// warnContainerNames notes a warning for a container's name, a port's or
// a probe's port name the API server refuses.
func (c *compiler) warnContainerNames(container map[string]any, at expr.Path, base *field.Path) {
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
	// A probe's port by name names one of the container's.
	for _, probe := range probeNames {
		for _, action := range []string{"httpGet", "tcpSocket"} {
			probed, _ := container[probe].(map[string]any)
			handler, _ := probed[action].(map[string]any)
			c.warnPortName(at.Child(probe).Child(action).Child("port").FieldPath(base), handler["port"], "probe's port name")
		}
	}
}

// probeNames are a container's probes.
var probeNames = []string{"livenessProbe", "readinessProbe", "startupProbe"}

// probeActions are what a probe does, of which it names exactly one.
var probeActions = []string{"exec", "grpc", "httpGet", "tcpSocket"}

// warnProbeActions notes a warning for a probe written out that names
// none of the actions a probe takes (a livenessProbe of
// initialDelaySeconds alone), or more than one: it does exactly one.
func (c *compiler) warnProbeActions(container map[string]any, at expr.Path, base *field.Path) {
	for _, name := range probeNames {
		probe, ok := container[name].(map[string]any)
		if !ok {
			continue
		}
		var named []string
		for _, action := range probeActions {
			if _, ok := probe[action]; ok {
				named = append(named, action)
			}
		}
		switch {
		case len(named) == 0:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: names nothing to do, and the API server refuses every object so written: a probe has one of %s",
				at.Child(name).FieldPath(base), strings.Join(probeActions, ", ")))
		case len(named) > 1:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: names %s, and the API server refuses every object so written: a probe does one of them",
				at.Child(name).FieldPath(base), strings.Join(named, " and ")))
		}
	}
}

// warnRequestsOverLimits notes a warning for each request of a container's
// resources (at p) more than its limit, both written without expressions:
// the API server refuses every object so written. A request left out is
// its limit, and a limit left out none.
func (c *compiler) warnRequestsOverLimits(container map[string]any, p expr.Path, base *field.Path) {
	resources, _ := container["resources"].(map[string]any)
	requests, _ := resources["requests"].(map[string]any)
	limits, _ := resources["limits"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		request, ok := literalQuantity(requests[name])
		limit, limited := literalQuantity(limits[name])
		if ok && limited && request.Cmp(limit) > 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: the request %s is more than the limit %s, and the API server refuses every object so written: a container's request is at most its limit",
				p.Child("requests").Child(name).FieldPath(base), request.String(), limit.String()))
		}
	}
}

// literalQuantity is v, a quantity written without expressions (512Mi, or
// a number YAML reads as one), false for anything else.
func literalQuantity(v any) (resource.Quantity, bool) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case int64, float64:
		text = fmt.Sprint(x)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(text)
	return q, err == nil
}

// warnContainerPorts notes a warning for a container's port number out of
// the range ports have (containerPort 70000; a hostPort, where given), and
// for two of its ports of one name.
func (c *compiler) warnContainerPorts(container map[string]any, p expr.Path, base *field.Path) {
	ports, _ := container["ports"].([]any)
	named := map[string]int{}
	for i, item := range ports {
		port, _ := item.(map[string]any)
		c.warnPortNumber(p.Index(i).Child("containerPort").FieldPath(base), port["containerPort"], false)
		c.warnPortNumber(p.Index(i).Child("hostPort").FieldPath(base), port["hostPort"], true)
		name, ok := literalText(port["name"])
		if !ok || name == "" {
			continue
		}
		if first, ok := named[name]; ok {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %q is the name of %s too, and the API server refuses every object so written: a container's ports have names of their own",
				p.Index(i).Child("name").FieldPath(base), name, p.Index(first).FieldPath(base)))
			continue
		}
		named[name] = i
	}
}

// warnPortNumber notes a warning for a port number written without
// expressions that is no port (0, 70000); zero, where it means "none"
// (a hostPort, a Service's targetPort), is one.
func (c *compiler) warnPortNumber(at *field.Path, v any, zeroIsNone bool) {
	number, ok := v.(int64)
	if !ok || number == 0 && zeroIsNone || number >= 1 && number <= 65535 {
		return
	}
	c.warnings = append(c.warnings, fmt.Sprintf("%s: %d is no port, and the API server refuses every object so written: a port is between 1 and 65535", at, number))
}

// warnEnvBothWays notes a warning for an env var given both a value and
// valueFrom: the API server takes one.
func (c *compiler) warnEnvBothWays(container map[string]any, p expr.Path, base *field.Path) {
	env, _ := container["env"].([]any)
	for i, item := range env {
		v, _ := item.(map[string]any)
		value, _ := v["value"].(string)
		if _, from := v["valueFrom"]; from && value != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: given with a value too, and the API server refuses every object so written: an env var has a value or valueFrom, not both",
				p.Index(i).Child("valueFrom").FieldPath(base)))
		}
	}
}

// addLiteralNames adds to names the name of each item of the list given
// (left out: none), as nameOf reads it; false when an expression gives
// the list or any of the names.
func addLiteralNames(names map[string]bool, given any, nameOf func(item map[string]any) any) bool {
	if given == nil {
		return true
	}
	items, ok := given.([]any)
	if !ok {
		return false
	}
	for _, item := range items {
		m, _ := item.(map[string]any)
		name, ok := literalText(nameOf(m))
		if !ok {
			return false
		}
		names[name] = true
	}
	return true
}

// warnMountsOfNoVolume notes a warning for a volume mount, written without
// expressions, that names none of the pod's volumes.
func (c *compiler) warnMountsOfNoVolume(container map[string]any, p expr.Path, base *field.Path, volumes map[string]bool) {
	mounts, _ := container["volumeMounts"].([]any)
	for i, item := range mounts {
		m, _ := item.(map[string]any)
		name, ok := literalText(m["name"])
		if !ok || volumes[name] {
			continue
		}
		msg := fmt.Sprintf("%s: %q is no volume of the pod, and the API server refuses every object so written", p.Index(i).Child("name").FieldPath(base), name)
		names := slices.Sorted(maps.Keys(volumes))
		if meant, ok := spelling.Closest(name, names); ok {
			msg += ": did you mean " + meant + "?"
		} else if len(names) == 0 {
			msg += ": the pod has no volumes"
		} else {
			msg += ": its volumes are " + strings.Join(names, ", ")
		}
		c.warnings = append(c.warnings, msg)
	}
}
