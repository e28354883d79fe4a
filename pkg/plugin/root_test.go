package plugin

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestInstanceArgsTakeBothKubectlForms(t *testing.T) {
	for _, args := range [][]string{{"webapp", "demo"}, {"webapp/demo"}, {"webapps.kro.run/demo"}} {
		kind, name, err := instanceArgs(args)
		if err != nil || name != "demo" || !strings.HasPrefix(kind, "webapp") {
			t.Errorf("%q: got %q %q, %v", args, kind, name, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "which instance? give KIND NAME or KIND/NAME"},
		{[]string{"webapp"}, "which webapp? give KIND NAME or KIND/NAME, such as webapp demo"},
		{[]string{"webapp/"}, `"webapp/" is not KIND/NAME`},
		{[]string{"/demo"}, `"/demo" is not KIND/NAME`},
		{[]string{"webapp/demo/x"}, `"webapp/demo/x" is not KIND/NAME`},
		{[]string{"webapp", "webapp/demo"}, "KIND NAME or as KIND/NAME, not both"},
		{[]string{"webapp/demo", "other"}, "KIND NAME or as KIND/NAME, not both"},
		{[]string{"webapp", "a", "b"}, "one instance at a time: got 3 arguments"},
	} {
		if _, _, err := instanceArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// A KIND given without NAME is answered with the names there are to give.
func TestNameMissingSaysWhichThereAre(t *testing.T) {
	for _, tc := range []struct {
		err  nameMissingError
		want string
	}{
		{nameMissingError{kind: "webapp"}, "which webapp? give KIND NAME or KIND/NAME, such as webapp demo"},
		{nameMissingError{kind: "webapp", listed: true, command: "tree", namespace: "team-a", names: []string{"shop", "blog"}},
			"which webapp? give its name too, as in kubectl kro tree webapp shop (namespace team-a has shop, blog)"},
		{nameMissingError{kind: "rgd", listed: true, command: "why-not-ready", names: []string{"a"}, more: true},
			"which rgd? give its name too, as in kubectl kro why-not-ready rgd a (the cluster has a, and more: kubectl kro status rgd lists them)"},
		{nameMissingError{kind: "webapp", listed: true, command: "tree", namespace: "team-a"},
			"which webapp? namespace team-a has none (kubectl kro status webapp -A lists those of every namespace)"},
		{nameMissingError{kind: "tenant", listed: true, command: "tree"}, "which tenant? the cluster has none to name"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.err, got, tc.want)
		}
	}
}

func TestStatusArgsNormalizeOneInstance(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"webapp"}, []string{"webapp"}},
		{[]string{"webapp", "demo"}, []string{"webapp", "demo"}},
		{[]string{"webapp/demo"}, []string{"webapp", "demo"}},
	} {
		got, err := statusArgs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := statusArgs([]string{"webapp", "demo", "more"}); err == nil {
		t.Error("three arguments were taken")
	}
}

// resettableMapper is a REST mapper whose cached answer goes stale: after
// Reset it answers with the kind's current scope.
type resettableMapper struct {
	*meta.DefaultRESTMapper
	fresh *meta.DefaultRESTMapper
	reset int
}

func (m *resettableMapper) Reset() { m.DefaultRESTMapper, m.reset = m.fresh, m.reset+1 }

func TestAStaleMappingIsLookedUpAgain(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Tenant"}
	stale, fresh := meta.NewDefaultRESTMapper(nil), meta.NewDefaultRESTMapper(nil)
	stale.Add(gvk, meta.RESTScopeNamespace) // the kind as it was when discovery was cached
	fresh.Add(gvk, meta.RESTScopeRoot)      // recreated cluster-scoped since
	mapper := &resettableMapper{DefaultRESTMapper: stale, fresh: fresh}
	c := &cluster{mapper: mapper}
	var scopes []meta.RESTScopeName
	err := c.withMapping("tenant", func(m *meta.RESTMapping) error {
		scopes = append(scopes, m.Scope.Name())
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			// What the API server answers for a path it does not serve.
			return apierrors.NewNotFound(schema.GroupResource{}, "")
		}
		return nil
	})
	if err != nil || mapper.reset != 1 || !slices.Equal(scopes, []meta.RESTScopeName{meta.RESTScopeNameNamespace, meta.RESTScopeNameRoot}) {
		t.Errorf("err %v, resets %d, scopes tried %v", err, mapper.reset, scopes)
	}
	// A missing object is an answer, not a stale mapping.
	mapper.reset = 0
	err = c.withMapping("tenant", func(*meta.RESTMapping) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: "kro.run", Resource: "tenants"}, "acme")
	})
	if !apierrors.IsNotFound(err) || mapper.reset != 0 {
		t.Errorf("a missing object: err %v, resets %d", err, mapper.reset)
	}
}

// Every command refuses an output format it cannot print before it reads
// a file or contacts a cluster (the server here does not exist).
func TestUnknownOutputFormatIsRefusedFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tree", "webapp", "demo", "-o", "xml"}, `unknown output format "xml": use json, yaml, dot, name, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		{[]string{"why-not-ready", "webapp/demo", "-o", "dot"}, `unknown output format "dot": use json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		{[]string{"explain-conditions", "webapp", "demo", "-o", "wide"}, `unknown output format "wide": use json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		{[]string{"status", "-o", "table"}, `unknown output format "table": use json, yaml, wide, name, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		{[]string{"validate", "-f", "missing.yaml", "-o", "xml"}, `unknown output format "xml": use json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		{[]string{"dry-run", "-f", "missing.yaml", "-o", "xml"}, `unknown output format "xml": use json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
	} {
		if err := runWithoutCluster(tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestAFileWithoutDashFIsShownWithIt(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "rgd.yaml"}, "kubectl kro validate reads files with -f, not as arguments: kubectl kro validate -f rgd.yaml"},
		{[]string{"validate", "a.yaml", "b.yaml", "--offline"}, "kubectl kro validate reads files with -f, not as arguments: kubectl kro validate -f a.yaml -f b.yaml"},
		{[]string{"dry-run", "instance.yaml"}, "kubectl kro dry-run reads files with -f, not as arguments: kubectl kro dry-run -f instance.yaml"},
		{[]string{"dry-run", "-f", "a.yaml", "b.yaml"}, "kubectl kro dry-run reads files with -f, not as arguments: kubectl kro dry-run -f b.yaml"},
		{[]string{"dry-run", "a.yaml", "b.yaml"}, "kubectl kro dry-run reads files with -f, not as arguments: kubectl kro dry-run -f a.yaml -f b.yaml"},
	} {
		if err := runWithoutCluster(tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// runWithoutCluster runs kubectl kro with args against an API server
// address nothing listens on: what it returns was decided before any
// request.
func runWithoutCluster(args ...string) error {
	server := "https://127.0.0.1:1"
	flags := genericclioptions.NewConfigFlags(false)
	flags.APIServer = &server
	cmd := NewRootCommandWithFlags(flags, genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

// -f names the instance as kubectl get -f does; what it cannot name one
// from is refused before anything is asked of the cluster.
func TestInstanceFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	one := write("one.yaml", "apiVersion: kro.run/v1alpha1\nkind: WebApp\nmetadata: {name: demo, namespace: shop}\n")
	two := write("two.yaml", "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n")
	nameless := write("nameless.yaml", "{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {generateName: demo-}}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tree", "webapp", "demo", "-f", one}, "give the instance as KIND NAME or with -f, not both (got webapp demo and -f " + one + ")"},
		{[]string{"tree", "-f", dir}, dir + " is a directory: -f takes the file of one object, or give KIND NAME"},
		{[]string{"why-not-ready", "-f", two}, two + " holds 2 objects: -f takes the file of one, or give KIND NAME"},
		{[]string{"explain-conditions", "-f", nameless}, nameless + ": WebApp has no metadata.name (one made from generateName is found by KIND NAME)"},
		{[]string{"tree", "-f", one, "-n", "default"}, one + " puts WebApp demo in namespace shop, but -n names default: leave -n out, or give -n shop"},
		{[]string{"status", "webapp", "-f", one}, "give the instance as KIND NAME or with -f, not both (got webapp and -f " + one + ")"},
		{[]string{"status", "-A", "-f", one}, "-f " + one + " names one instance, in its namespace; -A lists those of every namespace: give one or the other"},
		{[]string{"status", "-f", two}, two + " holds 2 objects: -f takes the file of one, or give KIND NAME"},
	} {
		if err := runWithoutCluster(tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}

	o := &Options{Config: genericclioptions.NewConfigFlags(false)}
	cmd := NewRootCommandWithFlags(o.Config, genericiooptions.IOStreams{})
	kind, name, err := o.namedInFile(cmd, one)
	if err != nil || kind != "WebApp.v1alpha1.kro.run" || name != "demo" || *o.Config.Namespace != "shop" {
		t.Errorf("namedInFile = %q %q %v, namespace %q; want WebApp.v1alpha1.kro.run demo in shop", kind, name, err, *o.Config.Namespace)
	}
}
