// Package offline validates a generated CustomResourceDefinition, and the
// objects of a kind it would serve, with the API server's own validation
// code, linked in, for checks without a cluster or before the kind is
// served (kubectl kro validate and dry-run). It links much of the API
// server, which costs a long-running process about 14 MB of resident
// memory for code; the agent validates on its API server instead (package
// crdcheck).
package offline

import (
	"context"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate runs the API server's validation of a new CRD: structural
// schema rules, defaults against their schemas, and compilation and cost
// of every x-kubernetes-validations rule. Paths are paths into the CRD.
func Validate(crd *extv1.CustomResourceDefinition) (field.ErrorList, error) {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return nil, err
	}
	// Status is filled in by the API server on create; validation wants it
	// to name the stored version.
	if len(crd.Spec.Versions) > 0 {
		internal.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), internal)
	for _, e := range errs {
		// An error about a rule's expression carries the whole rule, which
		// prints as a Go struct; the expression is what it is about.
		if rule, ok := e.BadValue.(apiextensions.ValidationRule); ok {
			e.BadValue = rule.Rule
			if strings.HasSuffix(e.Field, ".messageExpression") {
				e.BadValue = rule.MessageExpression
			}
		}
	}
	return errs, nil
}
