package plugin

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A kind the server does not serve is named as the user typed it, without
// the mapper's internal form of it, and still reads as a no-match error.
func TestUnknownKindIsNamed(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}, meta.RESTScopeNamespace)
	c := &cluster{mapper: mapper}
	if m, err := c.mapping("webapp"); err != nil || m.GroupVersionKind.Kind != "WebApp" {
		t.Fatalf("mapping(webapp) = %v, %v", m, err)
	}
	_, err := c.mapping("webapps.nope.example.com")
	const want = `the server has no kind "webapps.nope.example.com" (kubectl api-resources lists the kinds it serves)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	if !meta.IsNoMatchError(err) {
		t.Errorf("%v does not unwrap to a no-match error", err)
	}
}
