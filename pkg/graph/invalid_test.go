package graph

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
)

const defaultSchema = `{apiVersion: v1alpha1, kind: App, spec: {name: string, replicas: integer, items: "[]string"}}`

const configMap = `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}"}}`

// TestInvalidRGDs holds one RGD per class of mistake. Each must be refused
// with an error at the exact field path (resources addressed by id) whose
// message says what is wrong.
func TestInvalidRGDs(t *testing.T) {
	cases := []struct {
		name      string
		schema    string // defaultSchema when empty
		resources string
		path      string
		msg       string
	}{
		// SimpleSchema
		{"unknown marker", `{apiVersion: v1alpha1, kind: App, spec: {a: "string | colour=red"}}`, configMap,
			"spec.schema.spec.a", `unknown marker "colour"`},
		{"bad default", `{apiVersion: v1alpha1, kind: App, spec: {a: "integer | default=many"}}`, configMap,
			"spec.schema.spec.a", `bad default: "many" is not an integer`},
		{"unknown type", `{apiVersion: v1alpha1, kind: App, spec: {a: widget}}`, configMap,
			"spec.schema.spec.a", `unknown type "widget"`},
		{"marker on the wrong type", `{apiVersion: v1alpha1, kind: App, spec: {a: "boolean | minLength=1"}}`, configMap,
			"spec.schema.spec.a", `minLength applies to string fields, not boolean`},
		{"recursive custom type", `{apiVersion: v1alpha1, kind: App, types: {Node: {next: Node}}, spec: {a: Node}}`, configMap,
			"spec.schema.types[Node]", `refers to itself`},
		{"validation rule that does not compile", `{apiVersion: v1alpha1, kind: App, spec: {name: string, a: "string | validation=\"self >\""}}`, configMap,
			"spec.schema.spec.a", `Invalid value: "validation=self >": compilation failed`},
		{"kind not UpperCamelCase", `{apiVersion: v1alpha1, kind: my-app}`, configMap,
			"spec.schema.kind", `Invalid value: "my-app": must be UpperCamelCase, such as MyApp`},
		{"bad apiVersion", `{apiVersion: version1, kind: App}`, configMap,
			"spec.schema.apiVersion", `such as v1alpha1`},
		// An instance's apiVersion, group/version: the group goes apart.
		{"apiVersion with its group", `{apiVersion: kro.run/v1alpha1, kind: App}`, configMap,
			"spec.schema.apiVersion", `Invalid value: "kro.run/v1alpha1": must be a Kubernetes version such as v1alpha1, v1beta2 or v1; the group is given apart, by spec.schema.group (kro.run when not given): write apiVersion: v1alpha1$`},
		{"apiVersion with another group", `{apiVersion: platform.example.com/v1, kind: App}`, configMap,
			"spec.schema.apiVersion", `write apiVersion: v1 and group: platform.example.com$`},
		{"bad group", `{apiVersion: v1alpha1, kind: App, group: Not_A_Group}`, configMap,
			"spec.schema.group", `RFC 1123 subdomain`},

		{"computed condition taking a built-in type", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${runtime.newCondition({type: 'Ready', status: 'True'})}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `Ready is a built-in condition type, which kro-agent derives itself`},
		{"computed condition not returning conditions", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${cm.metadata.name}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `must return runtime.newCondition(...) or a list of them, but has type string`},
		{"computed condition embedded in text", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["x${runtime.newCondition({type: 'Up', status: 'True'})}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `must be a single ${...} expression`},
		{"computed condition with a status that is not one", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${runtime.newCondition({type: 'Up', status: 'Yes'})}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `status must be 'True', 'False' or 'Unknown'`},
		{"computed condition with a type that is not one", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${runtime.newCondition({type: 'config present', status: 'True'})}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `"config present" is not a condition type: name part must consist of alphanumeric characters`},
		{"computed condition with a type that is not one, nearly", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${runtime.newCondition({type: 'config present', status: 'True'})}"]}}`, configMap,
			"spec.schema.status.conditions[0]", `; condition types are UpperCamelCase, such as ConfigPresent`},
		{"condition type and reason not UpperCamelCase", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: db-reachable, reason: pinged_ok, status: "${true}"}]}}`, configMap,
			"spec.schema.status.conditions[0].type", `Invalid value: "db-reachable": condition types are UpperCamelCase, such as DbReachable`},
		{"condition reason not UpperCamelCase", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: DbReachable, reason: pinged_ok, status: "${true}"}]}}`, configMap,
			"spec.schema.status.conditions[0].reason", `Invalid value: "pinged_ok": reasons are UpperCamelCase, such as PingedOk`},
		{"condition type declared twice", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Up, status: "${true}"}, "${runtime.newCondition({type: 'Up', status: 'True'})}"]}}`, configMap,
			"spec.schema.status.conditions[1]", `the condition type Up is declared more than once`},
		{"computed condition reading another", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: ["${runtime.newCondition({type: 'Up', status: 'True'})}", "${runtime.newCondition({type: 'Both', status: runtime.condition(schema, 'Up').status})}"]}}`, configMap,
			"spec.schema.status.conditions[1]", `custom conditions cannot read each other`},
		{"template reading the instance's conditions", `{apiVersion: v1alpha1, kind: App, spec: {name: string}}`, `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}"}, data: {ready: "${runtime.condition(schema, 'Ready').status}"}}`,
			"spec.resources[cm].template.data.ready", `reads the instance's own conditions`},
		{"custom condition with a misspelt field", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Up, status: "${true}", countTowardsReady: false}]}}`, configMap,
			"spec.schema.status.conditions[0].countTowardsReady", `did you mean countsTowardReady? a declared condition has type, status, reason, message, countsTowardReady, polarity`},
		{"condition that is neither an object nor an expression", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [3]}}`, configMap,
			"spec.schema.status.conditions[0]", `a condition is {type, status, reason, message, countsTowardReady, polarity} or ${runtime.newCondition(...)}`},

		// ids and shape
		{"reserved id", "", `
  - id: schema
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[0].id", `reserved word`},
		{"CEL keyword as id", "", `
  - id: in
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[0].id", `reserved word`},
		{"an expression naming a resource whose id is a CEL keyword", "", `
  - id: var
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
  - id: other
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${var.metadata.name}-y"}}`,
			"spec.resources[other].template.metadata.name", `names resource var, whose id is a reserved word (spec.resources[0].id): rename the resource, here too`},
		{"id not lowerCamelCase", "", `
  - id: My-Config
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[0].id", `Invalid value: "My-Config": must be lowerCamelCase (a letter, then letters and digits), such as myConfig`},
		{"id not lowerCamelCase, nor any word", "", `
  - id: "2-"
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[0].id", `such as webDeployment`},
		{"id too long for its label", "", `
  - id: ` + strings.Repeat("x", 64) + `
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[0].id", `must be no more than 63 characters: every object the resource manages carries its id in the label kro.run/node-id`},
		{"duplicate id", "", configMap + configMap,
			"spec.resources[1].id", `Duplicate value: "cm"`},
		{"two resources with one literal name", "", `
  - id: settings
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}}
  - id: defaults
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}}`,
			"spec.resources[defaults].template.metadata.name", `resource settings names the same ConfigMap: each object a graph manages needs a name of its own`},
		{"template and externalRef both set", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {name: y}}`,
			"spec.resources[cm]", `exactly one of template and externalRef, not both`},
		{"neither template nor externalRef", "", `
  - id: cm`,
			"spec.resources[cm]", `set exactly one of template and externalRef`},
		{"template without apiVersion", "", `
  - id: cm
    template: {kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[cm].template.apiVersion", `literal apiVersion`},
		{"expression in kind", "", `
  - id: cm
    template: {apiVersion: v1, kind: "${schema.spec.name}", metadata: {name: x}}`,
			"spec.resources[cm].template.kind", `literal kind`},
		{"template without a name", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {a: b}}}`,
			"spec.resources[cm].template.metadata.name", `needs a name`},
		{"a uid, as a live object has", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, uid: 0b2d5f3e-1c4a-4a7e-9d1b-2f6c8e0a9b7d}}`,
			"spec.resources[cm].template.metadata.uid", `Forbidden: the API server sets it, and refuses an apply naming another object's uid`},
		{"a resourceVersion", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, resourceVersion: "4711"}}`,
			"spec.resources[cm].template.metadata.resourceVersion", `as a conflict as soon as the object has changed: remove it (a template copied from a live object`},
		{"managedFields", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, managedFields: [{manager: kubectl}]}}`,
			"spec.resources[cm].template.metadata.managedFields", `refuses an apply that carries them`},
		{"a generated name", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {generateName: "cm-"}}`,
			"spec.resources[cm].template.metadata.generateName", `a generated name would make a new object each time; give metadata.name instead`},
		{"a hand-over annotation, which an object's owner sets", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, annotations: {kro.run/adopt-by: "${schema.metadata.namespace}/${schema.metadata.name}"}}}`,
			"spec.resources[cm].template.metadata.annotations[kro.run/adopt-by]", `an object's owner sets it on an object kro-agent did not make`},
		{"unknown kind", "", `
  - id: widget
    template: {apiVersion: example.com/v1, kind: Widget, metadata: {name: x}}`,
			"spec.resources[widget].template.kind", `example.com/v1 Widget (is its CRD installed?)`},
		{"built-in kind at a version not served", "", `
  - id: deploy
    template: {apiVersion: apps/v2, kind: Deployment, metadata: {name: x}}`,
			"spec.resources[deploy].template.kind", `apps/v2 Deployment (Kubernetes serves Deployment as apiVersion apps/v1)`},
		{"built-in kind in the core group by mistake", "", `
  - id: deploy
    template: {apiVersion: v1, kind: Deployment, metadata: {name: x}}`,
			"spec.resources[deploy].template.kind", `v1 Deployment (Kubernetes serves Deployment as apiVersion apps/v1)`},
		{"built-in kind misspelt", "", `
  - id: svc
    template: {apiVersion: v1, kind: Servce, metadata: {name: x}}`,
			"spec.resources[svc].template.kind", `v1 Servce (did you mean Service, apiVersion v1?)`},
		{"field the kind does not have", "", `
  - id: deploy
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {replica: 3}}`,
			"spec.resources[deploy].template.spec.replica", `apps/v1 Deployment has no field spec.replica; did you mean spec.replicas?`},
		{"field written as a word YAML reads as a boolean", "", `
  - id: svc
    template: {apiVersion: v1, kind: Service, metadata: {name: x}, spec: {on: x}}`,
			"spec.resources[svc].template.spec.true", `v1 Service has no field spec.true (YAML reads an unquoted y, yes or on as the boolean true: quote the key)`},
		{"kro.run label in a template", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, labels: {kro.run/owned: "true"}}}`,
			"spec.resources[cm].template.metadata.labels[kro.run/owned]", `set by kro-agent`},
		{"applyset label in a template", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, labels: {applyset.kubernetes.io/part-of: y}}}`,
			"spec.resources[cm].template.metadata.labels[applyset.kubernetes.io/part-of]", `set by kro-agent`},
		{"cluster-scoped kind with a namespace", "", `
  - id: ns
    template: {apiVersion: v1, kind: Namespace, metadata: {name: x, namespace: default}}`,
			"spec.resources[ns].template.metadata.namespace", `v1 Namespace is cluster-scoped`},
		{"namespaced kind without a namespace in a cluster-scoped RGD", `{apiVersion: v1alpha1, kind: Tenant, scope: Cluster, spec: {name: string}}`, configMap,
			"spec.resources[cm].template.metadata.namespace", `v1 ConfigMap is namespaced and instances of Tenant are cluster-scoped`},
		{"namespaced externalRef without a namespace in a cluster-scoped RGD", `{apiVersion: v1alpha1, kind: Tenant, scope: Cluster, spec: {name: string}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: Secret, metadata: {name: x}}`,
			"spec.resources[ext].externalRef.metadata.namespace", `v1 Secret is namespaced and instances of Tenant are cluster-scoped`},
		{"externalRef with name and selector", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, selector: {matchLabels: {a: b}}}}`,
			"spec.resources[ext].externalRef.metadata", `exactly one of name and selector`},
		{"selector field a label selector does not have", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabel: {a: b}}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchLabel", `supported values: "matchLabels", "matchExpressions"`},
		{"selector operator that does not exist", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchExpressions: [{key: a, operator: Within, values: [b]}]}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchExpressions[0].operator", `supported values: "In", "NotIn", "Exists", "DoesNotExist"`},
		{"matchLabels as text that is not one expression", `{apiVersion: v1alpha1, kind: App, spec: {selector: object}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabels: "${schema.spec.selector"}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchLabels", `must be a map of label keys to values, or a single ${...} expression giving one`},
		{"matchLabels as an escaped expression", `{apiVersion: v1alpha1, kind: App, spec: {selector: object}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabels: "\\${schema.spec.selector}"}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchLabels", `must be a map of label keys to values`},
		{"selector label value reading a field the schema lacks", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabels: {team: "${schema.spec.team}"}}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchLabels.team", `undefined field 'team'`},
		{"matchLabels expression of the wrong type", `{apiVersion: v1alpha1, kind: App, spec: {labels: string}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabels: "${schema.spec.labels}"}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchLabels", `expression has type string, but the field expects`},
		{"matchExpressions expression of the wrong type", `{apiVersion: v1alpha1, kind: App, spec: {expressions: string}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchExpressions: "${schema.spec.expressions}"}}}`,
			"spec.resources[ext].externalRef.metadata.selector.matchExpressions", `expression has type string, but the field expects`},
		{"whole selector expression of the wrong type", `{apiVersion: v1alpha1, kind: App, spec: {selector: string}}`, `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: "${schema.spec.selector}"}}`,
			"spec.resources[ext].externalRef.metadata.selector", `expression has type string, but the field expects`},
		{"selected list used as one object", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: ConfigMap, metadata: {selector: {matchLabels: {a: b}}}}
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${ext.metadata.name}"}}`,
			"spec.resources[cm].template.metadata.name", `ext.metadata`},
		{"externalRef namespace on a cluster-scoped kind", "", `
  - id: ext
    externalRef: {apiVersion: v1, kind: Namespace, metadata: {name: x, namespace: y}}`,
			"spec.resources[ext].externalRef.metadata.namespace", `cluster-scoped`},

		// expressions
		{"unknown identifier", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${secret.metadata.name}"}}`,
			"spec.resources[cm].template.metadata.name", `undeclared reference to 'secret'`},
		{"unknown function", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${shout(schema.spec.name)}"}}`,
			"spec.resources[cm].template.metadata.name", `undeclared reference to 'shout'`},
		{"unknown field of the instance", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.nmae}"}}`,
			"spec.resources[cm].template.metadata.name", `undefined field 'nmae'`},
		{"instance status is not in scope", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.status.state}"}}`,
			"spec.resources[cm].template.metadata.name", `undefined field 'status'`},
		{"unknown field of another resource", "", configMap + `
  - id: cm2
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${cm.spec.name}"}}`,
			"spec.resources[cm2].template.metadata.name", `undefined field 'spec'`},
		{"type mismatch", "", `
  - id: deploy
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {replicas: "${schema.spec.name}"}}`,
			"spec.resources[deploy].template.spec.replicas", `expression has type string, but the field expects int; convert it with int(...)`},
		{"an int into a string field", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {length: "${size(schema.spec.name)}"}}`,
			"spec.resources[cm].template.data.length", `expression has type int, but the field expects string; convert it with string(...)`},
		{"a map into a string field", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {labels: "${schema.metadata.labels}"}}`,
			"spec.resources[cm].template.data.labels", `expression has type map(string, string), but the field expects string; write it as JSON text with json.marshal(...)`},
		// A template written as a YAML list item (one "- " too many).
		{"template written as a list", "", `
  - id: cm
    template:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[cm].template", `must be a map, not a list: it holds one map, so write it without the "- " before its first field$`},
		{"schema spec written as text", `{apiVersion: v1alpha1, kind: App, spec: "name: string"}`, configMap,
			"spec.schema.spec", `must be a map, not text$`},
		{"a list of text into a string field", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {names: "${[schema.spec.name, 'x']}"}}`,
			"spec.resources[cm].template.data.names", `expression has type list(string), but the field expects string; join its items with .join(", ") (or another separator), or write it as JSON text with json.marshal(...)$`},
		{"a digest into a string field", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {sum: "${hash.sha256(schema.spec.name)}"}}`,
			"spec.resources[cm].template.data.sum", `expression has type bytes, but the field expects string; convert it with string(...) where it holds text (a Secret's data), or write it with base64.encode(...) or "%x".format([...]) (a hash)`},
		{"a map within text", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {labels: "labels: ${schema.metadata.labels}"}}`,
			"spec.resources[cm].template.data.labels", `write it as JSON text with json.marshal(...)`},
		{"scalar into a list", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, finalizers: "${schema.spec.name}"}}`,
			"spec.resources[cm].template.metadata.finalizers", `has type string, but the field expects list(string)`},
		{"non-string embedded in text", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "app-${schema.spec.replicas}"}}`,
			"spec.resources[cm].template.metadata.name", `must be a string, but has type int`},
		{"text with an expression in an int field", "", `
  - id: deploy
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {replicas: "${string(schema.spec.replicas)}0", selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}}`,
			"spec.resources[deploy].template.spec.replicas", `text with ${...} in it is a string, but the field expects int; write the whole value as one ${...} expression of that type`},
		{"unterminated expression", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name"}}`,
			"spec.resources[cm].template.metadata.name", `unterminated expression`},
		{"expression in a map key", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {"${schema.spec.name}": v}}`,
			"spec.resources[cm].template.data[${schema.spec.name}]", `not allowed in map keys`},

		// graph
		{"cycle", "", `
  - id: first
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${second.metadata.name}"}}
  - id: second
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${first.metadata.name}"}}`,
			"spec.resources[first]", `dependency cycle: first -> second -> first (first reads second in metadata.name, second reads first in metadata.name); resources must form a directed acyclic graph$`},
		{"self reference", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {me: "${cm.metadata.name}"}}`,
			"spec.resources[cm]", `dependency cycle: cm -> cm (cm reads cm in data.me); resources must form a directed acyclic graph: a resource cannot read its own object; a value of it is read in another resource or in the status$`},
		{"cycle through a forEach", "", `
  - id: first
    forEach: [{fin: "${second.metadata.finalizers}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${fin}"}}
  - id: second
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, labels: {count: "${string(size(first))}"}}}`,
			"spec.resources[first]", `(first reads second in forEach, second reads first in metadata.labels.count)`},
		{"readyWhen naming another resource", "", configMap + `
  - id: cm2
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: y}}
    readyWhen: ["${cm.metadata.name != ''}"]`,
			"spec.resources[cm2].readyWhen[0]", `readyWhen may reference only the resource itself (cm2), not cm`},
		{"readyWhen naming another resource as if it were one object", "", `
  - id: cms
    forEach: [{name: "${['a', 'b']}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${name}"}}
  - id: cm2
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: y}}
    readyWhen: ["${cms.data.x == 'y'}"]`,
			"spec.resources[cm2].readyWhen[0]", `readyWhen may reference only the resource itself (cm2), not cms`},
		{"readyWhen not boolean", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    readyWhen: ["${cm.metadata.name}"]`,
			"spec.resources[cm].readyWhen[0]", `must be a boolean expression, but has type string; test it, as in ${cm.metadata.name != ""}`},
		// A condition's status is "False" as often as "True".
		{"readyWhen of a condition's status", "", `
  - id: deploy
    template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}}
    readyWhen: ["${deploy.status.conditions.filter(c, c.type == 'Available')[0].status}"]`,
			"spec.resources[deploy].readyWhen[0]", `has type string; test it, as in ${deploy.status.conditions.filter(c, c.type == 'Available')[0].status == "True"}$`},
		{"readyWhen not an expression", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    readyWhen: ["true"]`,
			"spec.resources[cm].readyWhen[0]", `single ${...} expression: write ${true}`},
		{"includeWhen without its ${ }", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    includeWhen: ["schema.spec.replicas > 0"]`,
			"spec.resources[cm].includeWhen[0]", `must be a single ${...} expression: write ${schema.spec.replicas > 0}`},
		{"readyWhen of a map", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    readyWhen: ["${cm.data}"]`,
			"spec.resources[cm].readyWhen[0]", `must be a boolean expression, but has type map(string, string); test it, as in ${size(cm.data) > 0}`},
		{"includeWhen not boolean", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    includeWhen: ["${schema.spec.replicas}"]`,
			"spec.resources[cm].includeWhen[0]", `must be a boolean expression, but has type int`},
		{"includeWhen on itself", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    includeWhen: ["${has(cm.data)}"]`,
			"spec.resources[cm].includeWhen[0]", `cannot reference the resource it decides on`},
		{"readyWhen of one object reading each", "", `
  - id: single
    readyWhen: ["${each.metadata.name != ''}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[single].readyWhen[0]", `each stands for an item of a collection, and single is no collection: its readyWhen reads it by its id, single: ${single.metadata.name != ''}`},
		{"readyWhen of a collection reading it by its id", "", `
  - id: cells
    forEach: [{name: "${['a', 'b']}"}]
    readyWhen: ["${cells.metadata.name != ''}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${name}"}}`,
			"spec.resources[cells].readyWhen[0]", `cells is a collection, whose readyWhen judges each item by itself, as each: ${each.metadata.name != ''}`},
		{"readyWhen reading the instance its template writes from", "", `
  - id: deploy
    readyWhen: ["${deploy.status.?readyReplicas.orValue(0) == schema.spec.replicas && schema.spec.replicas > 0}"]
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        replicas: "${schema.spec.replicas}"
        selector: {matchLabels: {a: b}}
        template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}`,
			"spec.resources[deploy].readyWhen[0]", `readyWhen may reference only the resource itself (deploy), not schema; the template writes schema.spec.replicas into spec.replicas, so read it there: ${deploy.status.?readyReplicas.orValue(0) == deploy.spec.replicas && deploy.spec.replicas > 0}`},
		{"readyWhen reading the instance its template does not write whole", "", `
  - id: cm
    readyWhen: ["${cm.data.name == schema.spec.name}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {name: "${schema.spec.name}-x"}}`,
			"spec.resources[cm].readyWhen[0]", "readyWhen may reference only the resource itself (cm), not schema$"},
		{"readyWhen reading self", "", `
  - id: cm
    readyWhen: ["${self.data.ready == 'true' && has(self.data.x)}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[cm].readyWhen[0]", `self names nothing here: a readyWhen reads its resource as cm: ${cm.data.ready == 'true' && has(cm.data.x)}`},
		{"collection readyWhen reading this", "", `
  - id: cells
    forEach: [{name: "${['a', 'b']}"}]
    readyWhen: ["${this.metadata.name != ''}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${name}"}}`,
			"spec.resources[cells].readyWhen[0]", `this names nothing here: a readyWhen reads its resource as each: ${each.metadata.name != ''}`},
		{"readyWhen of a peach collection by its id", "", `
  - id: peach
    forEach: [{name: "${['a', 'b']}"}]
    readyWhen: ["${peach.metadata.name != ''}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${name}"}}`,
			"spec.resources[peach].readyWhen[0]", `peach is a collection, whose readyWhen judges each item by itself, as each: ${each.metadata.name != ''}`},
		{"readyWhen of one object whose id ends in each", "", `
  - id: reach
    readyWhen: ["${reach.data.x.y == 'z'}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[reach].readyWhen[0]", `type 'string' does not support field selection`},
		{"iterator not lowerCamelCase", "", `
  - id: cms
    forEach: [{queue-name: "${['a', 'b']}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
			"spec.resources[cms].forEach[0][queue-name]", `iterator names are lowerCamelCase identifiers, such as queueName`},
		{"includeWhen reading a forEach iterator", "", `
  - id: cm
    forEach: [{entry: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${entry}"}}
    includeWhen: ["${entry != 'skip' && schema.spec.replicas > 0}"]`,
			"spec.resources[cm].includeWhen[0]", `includeWhen decides whether the whole collection exists, so it cannot read the iterator entry; to leave some items out, filter its list: entry: ${schema.spec.items.filter(entry, entry != 'skip' && schema.spec.replicas > 0)}`},
		{"a collection's readyWhen reading its iterator", "", `
  - id: cm
    forEach: [{entry: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${entry}"}}
    readyWhen: ["${entry == 'skip' || has(each.data)}"]`,
			"spec.resources[cm].readyWhen[0]", `readyWhen judges each item of the collection by its object alone (each), so it cannot read the iterator entry; read the item's own fields instead`},
		{"omit() in includeWhen", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    includeWhen: ["${schema.spec.replicas > 1 ? true : omit()}"]`,
			"spec.resources[cm].includeWhen[0]", `omit() leaves a template field out of its object; it has no meaning here`},
		{"omit() in readyWhen", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    readyWhen: ["${has(cm.data) || omit()}"]`,
			"spec.resources[cm].readyWhen[0]", `omit() leaves a template field out`},
		{"omit() in forEach", "", `
  - id: cms
    forEach: [{it: "${size(schema.spec.items) > 0 ? schema.spec.items : omit()}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${it}"}}`,
			"spec.resources[cms].forEach[0][it]", `omit() leaves a template field out`},
		{"forEach iterator missing from the name", "", `
  - id: cms
    forEach: [{item2: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}"}}`,
			"spec.resources[cms].template.metadata.name", `forEach iterator "item2" must be used in metadata.name`},
		{"forEach over a non-list", "", `
  - id: cms
    forEach: [{it: "${schema.spec.name}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${it}"}}`,
			"spec.resources[cms].forEach[0][it]", `forEach needs a list, but the expression has type string; for one item per comma-separated part of it, write ${schema.spec.name.split(",")}, or for one item, ${[schema.spec.name]}$`},
		{"forEach over a count", "", `
  - id: cms
    forEach: [{it: "${schema.spec.replicas + 1}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${string(it)}"}}`,
			"spec.resources[cms].forEach[0][it]", `forEach needs a list, but the expression has type int; for that many items, numbered from 0, write ${lists.range(schema.spec.replicas + 1)}$`},
		{"forEach over a map", `{apiVersion: v1alpha1, kind: App, spec: {labels: "map[string]string"}}`, `
  - id: cms
    forEach: [{it: "${schema.spec.labels}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${it}"}}`,
			"spec.resources[cms].forEach[0][it]", `forEach needs a list, but the expression has type map(string, string); to iterate over its keys (in their sorted order), write ${schema.spec.labels.map(k, k)}`},
		{"field selected on a collection", "", `
  - id: cms
    forEach: [{it: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${it}"}}
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${cms.metadata.name}"}}`,
			"spec.resources[cm].template.metadata.name", `cms is a collection (forEach), a list of its objects: select one (cms[0]) or use a macro such as cms.all(x, ...) or cms.map(x, ...)`},
		{"forEach iterator named like a resource", "", configMap + `
  - id: cms
    forEach: [{cm: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${cm}"}}`,
			"spec.resources[cms].forEach[0][cm]", `iterator name clashes with the id of resource cm; choose another`},
		{"forEach iterator named with a reserved word", "", `
  - id: cms
    forEach: [{item: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${item}"}}`,
			"spec.resources[cms].forEach[0][item]", `Invalid value: "item": is a reserved word; choose another iterator name`},
		{"forEach iterator YAML reads as a boolean", "", `
  - id: cms
    forEach: [{n: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${n}"}}`,
			"spec.resources[cms].forEach[0][false]", `if it was written n, no or off, YAML read it as the boolean false: quote it ("n": ...)`},
		{"template name YAML reads as a boolean", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: no}}`,
			"spec.resources[cm].template.metadata.name", `the field expects a string, not the boolean false (YAML reads an unquoted n, no, off or false as one): quote it`},
		{"label value YAML reads as a boolean", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {beta: on}}}`,
			"spec.resources[cm].template.metadata.labels.beta", `not the boolean true (YAML reads an unquoted y, yes, on or true as one): quote it`},
		{"number where a string is expected", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {port: 8080}}`,
			"spec.resources[cm].template.data.port", `the field expects a string, not the number 8080: quote it`},
		{"quoted number where an integer is expected", "", `
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: a}
      spec:
        replicas: "2"
        selector: {matchLabels: {app: a}}
        template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: nginx}]}}`,
			"spec.resources[deploy].template.spec.replicas", `the field expects an integer, not the string "2": write it without quotes`},
		{"list where an object is expected", "", `
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: [x]}`,
			"spec.resources[cm].template.data", `the field expects an object, not a list`},
		{"forEach entry with two iterators", "", `
  - id: cms
    forEach: [{a: "${schema.spec.items}", b: "${schema.spec.items}"}]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${a}-${b}"}}`,
			"spec.resources[cms].forEach[0]", `one iterator name`},

		{"list default with an item of another type", `{apiVersion: v1alpha1, kind: App, spec: {name: string, ports: "[]integer | default=[\"x\"]"}}`, configMap,
			"spec.schema.spec.ports.default[0]", `must be of type integer`},

		// presentation, checked in the generated CRD
		{"printer column without a jsonPath", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, additionalPrinterColumns: [{name: Name, type: string, jsonPath: .spec.name}, {name: Size, type: string}]}`, configMap,
			"spec.schema.additionalPrinterColumns[1].jsonPath", `Required value`},
		{"printer column path in braces", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, additionalPrinterColumns: [{name: Name, type: string, jsonPath: "{.spec.name}"}]}`, configMap,
			"spec.schema.additionalPrinterColumns[0].jsonPath", `must be a simple json path starting with .: write .spec.name, without the braces kubectl get -o jsonpath wants$`},
		{"printer column of an unknown type", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, additionalPrinterColumns: [{name: Name, type: strin, jsonPath: .spec.name}]}`, configMap,
			"spec.schema.additionalPrinterColumns[0].type", `must be one of boolean,date,integer,number,string`},
		{"short name in capitals", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, shortNames: [ap, AP]}`, configMap,
			"spec.schema.shortNames[1]", `a DNS-1035 label`},
		{"category with a space", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, categories: ["my apps"]}`, configMap,
			"spec.schema.categories[0]", `a DNS-1035 label`},
		{"group without a dot", `{apiVersion: v1alpha1, kind: App, group: apps, spec: {name: string}}`, configMap,
			"spec.schema.group", `should be a domain with at least one dot`},
		{"protected group without approval", `{apiVersion: v1alpha1, kind: App, group: k8s.io, spec: {name: string}}`, configMap,
			"spec.schema.metadata.annotations[api-approved.kubernetes.io]", `protected groups must have approval annotation`},

		// status
		{"status field without expression", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {phase: running}}`, configMap,
			"spec.schema.status.phase", `status fields are ${...} expressions over the resources and schema; a constant is written as one too: ${"running"}`},
		{"status field given a type", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {replicas: "integer | default=1"}}`, configMap,
			"spec.schema.status.replicas", `a status field takes its type from its expression, so integer is not written: give the expression whose value it holds, as ${deployment.status.availableReplicas}`},
		{"status field given a list type", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {hosts: "[]string"}}`, configMap,
			"spec.schema.status.hosts", `so []string is not written`},
		{"declared condition's status written as the status it gives", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Degraded, status: "True"}]}}`, configMap,
			"spec.schema.status.conditions[0].status", `must be a single ${...} expression: write ${true}`},
		{"declared condition's countsTowardReady in quotes", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Warm, status: "${true}", countsTowardReady: "false"}]}}`, configMap,
			"spec.schema.status.conditions[0].countsTowardReady", `Invalid value: "false": must be true or false, not the text "false": write it without quotes`},
		{"declared condition's reason not text", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Warm, status: "${true}", reason: 5}]}}`, configMap,
			"spec.schema.status.conditions[0].reason", `must be a string, not a number`},
		{"status list of mixed types", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {ends: ["${cm.metadata.name}", "${size(cm.data)}"]}}`, configMap,
			"spec.schema.status.ends[1]", `the items of a status list must have one type: string before, integer here`},
		{"empty status list", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {ends: []}}`, configMap,
			"spec.schema.status.ends", `an empty list has no type to project`},
		{"status list item without expression", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {ends: ["${cm.metadata.name}", fixed]}}`, configMap,
			"spec.schema.status.ends[1]", `status fields are ${...} expressions`},
		{"status state is reserved", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {state: "${cm.metadata.name}"}}`, configMap,
			"spec.schema.status.state", `set by kro-agent`},
		{"status placement is reserved", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {placement: "${cm.metadata.name}"}}`, configMap,
			"spec.schema.status.placement", `set by kro-agent for instances placed by region`},
		{"status reads an unknown resource", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {ip: "${svc.spec.clusterIP}"}}`, configMap,
			"spec.schema.status.ip", `undeclared reference to 'svc'`},
		{"custom condition with a non-boolean status", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: ConfigPresent, status: "${cm.metadata.name}"}]}}`, configMap,
			"spec.schema.status.conditions[0].status", `must be a boolean expression`},
		{"custom condition taking a built-in type", `{apiVersion: v1alpha1, kind: App, spec: {name: string}, status: {conditions: [{type: Ready, status: "${true}"}]}}`, configMap,
			"spec.schema.status.conditions[0].type", `built-in condition type`},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d invalid RGDs; the issue asks for at least 40", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema := tc.schema
			if schema == "" {
				schema = defaultSchema
			}
			doc := fmt.Sprintf("metadata: {name: t}\nspec:\n  schema: %s\n  resources:%s\n", schema, tc.resources)
			_, err := Compile(parseRGD(t, doc), Options{Resolver: builtin(t), ValidateCRD: offline.Validate})
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("want a compile error at %s, got %v", tc.path, err)
			}
			// A message ending in $ must end the error: nothing is added.
			msg, whole := strings.CutSuffix(tc.msg, "$")
			for _, e := range cerr.Errs {
				if e.Field == tc.path && strings.Contains(e.Error(), msg) && (!whole || strings.HasSuffix(e.Error(), msg)) {
					return
				}
			}
			t.Errorf("no error at %s containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}

// An iterator whose list expression is wrong is reported there only, not
// again at each template field that uses it.
func TestWrongIteratorListIsOneError(t *testing.T) {
	for _, list := range []string{"${schema.spec.name}", "${schema.spec.nope}", "${cms.metadata.name}"} {
		if e, err := soleError(t, collectionOfIt(`[{it: "`+list+`"}]`, "x-${it}")); e == nil || e.Field != "spec.resources[cms].forEach[0][it]" {
			t.Errorf("forEach over %s: want one error at its forEach, got %v", list, err)
		}
	}
}

// soleError compiles doc and returns its one error, nil when it did not
// fail with exactly one; err is what Compile returned.
func soleError(t *testing.T, doc string) (e *field.Error, err error) {
	t.Helper()
	_, err = Compile(parseRGD(t, doc), Options{Resolver: builtin(t)})
	var cerr *Error
	if !errors.As(err, &cerr) || len(cerr.Errs) != 1 {
		return nil, err
	}
	return cerr.Errs[0], err
}

// collectionOfIt is an RGD of one collection, cms, of ConfigMaps named
// name whose data holds the iterator it.
func collectionOfIt(forEach, name string) string {
	return fmt.Sprintf(`
metadata: {name: t}
spec:
  schema: %s
  resources:
  - id: cms
    forEach: %s
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "%s"}, data: {v: "${it}"}}
`, defaultSchema, forEach, name)
}

// A name whose expressions do not compile is reported once, for what is
// wrong in it, not again for iterators it looks as if it did not use.
func TestNameThatDoesNotCompileIsOneError(t *testing.T) {
	doc := collectionOfIt(`[{it: "${schema.spec.items}"}, {idx: "${lists.range(2)}"}]`, "${it}-${string(idx)}-${nope}")
	if e, err := soleError(t, doc); e == nil || !strings.Contains(e.Error(), "undeclared reference to 'nope'") {
		t.Errorf("want one error, the undeclared reference, got %v", err)
	}
}

// Text that is no expression is not offered as one in ${ }: only text
// that compiles is an expression written without them.
func TestProseIsNotOfferedAsAnExpression(t *testing.T) {
	doc := `
metadata: {name: t}
spec:
  schema: {apiVersion: v1alpha1, kind: Prose, spec: {name: string}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
    includeWhen: ["when there are replicas"]
`
	e, err := soleError(t, doc)
	if e == nil || e.Detail != "must be a single ${...} expression" {
		t.Errorf("want the one error, with no expression offered; got %v", err)
	}
}

// Offline, a kind the resolver does not know is let through as a custom
// resource's, but not one a built-in group does not have.
func TestUnknownKindsOfBuiltinGroupsAreMistakes(t *testing.T) {
	compile := func(apiVersion, kind string) error {
		doc := fmt.Sprintf(`
metadata: {name: t}
spec:
  schema: %s
  resources:
  - id: thing
    template: {apiVersion: %s, kind: %s, metadata: {name: x}}
`, defaultSchema, apiVersion, kind)
		_, err := Compile(parseRGD(t, doc), Options{Resolver: builtin(t), AllowUnknownKinds: true})
		return err
	}
	if err := compile("example.com/v1", "Widget"); err != nil {
		t.Errorf("a custom resource's kind: %v", err)
	}
	if err := compile("example.com/v1", "Servce"); err != nil {
		t.Errorf("a custom resource's kind spelt like a built-in one: %v", err)
	}
	if err := compile("apps/v1", "Deploymnet"); err == nil || !strings.Contains(err.Error(), "did you mean Deployment, apiVersion apps/v1?") {
		t.Errorf("a misspelt built-in kind: %v", err)
	}
}

// Literals of every type the schema allows pass, and so do values of the
// fields it leaves open: int-or-string ports, quantities, a number where
// one is expected, strings holding expressions, and text with expressions
// in it where a string is one of the values a field takes.
func TestLiteralsOfTheRightTypeAreAccepted(t *testing.T) {
	doc := `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: literals}
spec:
  schema: {apiVersion: v1alpha1, kind: Literals, spec: {replicas: integer}}
  resources:
  - id: deploy
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: a, labels: {tier: "on"}}
      spec:
        replicas: ${schema.spec.replicas}
        strategy: {rollingUpdate: {maxSurge: "${string(schema.spec.replicas)}%"}}
        paused: false
        progressDeadlineSeconds: 600
        selector: {matchLabels: {app: a}}
        template:
          metadata: {labels: {app: a}}
          spec:
            terminationGracePeriodSeconds: 30
            containers:
            - name: c
              image: nginx
              args: ["--port", "8080"]
              ports: [{containerPort: 8080}]
              resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: 250m, memory: "${string(schema.spec.replicas)}Mi"}}
  - id: svc
    template:
      apiVersion: v1
      kind: Service
      metadata: {name: a}
      spec:
        ports: [{port: 80, targetPort: 8080}, {port: 81, targetPort: http}, {port: 82, targetPort: "http-${string(schema.spec.replicas)}"}]
        selector: {app: a}
`
	if _, err := Compile(parseRGD(t, doc), Options{Resolver: builtin(t)}); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

// A field whose type is wrong is reported there only: expressions reading
// it are not reported again as reading a field the spec does not have, and
// one that misspells it is pointed to it.
func TestFieldOfAWrongTypeIsOneError(t *testing.T) {
	for _, typ := range []string{"strin", "'[]widget'", "'string | colour=red'", "Missing"} {
		doc := fmt.Sprintf(`
metadata: {name: t}
spec:
  schema: {apiVersion: v1alpha1, kind: App, spec: {name: %s, size: integer}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.name}"}, data: {size: "${string(schema.spec.size)}"}}
`, typ)
		if e, err := soleError(t, doc); e == nil || e.Field != "spec.schema.spec.name" {
			t.Errorf("name: %s: want one error, at the field, got %v", typ, err)
		}
	}
	doc := `
metadata: {name: t}
spec:
  schema: {apiVersion: v1alpha1, kind: App, spec: {name: strin}}
  resources:
  - id: cm
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: "${schema.spec.nam}"}}
`
	_, err := Compile(parseRGD(t, doc), Options{Resolver: builtin(t)})
	if err == nil || !strings.Contains(err.Error(), "did you mean schema.spec.name?") {
		t.Errorf("a misspelt field of a wrong type: want it pointed to, got %v", err)
	}
}

// What the API server would refuse in the spec (a validation marker's
// rule, a short name) is told with the errors of the resources and the
// status, not after they are mended, and each error once.
func TestSpecErrorsAreToldWithTheRest(t *testing.T) {
	doc := `metadata: {name: t}
spec:
  schema:
    apiVersion: v1alpha1
    kind: App
    shortNames: [Bad_Name]
    spec: {a: "string | validation=\"self > 3\""}
    status: {b: "${cm.data.nope + 1}"}
  resources:
    - id: cm
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.spec.c}"}
`
	_, err := Compile(parseRGD(t, doc), Options{Resolver: builtin(t), ValidateCRD: offline.Validate})
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("want compile errors, got %v", err)
	}
	seen := map[string]bool{}
	for _, e := range cerr.Errs {
		if seen[e.Error()] {
			t.Errorf("told twice: %v", e)
		}
		seen[e.Error()] = true
	}
	for _, want := range []struct{ path, msg string }{
		{"spec.schema.spec.a", `"validation=self > 3": compilation failed`},
		{"spec.schema.shortNames[0]", `Bad_Name`},
		{"spec.resources[cm].template.metadata.name", `undefined field 'c'`},
		{"spec.schema.status.b", `no matching overload`},
	} {
		found := false
		for _, e := range cerr.Errs {
			found = found || e.Field == want.path && strings.Contains(e.Error(), want.msg)
		}
		if !found {
			t.Errorf("no error at %s containing %q; got:\n%v", want.path, want.msg, err)
		}
	}
}
