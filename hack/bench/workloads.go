package main

import (
	"fmt"
)

// workload is one of SPEC §10's two benchmark graphs, with the objects a
// direct client creates for the same instance (the floor).
type workload struct {
	Name string
	RGD  string
	// Kind of the instances the RGD serves.
	Kind, Resource string
	// Direct returns the objects one instance stands for, created
	// directly for the floor measurement.
	Direct func(name, ns string) []map[string]any
	// PodsPerInstance sizes the fake nodes.
	PodsPerInstance int
}

// agentBound: three chained ConfigMaps/Secrets; only the controller sets
// the pace.
var agentBound = workload{
	Name: "agent-bound", Kind: "ChainBench", Resource: "chainbenches",
	RGD: `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: chainbench}
spec:
  schema:
    apiVersion: v1alpha1
    kind: ChainBench
    spec:
      value: string | default="v"
  resources:
    - id: first
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-first"}
        data: {value: "${schema.spec.value}"}
    - id: second
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}-second"}
        data: {from: "${first.metadata.name}", value: "${first.data.value}"}
    - id: third
      template:
        apiVersion: v1
        kind: Secret
        metadata: {name: "${schema.metadata.name}-third"}
        stringData: {from: "${second.metadata.name}", value: "${second.data.value}"}
`,
	Direct: func(name, ns string) []map[string]any {
		return []map[string]any{
			object("v1", "ConfigMap", name+"-first", ns, map[string]any{"data": map[string]any{"value": "v"}}),
			object("v1", "ConfigMap", name+"-second", ns, map[string]any{"data": map[string]any{"from": name + "-first", "value": "v"}}),
			object("v1", "Secret", name+"-third", ns, map[string]any{"stringData": map[string]any{"from": name + "-second", "value": "v"}}),
		}
	},
}

// podsBound: a ConfigMap, a Deployment gated on available replicas and a
// headless Service; the cluster's own controllers set the pace.
var podsBound = workload{
	Name: "pods-bound", Kind: "PodBench", Resource: "podbenches", PodsPerInstance: 1,
	RGD: `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: podbench}
spec:
  schema:
    apiVersion: v1alpha1
    kind: PodBench
    spec:
      image: string | default="nginx"
  resources:
    - id: config
      template:
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: "${schema.metadata.name}"}
        data: {image: "${schema.spec.image}"}
    - id: deploy
      readyWhen:
        - ${deploy.status.?availableReplicas.orValue(0) == deploy.spec.replicas}
      template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: "${schema.metadata.name}"}
        spec:
          replicas: 1
          selector: {matchLabels: {app: "${schema.metadata.name}"}}
          template:
            metadata: {labels: {app: "${schema.metadata.name}"}}
            spec:
              containers:
                - name: app
                  image: ${schema.spec.image}
                  env: [{name: CONFIG, value: "${config.metadata.name}"}]
    - id: service
      template:
        apiVersion: v1
        kind: Service
        metadata: {name: "${schema.metadata.name}"}
        spec:
          clusterIP: None
          selector: {app: "${deploy.spec.template.metadata.labels.app}"}
          ports: [{port: 80}]
`,
	Direct: func(name, ns string) []map[string]any {
		labels := map[string]any{"app": name}
		return []map[string]any{
			object("v1", "ConfigMap", name, ns, map[string]any{"data": map[string]any{"image": "nginx"}}),
			object("apps/v1", "Deployment", name, ns, map[string]any{"spec": map[string]any{
				"replicas": int64(1),
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "app", "image": "nginx", "env": []any{map[string]any{"name": "CONFIG", "value": name}},
					}}},
				},
			}}),
			object("v1", "Service", name, ns, map[string]any{"spec": map[string]any{
				"clusterIP": "None", "selector": labels, "ports": []any{map[string]any{"port": int64(80)}},
			}}),
		}
	},
}

func object(apiVersion, kind, name, ns string, rest map[string]any) map[string]any {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}}
	for k, v := range rest {
		o[k] = v
	}
	return o
}

func instance(w workload, name, ns string) map[string]any {
	return map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": w.Kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{},
	}
}

// spread names the i-th of n objects and its namespace, over 10 namespaces.
func spread(i int) (name, ns string) {
	return fmt.Sprintf("b%05d", i), fmt.Sprintf("bench-%d", i%10)
}
