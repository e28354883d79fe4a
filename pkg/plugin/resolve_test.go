package plugin

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
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

func TestAKindMistypedIsMatchedToAnRGDsKind(t *testing.T) {
	rgd := func(kind string) v1alpha1.ResourceGraphDefinition {
		r := v1alpha1.ResourceGraphDefinition{}
		if kind != "" {
			r.Spec.Schema = &v1alpha1.Schema{APIVersion: "v1alpha1", Kind: kind}
		}
		return r
	}
	rgds := []v1alpha1.ResourceGraphDefinition{rgd(""), rgd("WebApp"), rgd("WorkerPool")}
	for typed, want := range map[string]string{
		"webap":             "webapp",
		"WebAPP":            "webapp",
		"webapps":           "webapp",
		"wepapp.kro.run":    "webapp",
		"workerpol":         "workerpool",
		"ab":                "", // an RGD without a kind is no candidate
		"database":          "",
		"deployment":        "",
		"workerpools.other": "workerpool",
	} {
		if got := closestKind(typed, rgds); got != want {
			t.Errorf("closestKind(%q) = %q, want %q", typed, got, want)
		}
	}
	err := &unknownKindError{kind: "webap", meant: "webapp"}
	if want := `the server has no kind "webap": did you mean webapp? (kubectl api-resources lists the kinds it serves)`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	named := &unknownKindError{kind: "shop", instanceOf: "webapp", where: "namespace team-a"}
	if want := `the server has no kind "shop", but namespace team-a has a webapp of that name: give its kind before it, webapp shop`; named.Error() != want {
		t.Errorf("error = %q, want %q", named, want)
	}
}

// An instance whose apiVersion or kind no RGD serves is pointed to the RGD
// serving its kind written otherwise: another version, no group, another
// case, a typo.
func TestAKindServedOtherwiseIsPointedTo(t *testing.T) {
	rgds := []v1alpha1.ResourceGraphDefinition{{}, {}}
	rgds[0].Name, rgds[0].Spec.Schema = "webapp", &v1alpha1.Schema{APIVersion: "v1alpha1", Kind: "WebApp"}
	rgds[1].Name, rgds[1].Spec.Schema = "fleet", &v1alpha1.Schema{APIVersion: "v1", Kind: "Fleet", Group: "platform.example.com"}
	const webapp = "; ResourceGraphDefinition webapp serves it as apiVersion kro.run/v1alpha1, kind WebApp"
	for gvk, want := range map[schema.GroupVersionKind]string{
		{Group: "kro.run", Version: "v1", Kind: "WebApp"}:                webapp,
		{Version: "v1alpha1", Kind: "WebApp"}:                            webapp,
		{Group: "kro.run", Version: "v1alpha1", Kind: "Webapp"}:          webapp,
		{Group: "kro.run", Version: "v1alpha1", Kind: "Flet"}:            "; ResourceGraphDefinition fleet serves it as apiVersion platform.example.com/v1, kind Fleet",
		{Group: "kro.run", Version: "v1alpha1", Kind: "DatabaseCluster"}: " (kubectl get rgd lists the kinds served)",
	} {
		if got := servedAlike(rgds, gvk); got != want {
			t.Errorf("servedAlike(%v) = %q, want %q", gvk, got, want)
		}
	}
}

func TestAnInstanceElsewhereIsPointedTo(t *testing.T) {
	for _, tc := range []struct {
		namespaces []string
		want       string
	}{
		{[]string{"team-a"}, "there is one in namespace team-a (add -n team-a)"},
		{[]string{"a", "b", "c"}, "there are ones in namespaces a, b, c (add -n NAMESPACE)"},
		{[]string{"a", "b", "c", "d", "e"}, "there are ones in 5 namespaces, such as a, b, c (add -n NAMESPACE)"},
	} {
		if got := elsewhereHint(tc.namespaces); got != tc.want {
			t.Errorf("elsewhereHint(%q) = %q, want %q", tc.namespaces, got, tc.want)
		}
	}
}
