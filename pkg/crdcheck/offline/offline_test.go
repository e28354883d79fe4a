package offline

import (
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An error about a rule's expression names the expression, not the whole
// rule printed as a Go struct.
func TestValidateQuotesTheExpressionOfARule(t *testing.T) {
	crd := appsCRD(&extv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]extv1.JSONSchemaProps{"spec": {
			Type: "object",
			Properties: map[string]extv1.JSONSchemaProps{"name": {
				Type:         "string",
				MaxLength:    ptr(int64(10)),
				XValidations: extv1.ValidationRules{{Rule: "self.size() > 'x'"}, {Rule: "self != ''", MessageExpression: "'bad ' + 1"}},
			}},
		}},
	})
	errs, err := Validate(crd)
	if err != nil {
		t.Fatal(err)
	}
	got := errs.ToAggregate().Error()
	for _, want := range []string{
		`x-kubernetes-validations[0].rule: Invalid value: "self.size() > 'x'": compilation failed: `,
		`x-kubernetes-validations[1].messageExpression: Invalid value: "'bad ' + 1": messageExpression compilation failed: `,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"Rule"`) {
		t.Errorf("a rule is printed whole:\n%s", got)
	}
}

func ptr[T any](v T) *T { return &v }

// appsCRD serves the namespaced kind App (kro.run/v1alpha1) with schema
// and a status subresource, as a generated CRD does.
func appsCRD(schema *extv1.JSONSchemaProps) *extv1.CustomResourceDefinition {
	return &extv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "apps.kro.run"},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: "kro.run",
			Names: extv1.CustomResourceDefinitionNames{Plural: "apps", Singular: "app", Kind: "App", ListKind: "AppList"},
			Scope: extv1.NamespaceScoped,
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Subresources: &extv1.CustomResourceSubresources{Status: &extv1.CustomResourceSubresourceStatus{}},
				Schema:       &extv1.CustomResourceValidation{OpenAPIV3Schema: schema},
			}},
		},
	}
}
