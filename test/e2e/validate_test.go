//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/plugin"
	"github.com/kro-agent/kro-agent/test/localcluster"
)

// exampleCRD is a namespaced CRD of the given kind in group, version v1,
// with spec.size, spec.color and status.ready.
func exampleCRD(kind, group string) string {
	lower := strings.ToLower(kind)
	return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]ss.%[3]s}
spec:
  group: %[3]s
  names: {kind: %[1]s, plural: %[2]ss, singular: %[2]s, listKind: %[1]sList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              ready: {type: boolean}
`, kind, lower, group)
}

var widgetCRD = exampleCRD("Widget", "example.com")

// rgdUsingWidget returns an RGD that writes a Widget (size from sizeExpr) and
// reads it back into a ConfigMap.
func rgdUsingWidget(sizeExpr string) string {
	return `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: widget-user}
spec:
  schema:
    apiVersion: v1alpha1
    kind: WidgetUser
    spec: {name: string, size: integer}
  resources:
  - id: widget
    template:
      apiVersion: example.com/v1
      kind: Widget
      metadata: {name: "${schema.spec.name}"}
      spec: {size: "` + sizeExpr + `", color: blue}
    readyWhen: ["${widget.status.?ready.orValue(false)}"]
  - id: summary
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "${schema.spec.name}-summary"}
      data:
        size: "${string(widget.spec.size)}"
        color: "${widget.spec.color}"
`
}

func TestValidateThroughDiscovery(t *testing.T) {
	f := features.New("RGDs over a CRD kind are type-checked through discovery").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			crd := &extv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal([]byte(widgetCRD), crd); err != nil {
				t.Fatal(err)
			}
			client := apiextclient.NewForConfigOrDie(cfg.Client().RESTConfig())
			if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := localcluster.WaitEstablished(ctx, cfg.Client().RESTConfig(), crd.Name); err != nil {
				t.Fatalf("CRD not established: %v", err)
			}
			// Established comes before the OpenAPI schema is published;
			// wait for the schema, as the agent's requeue would.
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
				_, err := clusterResolver(t, cfg).Resolve(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
				return err == nil, nil
			})
			if err != nil {
				t.Fatalf("the Widget schema was never published: %v", err)
			}
			return ctx
		}).
		Assess("an RGD reading and writing the CRD's fields compiles", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			g, err := graph.Compile(parse(t, rgdUsingWidget("${schema.spec.size}")), graph.Options{Resolver: clusterResolver(t, cfg)})
			if err != nil {
				t.Fatalf("valid RGD refused:\n%v", err)
			}
			if got := strings.Join(g.Order(), ","); got != "widget,summary" {
				t.Errorf("order = %s, want widget,summary", got)
			}
			if info := g.Node("widget").Kind; info.Resource != "widgets" || !info.Namespaced || info.Schema == nil {
				t.Errorf("widget kind resolved as %+v", info)
			}
			return ctx
		}).
		Assess("a wrong type written into the CRD's field is refused with its path", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			_, err := graph.Compile(parse(t, rgdUsingWidget("${schema.spec.name}")), graph.Options{Resolver: clusterResolver(t, cfg)})
			var cerr *graph.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("want a compile error, got %v", err)
			}
			want := `spec.resources[widget].template.spec.size: Invalid value: "${schema.spec.name}": expression has type string, but the field expects int`
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q:\n%v", want, err)
			}
			return ctx
		}).
		Assess("a field the CRD does not have is refused", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			doc := strings.Replace(rgdUsingWidget("${schema.spec.size}"), "${widget.spec.color}", "${widget.spec.colour}", 1)
			_, err := graph.Compile(parse(t, doc), graph.Options{Resolver: clusterResolver(t, cfg)})
			if err == nil || !strings.Contains(err.Error(), "spec.resources[summary].template.data.color") || !strings.Contains(err.Error(), "undefined field 'colour'") {
				t.Errorf("want an undefined field error at the summary's data.color, got %v", err)
			}
			return ctx
		}).
		Assess("kubectl kro validate uses the cluster from the kubeconfig", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			file := t.TempDir() + "/rgd.yaml"
			writeFile(t, file, rgdUsingWidget("${schema.spec.name}"))
			out, err := runPlugin(t, "validate", "-f", file, "--kubeconfig", cfg.KubeconfigFile())
			if !errors.Is(err, plugin.ErrInvalid) {
				t.Fatalf("want exit 1 (invalid), got %v\n%s", err, out)
			}
			if !strings.Contains(out, "Kinds resolved: cluster") || !strings.Contains(out, "spec.resources[widget].template.spec.size") {
				t.Errorf("report does not show the cluster check:\n%s", out)
			}
			writeFile(t, file, rgdUsingWidget("${schema.spec.size}"))
			out, err = runPlugin(t, "validate", "-f", file, "--kubeconfig", cfg.KubeconfigFile())
			if err != nil || !strings.Contains(out, "topological order: widget -> summary") {
				t.Errorf("valid RGD: err=%v\n%s", err, out)
			}
			// Offline, the CRD kind is unknown: typed dyn, so the same RGD passes.
			out, err = runPlugin(t, "validate", "-f", file, "--offline")
			if err != nil || !strings.Contains(out, "offline") {
				t.Errorf("offline: err=%v\n%s", err, out)
			}
			// A kind the cluster lacks, declared by a CRD in the files, is
			// checked as declared there.
			crds := t.TempDir() + "/crds.yaml"
			writeFile(t, crds, strings.ReplaceAll(widgetCRD, "example.com", "example.dev"))
			writeFile(t, file, strings.ReplaceAll(rgdUsingWidget("${schema.spec.size}"), "example.com", "example.dev"))
			out, err = runPlugin(t, "validate", "-f", file, "--kubeconfig", cfg.KubeconfigFile())
			if !errors.Is(err, plugin.ErrInvalid) || !strings.Contains(out, "is its CRD installed?") {
				t.Errorf("a kind neither the cluster nor the files have: err=%v\n%s", err, out)
			}
			out, err = runPlugin(t, "validate", "-f", crds, "-f", file, "--kubeconfig", cfg.KubeconfigFile())
			if err != nil || !strings.Contains(out, "topological order: widget -> summary") {
				t.Errorf("with the CRD declaring the kind in the files: err=%v\n%s", err, out)
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}

func clusterResolver(t testing.TB, cfg *envconf.Config) kinds.Resolver {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg.Client().RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := kinds.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return kinds.Chain{kinds.NewDiscovery(memory.NewMemCacheClient(dc)), builtin}
}

func parse(t testing.TB, doc string) *v1alpha1.ResourceGraphDefinition {
	t.Helper()
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := yaml.UnmarshalStrict([]byte(doc), rgd); err != nil {
		t.Fatal(err)
	}
	return rgd
}

func runPlugin(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// refusedTemplates are templates, one per rule of a built-in kind that its
// schema does not say, each written as the API server refuses it, with
// the start of the warning the RGD gets and the API server's own words.
var refusedTemplates = []struct{ id, template, warned, refused string }{
	{"words", `{apiVersion: batch/v1, kind: CronJob, metadata: {name: words}, spec: {schedule: every 5 minutes, jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}`,
		`spec.schedule: the schedule "every 5 minutes" is refused`, "expected exactly 5 fields"},
	{"zone", `{apiVersion: batch/v1, kind: CronJob, metadata: {name: zone}, spec: {schedule: "@hourly", timeZone: Europe/Atlantis, jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}`,
		`spec.timeZone: the time zone "Europe/Atlantis" is refused`, "unknown time zone Europe/Atlantis"},
	{"text", `{apiVersion: v1, kind: Secret, metadata: {name: text}, data: {password: hunter2!}}`,
		`data.password: "hunter2!" is not base64`, "illegal base64 data"},
	{"greedy", `{apiVersion: v1, kind: Pod, metadata: {name: greedy}, spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]}}`,
		`resources.requests.cpu: the request 2 is more than the limit 1`, "must be less than or equal to cpu limit"},
	{"imageless", `{apiVersion: v1, kind: Pod, metadata: {name: imageless}, spec: {containers: [{name: c}]}}`,
		`containers[0].image: left out`, "image: Required value"},
	{"claim", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: claim}, spec: {resources: {requests: {storage: 1Gi}}}}`,
		`spec.accessModes: left out`, "at least 1 access mode is required"},
	{"ingress", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: ingress}, spec: {rules: [{http: {paths: [{path: api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}}`,
		`paths[0].path: the path "api" is refused`, "must be an absolute path"},
	{"ports", `{apiVersion: v1, kind: Pod, metadata: {name: ports}, spec: {containers: [{name: c, image: busybox, ports: [{name: web, containerPort: 80}, {name: web, containerPort: 81}]}]}}`,
		`ports[1].name: "web" is the name of`, `Duplicate value: "web"`},
	{"far", `{apiVersion: v1, kind: Pod, metadata: {name: far}, spec: {containers: [{name: c, image: busybox, ports: [{containerPort: 70000}]}]}}`,
		`containerPort: 70000 is no port`, "must be between 1 and 65535"},
	{"env", `{apiVersion: v1, kind: Pod, metadata: {name: env}, spec: {containers: [{name: c, image: busybox, env: [{name: A, value: a, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}]}}`,
		`env[0].valueFrom: given with a value too`, "may not be specified when `value` is not empty"},
	{"probe", `{apiVersion: v1, kind: Pod, metadata: {name: probe}, spec: {containers: [{name: c, image: busybox, livenessProbe: {periodSeconds: 5}}]}}`,
		`livenessProbe: names nothing to do`, "must specify a handler type"},
	{"twoways", `{apiVersion: v1, kind: Pod, metadata: {name: twoways}, spec: {containers: [{name: c, image: busybox, readinessProbe: {tcpSocket: {port: 80}, httpGet: {port: 80}}}]}}`,
		`readinessProbe: names httpGet and tcpSocket`, "may not specify more than 1 handler type"},
	{"mount", `{apiVersion: v1, kind: Pod, metadata: {name: mount}, spec: {containers: [{name: c, image: busybox, volumeMounts: [{name: data, mountPath: /data}]}]}}`,
		`volumeMounts[0].name: "data" is no volume of the pod`, `Not found: "data"`},
	{"portless", `{apiVersion: v1, kind: Service, metadata: {name: portless}, spec: {selector: {app: web}}}`,
		`spec.ports: left out`, "spec.ports: Required value"},
	{"keys", `{apiVersion: v1, kind: ConfigMap, metadata: {name: keys}, data: {config/app.yaml: x}}`,
		`data[config/app.yaml]: the key "config/app.yaml" is refused`, "a valid config key must consist of"},
	{"always", `{apiVersion: batch/v1, kind: Job, metadata: {name: always}, spec: {template: {spec: {restartPolicy: Always, containers: [{name: c, image: busybox}]}}}}`,
		`restartPolicy: sets restartPolicy: Always`, `restartPolicy: Required value: valid values: "OnFailure", "Never"`},
	{"unmatched", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: unmatched}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: api}}, spec: {containers: [{name: c, image: busybox}]}}}}`,
		`spec.selector.matchLabels.app`, "`selector` does not match template `labels`"},
	{"underscore", `{apiVersion: v1, kind: Pod, metadata: {name: underscore}, spec: {containers: [{name: Web_Server, image: busybox}]}}`,
		`containers[0].name: the container name "Web_Server" is refused`, "RFC 1123 label"},
	{"longport", `{apiVersion: v1, kind: Pod, metadata: {name: longport}, spec: {containers: [{name: c, image: busybox, ports: [{name: http-metrics-port, containerPort: 80}]}]}}`,
		`ports[0].name: the port name "http-metrics-port" is refused`, "must be no more than 15 characters"},
	{"gigabytes", `{apiVersion: v1, kind: Pod, metadata: {name: gigabytes}, spec: {containers: [{name: c, image: busybox, resources: {limits: {memory: 1Gb}}}]}}`,
		`limits.memory: the quantity "1Gb" is refused`, "quantities must match the regular expression"},
	{"unnamed", `{apiVersion: v1, kind: Service, metadata: {name: unnamed}, spec: {ports: [{name: http, port: 80}, {port: 81}]}}`,
		`ports[1].name: left out`, "spec.ports[1].name: Required value"},
	{"casing", `{apiVersion: v1, kind: Service, metadata: {name: casing}, spec: {type: Loadbalancer, ports: [{port: 80}]}}`,
		`spec.type: "Loadbalancer" is not one of the values`, `Unsupported value: "Loadbalancer"`},
	{"selectorless", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: selectorless}, spec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: busybox}]}}}}`,
		`spec.selector: required`, "spec.selector: Required value"},
	{"spaced", `{apiVersion: v1, kind: ConfigMap, metadata: {name: spaced, labels: {team: platform team}}}`,
		`metadata.labels.team`, "a valid label must be"},
	{"twice", `{apiVersion: v1, kind: Pod, metadata: {name: twice}, spec: {containers: [{name: c, image: busybox}, {name: c, image: nginx}]}}`,
		`containers[1]: repeats item 0's key (name=c)`, "duplicate entries for key"},
	{"recreate", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: recreate}, spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: busybox}]}}}}`,
		`spec.strategy.rollingUpdate: given with type Recreate`, "may not be specified when strategy `type` is 'Recreate'"},
	{"ondelete", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: ondelete}, spec: {serviceName: db, updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1}}, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: busybox}]}}}}`,
		`spec.updateStrategy.rollingUpdate: given with type OnDelete`, "only allowed for updateStrategy 'RollingUpdate'"},
	{"fewer", `{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: fewer}, spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 5, maxReplicas: 2}}`,
		`spec.maxReplicas: 2 is fewer than minReplicas (5)`, "must be greater than or equal to `minReplicas`"},
	{"aimless", `{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: aimless}, spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization}}}]}}`,
		`metrics[0].resource.target: gives neither averageUtilization nor averageValue`, "must set either a target raw value or a target utilization"},
	{"budget", `{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: budget}, spec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {app: web}}}}`,
		`spec.maxUnavailable: given with minAvailable too`, "minAvailable and maxUnavailable cannot be both set"},
	{"nodeport", `{apiVersion: v1, kind: Service, metadata: {name: nodeport}, spec: {ports: [{port: 80, nodePort: 30080}]}}`,
		`ports[0].nodePort: given to a Service of type ClusterIP`, "may not be used when `type` is 'ClusterIP'"},
	{"backend", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: backend}, spec: {defaultBackend: {service: {name: web, port: {name: http, number: 80}}}}}`,
		`spec.defaultBackend.service.port: gives both a name and a number`, "cannot set both port name & port number"},
	{"roleref", `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: refused-roleref}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}, subjects: [{kind: User, name: alice}]}`,
		`roleRef.kind: Role`, `Unsupported value: "Role"`},
	{"sagroup", `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: sagroup}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}, subjects: [{kind: ServiceAccount, name: app, apiGroup: rbac.authorization.k8s.io}]}`,
		`subjects[0].apiGroup: "rbac.authorization.k8s.io" given to a ServiceAccount`, `subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io"`},
	{"neverending", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: neverending}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {restartPolicy: OnFailure, containers: [{name: c, image: busybox}]}}}}`,
		`spec.template.spec.restartPolicy: OnFailure`, `Unsupported value: "OnFailure"`},
	{"urlhost", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: urlhost}, spec: {rules: [{host: "https://shop.example.com/", http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}}`,
		`spec.rules[0].host: the host "https://shop.example.com/" is refused`, "a lowercase RFC 1123 subdomain"},
	{"tlskeys", `{apiVersion: v1, kind: Secret, metadata: {name: tlskeys}, type: kubernetes.io/tls, stringData: {tls.crt: cert, tls.cert: key}}`,
		`data: holds no tls.key`, "data[tls.key]: Required value"},
	{"sans", `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: refused-sans}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}, subjects: [{kind: ServiceAccount, name: app}]}`,
		`subjects[0].namespace: left out`, "subjects[0].namespace: Required value"},
}

// acceptedTemplates are templates near those above that the API server
// takes, through its defaults or the exceptions of its rules: none may be
// warned of.
var acceptedTemplates = []struct{ id, template string }{
	{"headless", `{apiVersion: v1, kind: Service, metadata: {name: headless}, spec: {clusterIP: None, selector: {app: web}}}`},
	{"sameport", `{apiVersion: v1, kind: Service, metadata: {name: sameport}, spec: {ports: [{port: 80, targetPort: 0}]}}`},
	{"ondemand", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ondemand}, spec: {updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}, selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: busybox}]}}}}`},
	{"defaulted", `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: defaulted}, roleRef: {apiGroup: "", kind: ClusterRole, name: view}, subjects: [{kind: User, name: alice, apiGroup: ""}, {kind: ServiceAccount, name: app}]}`},
	{"anypath", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: anypath}, spec: {rules: [{http: {paths: [{path: "", pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}]}}]}}`},
	{"claims", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: claims}, spec: {serviceName: db, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: busybox, volumeMounts: [{name: data, mountPath: /data}]}]}}, volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]}}`},
	{"encoded", `{apiVersion: v1, kind: Secret, metadata: {name: encoded}, data: {password: "aHVudGVyMiE=\n"}}`},
	{"wildhost", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: wildhost}, spec: {rules: [{host: "*.example.com", http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}}`},
	{"username", `{apiVersion: v1, kind: Secret, metadata: {name: username}, type: kubernetes.io/basic-auth, stringData: {username: admin}}`},
	{"limited", `{apiVersion: v1, kind: Pod, metadata: {name: limited}, spec: {containers: [{name: c, image: busybox, resources: {limits: {cpu: 1}}}]}}`},
}

// compileTemplates compiles an RGD of kind whose resources are templates
// (by id) against the cluster's schemas.
func compileTemplates(t *testing.T, cfg *envconf.Config, kind string, templates map[string]string) *graph.Graph {
	t.Helper()
	rgd := fmt.Sprintf("metadata: {name: %s}\nspec:\n  schema: {apiVersion: v1alpha1, kind: %s}\n  resources:\n", strings.ToLower(kind), kind)
	for _, id := range slices.Sorted(maps.Keys(templates)) {
		rgd += fmt.Sprintf("  - id: %s\n    template: %s\n", id, templates[id])
	}
	g, err := graph.Compile(parse(t, rgd), graph.Options{Resolver: clusterResolver(t, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// What the RGD is warned of, that the API server refuses for every object
// so written, this API server refuses: each template above, compiled
// against its schemas, gets its warning, and applied as it is (dry-run),
// its refusal.
func TestWarnedTemplatesAreRefused(t *testing.T) {
	const ns = "refused-templates"
	f := features.New("templates warned of").
		Assess("are refused by the API server as warned", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			namespace(t, newClients(t, cfg), ns)
			templates := map[string]string{}
			for _, tc := range refusedTemplates {
				templates[tc.id] = tc.template
			}
			g := compileTemplates(t, cfg, "Refused", templates)
			warnings := strings.Join(g.Warnings(), "\n")
			for _, tc := range refusedTemplates {
				warned := slices.ContainsFunc(g.Warnings(), func(w string) bool {
					return strings.HasPrefix(w, "spec.resources["+tc.id+"].template.") && strings.Contains(w, tc.warned)
				})
				if !warned {
					t.Errorf("%s: no warning %q in\n%s", tc.id, tc.warned, warnings)
				}
				out, err := kubectl(t, cfg, tc.template, "apply", "--server-side", "--dry-run=server", "-n", ns, "-f", "-")
				if err == nil || !strings.Contains(out, tc.refused) {
					t.Errorf("%s: the API server answered %v: %s\nwant a refusal with %q", tc.id, err, out, tc.refused)
				}
			}
			if n := len(g.Warnings()); n != len(refusedTemplates) {
				t.Errorf("%d warnings for %d templates:\n%s", n, len(refusedTemplates), warnings)
			}
			return ctx
		}).
		Assess("and what it takes is not warned of", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			templates := map[string]string{}
			for _, tc := range acceptedTemplates {
				templates[tc.id] = tc.template
			}
			g := compileTemplates(t, cfg, "Accepted", templates)
			if w := g.Warnings(); len(w) > 0 {
				t.Errorf("templates the API server takes are warned of:\n%s", strings.Join(w, "\n"))
			}
			for _, tc := range acceptedTemplates {
				if out, err := kubectl(t, cfg, tc.template, "apply", "--server-side", "--dry-run=server", "-n", ns, "-f", "-"); err != nil {
					t.Errorf("%s: the API server refused it: %v: %s", tc.id, err, out)
				}
			}
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
