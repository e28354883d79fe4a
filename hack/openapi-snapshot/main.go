// Command openapi-snapshot records the built-in kinds and OpenAPI v3 schemas
// of a fresh cluster into pkg/kinds/builtin.json.gz, which kro-agent embeds to
// validate RGDs that use built-in kinds without a cluster.
//
//	go run ./hack/openapi-snapshot -kubeconfig "$(make -s kubeconfig)" -o pkg/kinds/builtin.json.gz
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kro-agent/kro-agent/pkg/kinds"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of a fresh cluster (no CRDs)")
	out := flag.String("o", "pkg/kinds/builtin.json.gz", "output file")
	flag.Parse()
	if err := run(*kubeconfig, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapi-snapshot:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, out string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	version, err := dc.ServerVersion()
	if err != nil {
		return err
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		return err
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return err
	}
	snap := &kinds.Snapshot{
		KubernetesVersion: version.GitVersion,
		Resources:         map[string][]kinds.SnapshotResource{},
		Schemas:           map[string]*spec.Schema{},
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return err
		}
		path := "apis/" + gv.String()
		if gv.Group == "" {
			path = "api/" + gv.Version
		}
		doc, ok := paths[path]
		if !ok {
			continue
		}
		raw, err := doc.Schema("application/json")
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var parsed struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(raw, &parsed); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for name, s := range parsed.Components.Schemas {
			snap.Schemas[name] = s
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			name, ok := componentFor(parsed.Components.Schemas, gv.WithKind(r.Kind))
			if !ok {
				continue
			}
			snap.Resources[gv.String()] = append(snap.Resources[gv.String()], kinds.SnapshotResource{
				Kind: r.Kind, Resource: r.Name, Namespaced: r.Namespaced, Schema: name,
			})
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := kinds.EncodeSnapshot(f, snap); err != nil {
		return err
	}
	fmt.Printf("wrote %s: Kubernetes %s, %d group-versions, %d schemas\n", out, snap.KubernetesVersion, len(snap.Resources), len(snap.Schemas))
	return nil
}

// componentFor finds the component schema that declares gvk.
func componentFor(schemas map[string]*spec.Schema, gvk schema.GroupVersionKind) (string, bool) {
	for name, s := range schemas {
		var gvks []schema.GroupVersionKind
		if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil {
			continue
		}
		for _, g := range gvks {
			if g == gvk {
				return name, true
			}
		}
	}
	return "", false
}
