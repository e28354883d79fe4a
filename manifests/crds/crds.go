// Package crds holds the CustomResourceDefinitions of kro-agent's APIs as
// controller-gen writes them from pkg/apis (make generate), for what checks
// objects against them without a cluster: kubectl kro validate reads an
// RGD's fields as the API server does before any webhook sees them.
package crds

import (
	_ "embed"
	"sync"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed kro.run_resourcegraphdefinitions.yaml
var rgdYAML []byte

// ResourceGraphDefinitions returns the CustomResourceDefinition of
// ResourceGraphDefinitions. It is read once; callers must not change it.
var ResourceGraphDefinitions = sync.OnceValues(func() (*extv1.CustomResourceDefinition, error) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(rgdYAML, crd); err != nil {
		return nil, err
	}
	return crd, nil
})
