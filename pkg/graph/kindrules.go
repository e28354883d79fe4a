package graph

// Rules of built-in kinds that the API server enforces beyond their
// published schemas (a container's name, a quantity, a Job's restart policy,
// a Service's port names): a template breaking one compiles and is refused
// at every apply, so it is warned of.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	// The API server carries its own time zone database, so a CronJob's
	// timeZone is judged here by the same one, whatever the machine has.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/expr"
)

// warnContainers notes a warning for what the API server refuses in the
// containers of a pod spec of n's template, written without expressions,
// for every object so written: a container's name, which is a DNS label
// (Web_Server), and a container port's, which is at most 15 characters
// (http-metrics-port), as is a probe's port given by name; a request more
// than its limit (requests.cpu: 2 with limits.cpu: 1); and, in a kind of
// Kubernetes' own, a container without an image. Pod specs are found by
// their containers list, wherever the kind nests them.
func (c *compiler) warnContainers(n *Node, base *field.Path) {
	builtin := n.Kind != nil && !n.Kind.Custom
	walk(n.Template, nil, func(v any, p expr.Path) bool {
		containers, ok := v.([]any)
		if list := lastKey(p); !ok || list != "containers" && list != "initContainers" {
			return true
		}
		for i, item := range containers {
			container, _ := item.(map[string]any)
			at := p.Index(i)
			if name, ok := container["name"].(string); ok && !strings.Contains(name, "${") {
				c.warnRefused(at.Child("name").FieldPath(base), name, "container name", validation.IsDNS1123Label(name))
			}
			if _, given := container["image"]; builtin && !given && container != nil {
				c.warnings = append(c.warnings, fmt.Sprintf("%s: left out, and the API server refuses every %s so written: a container of its pods needs an image", at.Child("image").FieldPath(base), n.Kind.GVK.Kind))
			}
			ports, _ := container["ports"].([]any)
			for j, port := range ports {
				port, _ := port.(map[string]any)
				if name, ok := port["name"].(string); ok && !strings.Contains(name, "${") {
					c.warnRefused(at.Child("ports").Index(j).Child("name").FieldPath(base), name, "port name", validation.IsValidPortName(name))
				}
			}
			// A probe's port by name names one of the container's.
			for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
				for _, action := range []string{"httpGet", "tcpSocket"} {
					probed, _ := container[probe].(map[string]any)
					handler, _ := probed[action].(map[string]any)
					c.warnPortName(at.Child(probe).Child(action).Child("port").FieldPath(base), handler["port"], "probe's port name")
				}
			}
			c.warnRequestsOverLimits(container, at.Child("resources"), base)
		}
		return false
	})
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

// warnPortName notes a warning for a port given by the name of a
// container's (a probe's, a Service's targetPort: a number or a name),
// written without expressions, that no container port may have (over 15
// characters): the API server refuses every object so written.
func (c *compiler) warnPortName(at *field.Path, port any, what string) {
	name, ok := port.(string)
	if !ok || strings.Contains(name, "${") {
		return
	}
	if _, err := strconv.Atoi(name); err == nil {
		return // a number, as text
	}
	c.warnRefused(at, name, what, validation.IsValidPortName(name))
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

// quantityUnits are the units authors write quantities in that Kubernetes
// spells otherwise, by suffix as written, and what to write instead: the
// binary unit first, as memory and storage are most often meant so.
var quantityUnits = []struct{ written, binary, decimal string }{
	{"KiB", "Ki", ""}, {"MiB", "Mi", ""}, {"GiB", "Gi", ""}, {"TiB", "Ti", ""},
	{"KB", "Ki", "k"}, {"MB", "Mi", "M"}, {"GB", "Gi", "G"}, {"TB", "Ti", "T"},
	{"Kb", "Ki", "k"}, {"Mb", "Mi", "M"}, {"Gb", "Gi", "G"}, {"Tb", "Ti", "T"},
	{"kb", "Ki", "k"}, {"mb", "Mi", "M"}, {"gb", "Gi", "G"}, {"tb", "Ti", "T"},
	{"K", "Ki", "k"}, {"g", "Gi", "G"}, {"gi", "Gi", ""}, {"mi", "Mi", ""}, {"ki", "Ki", ""},
}

// warnQuantities notes a warning for each quantity of a container's
// resources (resources.limits, resources.requests) written without
// expressions that is no Kubernetes quantity (1Gb, 512 Mi): the API server
// refuses every object so written. The warning gives it written as one,
// where the unit is what is wrong.
func (c *compiler) warnQuantities(v any, p expr.Path, base *field.Path) {
	walk(v, p, func(v any, p expr.Path) bool {
		amounts, ok := v.(map[string]any)
		if kind := lastKey(p); !ok || parentKey(p) != "resources" || kind != "limits" && kind != "requests" {
			return true
		}
		for _, name := range slices.Sorted(maps.Keys(amounts)) {
			text, ok := amounts[name].(string)
			if !ok || strings.Contains(text, "${") {
				continue
			}
			at := p.Child(name).FieldPath(base)
			if _, err := resource.ParseQuantity(text); err != nil {
				msg := refusedText(at, text, "quantity", []string{"quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1"})
				if meant := quantityMeant(text); meant != "" {
					msg += ": write " + meant
				}
				c.warnings = append(c.warnings, msg)
			} else if number, milli := strings.CutSuffix(text, "m"); milli && countsBytes(name) {
				// Taken, and meant as megabytes: 512m of memory is half
				// a byte.
				c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is %s thousandths of a byte, as m means milli: write %sMi (or %sM, in powers of 1000)", at, text, number, number, number))
			}
		}
		return false
	})
}

// countsBytes tells the resources counted in bytes: memory, storage and
// huge pages.
func countsBytes(name string) bool {
	return name == "memory" || name == "storage" || name == "ephemeral-storage" || strings.HasPrefix(name, "hugepages-")
}

// quantityMeant writes text, which is no quantity, with its unit as
// Kubernetes spells it ("1Gi (or 1G)"); "" when that is not what is wrong.
func quantityMeant(text string) string {
	t := strings.ReplaceAll(text, " ", "")
	for _, u := range quantityUnits {
		number, ok := strings.CutSuffix(t, u.written)
		if !ok {
			continue
		}
		if _, err := resource.ParseQuantity(number + u.binary); err != nil {
			return ""
		}
		if u.decimal == "" {
			return number + u.binary
		}
		return fmt.Sprintf("%s%s (or %s%s, in powers of 1000)", number, u.binary, number, u.decimal)
	}
	if _, err := resource.ParseQuantity(t); err == nil && t != text {
		return t
	}
	return ""
}

// jobPodSpecs are where a Job's and a CronJob's pod spec is, by kind.
var jobPodSpecs = map[string]expr.Path{
	"Job":     {{Key: "spec"}, {Key: "template"}, {Key: "spec"}},
	"CronJob": {{Key: "spec"}, {Key: "jobTemplate"}, {Key: "spec"}, {Key: "template"}, {Key: "spec"}},
}

// warnJobRestartPolicy notes a warning for a Job's or CronJob's pod spec
// whose restartPolicy is Always, or left out, which a pod defaults to
// Always: the API server refuses every Job so written, as a Job's pods
// run to completion (OnFailure or Never).
func (c *compiler) warnJobRestartPolicy(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "batch" {
		return
	}
	at, ok := jobPodSpecs[n.Kind.GVK.Kind]
	if !ok {
		return
	}
	var podSpec any = n.Template
	for _, step := range at {
		m, _ := podSpec.(map[string]any)
		if podSpec = m[step.Key]; podSpec == nil {
			return // not written out, or given by an expression
		}
	}
	m, ok := podSpec.(map[string]any)
	if !ok {
		return
	}
	policy, given := m["restartPolicy"].(string)
	if strings.Contains(policy, "${") || given && policy != "Always" {
		return
	}
	written := "leaves restartPolicy out, which a pod defaults to Always"
	if given {
		written = "sets restartPolicy: Always"
	}
	c.warnings = append(c.warnings, fmt.Sprintf("%s: %s, and the API server refuses every %s so written: its pods run to completion, with restartPolicy OnFailure or Never",
		at.Child("restartPolicy").FieldPath(path), written, n.Kind.GVK.Kind))
}

// warnServicePortNames notes a warning for a Service of several ports, one
// of them without a name, and for a port name or a target port's the API
// server refuses (a DNS label; a container port's name): it refuses every
// Service so written.
func (c *compiler) warnServicePortNames(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "" || n.Kind.GVK.Kind != "Service" {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	for i, item := range ports {
		port, ok := item.(map[string]any)
		if !ok {
			continue
		}
		at := path.Child("spec", "ports").Index(i)
		name, named := port["name"].(string)
		switch {
		case !named && len(ports) > 1:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: left out, and the API server refuses every Service of several ports so written: each needs a name", at.Child("name")))
		case named && !strings.Contains(name, "${"):
			c.warnRefused(at.Child("name"), name, "port name", validation.IsDNS1123Label(name))
		}
		// A target port by name names a container's port.
		c.warnPortName(at.Child("targetPort"), port["targetPort"], "target port name")
	}
}

// cronSchedule is what a CronJob's schedule is, said after the parser's
// words when the API server refuses one.
const cronSchedule = "a schedule is five fields, minute hour day-of-month month day-of-week (*/5 * * * * is every five minutes), or a descriptor such as @hourly or @every 5m"

// warnCronSchedule notes a warning for a CronJob whose schedule or
// timeZone, written without expressions, the API server refuses for every
// CronJob so written: a schedule its cron parser (the one Kubernetes
// uses) does not take (every 5 minutes; six fields, with seconds), one
// that names its time zone in it (CRON_TZ=...) rather than in timeZone,
// and a time zone that is none.
func (c *compiler) warnCronSchedule(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "batch" || n.Kind.GVK.Kind != "CronJob" {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	if schedule, ok := spec["schedule"].(string); ok && !strings.Contains(schedule, "${") {
		at := path.Child("spec", "schedule")
		if err := parseCronSchedule(schedule); err != nil {
			c.warnRefused(at, schedule, "schedule", []string{err.Error(), cronSchedule})
		} else if strings.Contains(schedule, "TZ") {
			c.warnRefused(at, schedule, "schedule", []string{"a time zone is given in timeZone (timeZone: Europe/Berlin), not in the schedule"})
		}
	}
	if zone, ok := spec["timeZone"].(string); ok && !strings.Contains(zone, "${") {
		c.warnRefused(path.Child("spec", "timeZone"), zone, "time zone", timeZoneErrors(zone))
	}
}

// parseCronSchedule parses a CronJob's schedule as the API server does;
// the parser panics on some texts, which are refused just the same.
func parseCronSchedule(schedule string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(schedule)
	return err
}

// timeZonePart is what the API server takes between the slashes of a time
// zone's name, beside the database knowing it.
var timeZonePart = regexp.MustCompile(`^[A-Za-z.\-_0-9+]{1,14}$`)

// timeZoneErrors are the API server's objections to a CronJob's timeZone:
// it names an IANA time zone (Europe/Berlin, UTC), never the machine's own.
func timeZoneErrors(zone string) []string {
	switch {
	case zone == "":
		return []string{"leave timeZone out for the controller manager's time zone, or name one such as UTC or Europe/Berlin"}
	case strings.EqualFold(zone, "Local"):
		return []string{"name a time zone such as UTC or Europe/Berlin: the controller manager's own is what leaving timeZone out gives"}
	}
	unknown := false
	for _, part := range strings.Split(zone, "/") {
		unknown = unknown || part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart.MatchString(part)
	}
	if _, err := time.LoadLocation(zone); err != nil || unknown {
		return []string{"no time zone of that name is known: name one of the IANA database, such as UTC or Europe/Berlin"}
	}
	return nil
}

// warnClaimSpecs notes a warning for a claim spec of n's template (a
// PersistentVolumeClaim's, a StatefulSet's volumeClaimTemplates', an
// ephemeral volume's) written without expressions that leaves out its
// access modes or its storage request: the API server refuses every
// object so written, though the kind's schema requires neither.
func (c *compiler) warnClaimSpecs(n *Node, base *field.Path) {
	if n.Kind == nil || n.Kind.Custom {
		return
	}
	isClaim := n.Kind.GVK.Group == "" && n.Kind.GVK.Kind == "PersistentVolumeClaim"
	walk(n.Template, nil, func(v any, p expr.Path) bool {
		spec, ok := v.(map[string]any)
		if !ok || lastKey(p) != "spec" {
			return true
		}
		inList := len(p) >= 3 && p[len(p)-2].IsIndex && p[len(p)-3].Key == "volumeClaimTemplates"
		if !(isClaim && len(p) == 1 || inList || parentKey(p) == "volumeClaimTemplate") {
			return true
		}
		kind := n.Kind.GVK.Kind
		if modes, given := spec["accessModes"]; !given || isEmptyList(modes) {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s, and the API server refuses every %s so written: a claim needs at least one access mode, such as ReadWriteOnce",
				p.Child("accessModes").FieldPath(base), leftOutOrEmpty(given), kind))
		}
		resources, given := spec["resources"]
		if m, ok := resources.(map[string]any); ok {
			requests, ok := m["requests"].(map[string]any)
			_, given = requests["storage"]
			given = given || !ok && m["requests"] != nil // given by an expression
		}
		if !given {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: left out, and the API server refuses every %s so written: a claim requests its storage, such as 1Gi",
				p.Child("resources").Child("requests").Child("storage").FieldPath(base), kind))
		}
		return false
	})
}

// isEmptyList tells a list written with no items.
func isEmptyList(v any) bool {
	list, ok := v.([]any)
	return ok && len(list) == 0
}

// leftOutOrEmpty says how a field the API server needs is missing.
func leftOutOrEmpty(given bool) string {
	if given {
		return "empty"
	}
	return "left out"
}

// ingressPathTexts are what a path of an Ingress of pathType Exact or
// Prefix must not hold, and must not end with.
var (
	ingressPathTexts   = []string{"//", "/./", "/../", "%2f", "%2F"}
	ingressPathEndings = []string{"/..", "/."}
)

// warnIngressPaths notes a warning for a path of an Ingress, written
// without expressions, that the API server refuses for every Ingress so
// written: one not starting with a slash (api for /api), and, of pathType
// Exact or Prefix, one with // or a dot segment in it.
func (c *compiler) warnIngressPaths(n *Node, base *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "networking.k8s.io" || n.Kind.GVK.Kind != "Ingress" {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	for i, rule := range rules {
		rule, _ := rule.(map[string]any)
		http, _ := rule["http"].(map[string]any)
		paths, _ := http["paths"].([]any)
		for j, item := range paths {
			item, _ := item.(map[string]any)
			path, ok := item["path"].(string)
			pathType, _ := item["pathType"].(string)
			if !ok || strings.Contains(path, "${") || strings.Contains(pathType, "${") {
				continue
			}
			at := base.Child("spec", "rules").Index(i).Child("http", "paths").Index(j).Child("path")
			exact := pathType == "Exact" || pathType == "Prefix"
			var why []string
			if !strings.HasPrefix(path, "/") && (exact || path != "") {
				why = append(why, "a path starts with a slash: write /"+path)
			}
			for _, text := range ingressPathTexts {
				if exact && strings.Contains(path, text) {
					why = append(why, fmt.Sprintf("a path of pathType %s holds no %s", pathType, text))
				}
			}
			for _, ending := range ingressPathEndings {
				if exact && strings.HasSuffix(path, ending) {
					why = append(why, fmt.Sprintf("a path of pathType %s does not end with %s", pathType, ending))
				}
			}
			c.warnRefused(at, path, "path", why)
		}
	}
}
