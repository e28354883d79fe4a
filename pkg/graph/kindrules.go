package graph

// Rules of built-in kinds that the API server enforces beyond their
// published schemas (a quantity, a Job's restart policy, a Service's port
// names, a CronJob's schedule; a container's in containers.go): a template
// breaking one compiles and is refused at every apply, so it is warned of.

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
	netutils "k8s.io/utils/net"

	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// isKind tells whether n's template is of kind, in group.
func isKind(n *Node, group, kind string) bool {
	return n.Kind != nil && n.Kind.GVK.Group == group && n.Kind.GVK.Kind == kind
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
			if why := QuantityRefusal(text); why != "" {
				c.warnings = append(c.warnings, refusedText(at, text, "quantity", []string{why}))
			} else if number, milli := strings.CutSuffix(text, "m"); milli && countsBytes(name) {
				// Taken, and meant as megabytes: 512m of memory is half
				// a byte.
				c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is %s thousandths of a byte, as m means milli: write %sMi (or %sM, in powers of 1000)", at, text, number, number, number))
			}
		}
		return false
	})
}

// QuantityRefusal says why text is no Kubernetes quantity, with the
// quantity it was most likely meant to be where the unit is what is wrong
// (1Gb: write 1Gi); "" for a quantity.
func QuantityRefusal(text string) string {
	if _, err := resource.ParseQuantity(text); err == nil {
		return ""
	}
	why := "quantities are a number and a unit such as 512Mi, 2Gi, 500m or 1"
	if meant := quantityMeant(text); meant != "" {
		why += ": write " + meant
	}
	return why
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

// longRunning are the workloads of apps, whose pods run for good.
var longRunning = map[string]bool{"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "DaemonSet": true}

// warnWorkloadRestartPolicy notes a warning for a workload of apps whose
// pod template's restartPolicy, written without expressions, is other
// than Always (a Job's Never, copied): the API server refuses every
// workload so written, as its pods run for good.
func (c *compiler) warnWorkloadRestartPolicy(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "apps" || !longRunning[n.Kind.GVK.Kind] {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	podSpec, _ := template["spec"].(map[string]any)
	if policy, ok := literalText(podSpec["restartPolicy"]); ok && policy != "Always" {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %s, and the API server refuses every %s so written: its pods run for good, with restartPolicy Always (or left out)",
			path.Child("spec", "template", "spec", "restartPolicy"), policy, n.Kind.GVK.Kind))
	}
}

// warnServicePorts notes a warning for what the API server refuses in the
// ports of a Service, written without expressions, for every Service so
// written: no ports at all, but for a headless Service (clusterIP: None)
// or an ExternalName; a port of several without a name; a port name that
// is no DNS label, or a target port's that no container port may have;
// a port or target port number out of range; a nodePort on a ClusterIP
// Service.
func (c *compiler) warnServicePorts(n *Node, path *field.Path) {
	if !isKind(n, "", "Service") {
		return
	}
	spec, ok := n.Template["spec"].(map[string]any)
	if !ok {
		return
	}
	given, listed := spec["ports"]
	ports, _ := given.([]any)
	clusterIP, _ := spec["clusterIP"].(string)
	serviceType, _ := spec["type"].(string)
	openEnded := strings.Contains(clusterIP, "${") || strings.Contains(serviceType, "${")
	if (!listed || isEmptyList(given)) && clusterIP != "None" && serviceType != "ExternalName" && !openEnded {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %s, and the API server refuses every Service so written: a Service has at least one port, unless it is headless (clusterIP: None) or an ExternalName",
			path.Child("spec", "ports"), leftOutOrEmpty(listed)))
	}
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
		if nodePort, ok := port["nodePort"].(int64); ok && nodePort != 0 && (serviceType == "" || serviceType == "ClusterIP") {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: given to a Service of type ClusterIP (which a Service left without a type is), and the API server refuses every Service so written: a nodePort goes with type NodePort or LoadBalancer",
				at.Child("nodePort")))
		}
		c.warnPortNumber(at.Child("port"), port["port"], false)
		// A target port is a number (0 for the port's own) or the
		// name of a container's port.
		c.warnPortNumber(at.Child("targetPort"), port["targetPort"], true)
		c.warnPortName(at.Child("targetPort"), port["targetPort"], "target port name")
	}
}

// configKinds are the kinds of Kubernetes' own whose maps of text or
// bytes are keyed by file names, and those maps.
var configKinds = map[string][]string{
	"ConfigMap": {"data", "binaryData"},
	"Secret":    {"data", "stringData"},
}

// configKeyChars are the characters a key of a ConfigMap or Secret holds.
var configKeyChars = regexp.MustCompile(`^[-._a-zA-Z0-9]*$`)

// warnConfigKeys notes a warning for a key of a ConfigMap's or Secret's
// data, written without expressions, that the API server refuses for
// every object so written: letters, digits, '-', '_' and '.' alone, as
// each key becomes a file's name where the object is mounted.
func (c *compiler) warnConfigKeys(n *Node, path *field.Path) {
	if n.Kind == nil || n.Kind.GVK.Group != "" {
		return
	}
	for _, name := range configKinds[n.Kind.GVK.Kind] {
		data, _ := n.Template[name].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(data)) {
			if strings.Contains(key, "${") {
				continue
			}
			errs := validation.IsConfigMapKey(key)
			if len(errs) > 0 && !configKeyChars.MatchString(key) {
				// The API server's words for it list a regular expression.
				errs = []string{"a key holds letters, digits, '-', '_' and '.' alone, as it becomes a file's name where the object is mounted"}
			}
			c.warnRefused(path.Child(name).Key(key), key, "key", errs)
		}
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
	if !isKind(n, "batch", "CronJob") {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	if schedule, ok := literalText(spec["schedule"]); ok {
		at := path.Child("spec", "schedule")
		if err := parseCronSchedule(schedule); err != nil {
			c.warnRefused(at, schedule, "schedule", []string{err.Error(), cronSchedule})
		} else if strings.Contains(schedule, "TZ") {
			c.warnRefused(at, schedule, "schedule", []string{"a time zone is given in timeZone (timeZone: Europe/Berlin), not in the schedule"})
		}
	}
	if zone, ok := literalText(spec["timeZone"]); ok {
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

// warnIngress notes a warning for what the API server refuses in an
// Ingress, written without expressions, for every Ingress so written: a
// path not starting with a slash (api for /api), and, of pathType Exact
// or Prefix, one with // or a dot segment in it; a backend's port given
// both by name and by number.
func (c *compiler) warnIngress(n *Node, base *field.Path) {
	if !isKind(n, "networking.k8s.io", "Ingress") {
		return
	}
	spec, _ := n.Template["spec"].(map[string]any)
	c.warnBackendPort(spec["defaultBackend"], base.Child("spec", "defaultBackend"))
	rules, _ := spec["rules"].([]any)
	for i, rule := range rules {
		rule, _ := rule.(map[string]any)
		if host, ok := literalText(rule["host"]); ok && host != "" {
			c.warnRefused(base.Child("spec", "rules").Index(i).Child("host"), host, "host", ingressHostErrors(host))
		}
		http, _ := rule["http"].(map[string]any)
		paths, _ := http["paths"].([]any)
		for j, item := range paths {
			item, _ := item.(map[string]any)
			c.warnBackendPort(item["backend"], base.Child("spec", "rules").Index(i).Child("http", "paths").Index(j).Child("backend"))
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

// ingressHostErrors are the API server's objections to the host of an
// Ingress rule, which is a DNS name (a wildcard one, *.example.com, too),
// said so that what to write shows: the host alone, not a URL or an
// address, in lowercase.
func ingressHostErrors(host string) []string {
	if netutils.ParseIPSloppy(host) != nil {
		return []string{"a host is a DNS name, not an IP address: leave host out to match every host"}
	}
	errs := validation.IsDNS1123Subdomain(host)
	if strings.Contains(host, "*") {
		errs = validation.IsWildcardDNS1123Subdomain(host)
	}
	if len(errs) == 0 {
		return nil
	}
	name := host
	if _, rest, ok := strings.Cut(name, "://"); ok {
		name = rest
	}
	name, _, _ = strings.Cut(name, "/")
	name, _, _ = strings.Cut(name, ":")
	name = strings.ToLower(name)
	if name != host && validation.IsDNS1123Subdomain(strings.TrimPrefix(name, "*.")) == nil {
		return []string{"a host is a DNS name alone, without scheme, port, path or capitals: write " + name}
	}
	return errs
}

// warnBackendPort notes a warning for an Ingress backend's Service port
// given both by name and by number.
func (c *compiler) warnBackendPort(backend any, at *field.Path) {
	b, _ := backend.(map[string]any)
	service, _ := b["service"].(map[string]any)
	port, _ := service["port"].(map[string]any)
	_, named := port["name"]
	if _, numbered := port["number"]; named && numbered {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: gives both a name and a number, and the API server refuses every Ingress so written: a backend's port is one of them", at.Child("service", "port")))
	}
}

// secretKeys are the keys a Secret of a type of Kubernetes' own holds, by
// type, and whether one of them is enough (a basic-auth Secret's username
// or password).
var secretKeys = map[string]struct {
	keys  []string
	oneOf bool
}{
	"kubernetes.io/tls":              {keys: []string{"tls.crt", "tls.key"}},
	"kubernetes.io/dockerconfigjson": {keys: []string{".dockerconfigjson"}},
	"kubernetes.io/dockercfg":        {keys: []string{".dockercfg"}},
	"kubernetes.io/ssh-auth":         {keys: []string{"ssh-privatekey"}},
	"kubernetes.io/basic-auth":       {keys: []string{"username", "password"}, oneOf: true},
}

// warnSecretType notes a warning for a Secret of a type of Kubernetes'
// own, written without expressions, that leaves out a key its type holds
// (a TLS Secret's tls.key) from both data and stringData: the API server
// refuses every Secret so written. Keys given by an expression, of data
// or stringData as a whole, are not judged.
func (c *compiler) warnSecretType(n *Node, path *field.Path) {
	if !isKind(n, "", "Secret") {
		return
	}
	secretType, _ := literalText(n.Template["type"])
	rule, ok := secretKeys[secretType]
	if !ok {
		return
	}
	var given []string
	for _, name := range []string{"data", "stringData"} {
		switch m := n.Template[name].(type) {
		case nil:
		case map[string]any:
			for key := range m {
				if strings.Contains(key, "${") {
					return
				}
				given = append(given, key)
			}
		default:
			return // given by an expression
		}
	}
	var missing []string
	for _, key := range rule.keys {
		if !slices.Contains(given, key) {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 || rule.oneOf && len(missing) < len(rule.keys) {
		return
	}
	what := strings.Join(missing, " and ")
	if rule.oneOf {
		what = strings.Join(missing, " or ")
	}
	msg := fmt.Sprintf("%s: holds no %s, and the API server refuses every Secret of type %s so written", path.Child("data"), what, secretType)
	slices.Sort(given)
	for _, key := range missing {
		if written, ok := spelling.Closest(key, given); ok {
			msg += fmt.Sprintf(": did you mean %s (not %s)?", key, written)
			break
		}
	}
	c.warnings = append(c.warnings, msg)
}
