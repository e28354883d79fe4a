package plugin

import (
	"reflect"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/managedfields"
)

// overlaid is live as a server-side apply of what the template sets (u)
// would leave it, without the API server's check (managedfields.Merged):
// a Deployment's containers keep the fields the API server defaulted, and
// a field the agent applied before that the template no longer sets is
// gone. It is u alone when nothing is live.
func overlaid(live, u *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		return u.DeepCopy()
	}
	return &unstructured.Unstructured{Object: managedfields.Merged(live.DeepCopy().Object, u.DeepCopy().Object, live.GetManagedFields())}
}

// diff is a unified diff of two objects' YAML, without the fields the API
// server maintains, and with a Secret's values masked.
func diff(from, to *unstructured.Unstructured) string {
	from, to = maskSecretData(from, to)
	a, b := "", cleanYAML(to)
	if from != nil {
		a = cleanYAML(from)
	}
	return unifiedDiff(a, b)
}

// unifiedDiff is the unified diff from the text a, live, to b, desired;
// "" when they are the same.
func unifiedDiff(a, b string) string {
	if a == b {
		return ""
	}
	out, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(a), B: diffLines(b), FromFile: "live", ToFile: "desired", Context: 3,
	})
	return out
}

// diffLines splits text into lines, each ending in a newline, with none
// for an empty text: not a blank line after the last, nor a blank one in
// place of an object that does not exist.
func diffLines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(text, "\n"))
}

// maskSecretData hides the values of a Secret's data from a diff, as
// kubectl diff does, so that a preview on a shared terminal or in a CI log
// does not print credentials: each value is "***", and a value that
// changes is "*** (before)" on one side and "*** (after)" on the other, so
// the diff still says which keys change. Other objects are returned as
// they are; a Secret is copied before it is masked.
func maskSecretData(from, to *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if gvk := to.GroupVersionKind(); gvk.Group != "" || gvk.Kind != "Secret" {
		return from, to
	}
	to = to.DeepCopy()
	if from != nil {
		from = from.DeepCopy()
	}
	for _, field := range []string{"data", "stringData"} {
		after, _ := to.Object[field].(map[string]any)
		var before map[string]any
		if from != nil {
			before, _ = from.Object[field].(map[string]any)
		}
		for k, v := range after {
			old, ok := before[k]
			switch {
			case ok && !reflect.DeepEqual(old, v):
				before[k], after[k] = "*** (before)", "*** (after)"
			case ok:
				before[k], after[k] = "***", "***"
			default:
				after[k] = "***"
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				before[k] = "***"
			}
		}
	}
	return from, to
}

func cleanYAML(u *unstructured.Unstructured) string {
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "status")
	b, _ := yaml.Marshal(c.Object)
	return string(b)
}
