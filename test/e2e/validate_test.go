//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
