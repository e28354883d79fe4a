//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/plugin"
)

// upstreamKro is the release of upstream kro whose own end-to-end suite
// (test/e2e/chainsaw in its module) kro-agent is held to: the release the
// README's "Differences from upstream kro" was written against.
const upstreamKro = "v0.9.4"

// upstreamDifferences are the places where kro-agent answers upstream's
// suite otherwise on purpose, each with why (README, "Differences from
// upstream kro"). An assertion that fails anywhere else fails the test, and
// so does a difference listed here that the suite no longer runs into.
var upstreamDifferences = []struct {
	kind string
	path *regexp.Regexp
	why  string
	seen bool
}{
	{kind: "ResourceGraphDefinition", path: regexp.MustCompile(`^\.metadata\.finalizers$`),
		why: "an RGD carries no finalizer unless the agent runs with --allow-crd-deletion"},
	{kind: "CustomResourceDefinition", path: regexp.MustCompile(`^\.spec\.versions\[\d+\]\.additionalPrinterColumns\[\d+\]\.description$`),
		why: "the default printer columns are described in other words"},
	{kind: "CustomResourceDefinition", path: regexp.MustCompile(`\.x-kubernetes-validations\[\d+\]\.message$`),
		why: "a validation marker's rule carries no message of its own, so a refusal quotes the rule"},
}

// TestUpstreamSuite runs upstream kro's own end-to-end suite against
// kro-agent: every test of its test/e2e/chainsaw, step by step, as the
// chainsaw tool would (apply, assert, error, delete, wait), each in a
// namespace of its own. Its RGDs, instances and the objects it expects are
// upstream's files as released; only upstreamDifferences may differ.
func TestUpstreamSuite(t *testing.T) {
	suite := filepath.Join(upstreamModule(t), "test", "e2e", "chainsaw")
	tests, err := filepath.Glob(filepath.Join(suite, "*", "chainsaw-test.yaml"))
	if err != nil || len(tests) < 10 {
		t.Fatalf("upstream kro %s's chainsaw tests in %s: found %d (%v)", upstreamKro, suite, len(tests), err)
	}
	f := features.New("upstream kro's end-to-end suite passes against kro-agent").
		Setup(func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			startAgent(t, cfg)
			return ctx
		})
	for _, file := range tests {
		dir := filepath.Dir(file)
		name := filepath.Base(dir)
		f = f.Assess(name, func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			r := &chainsawRun{t: t, c: newClients(t, cfg), dir: dir, ns: "upstream-" + name}
			if len(r.ns) > 63 {
				r.ns = r.ns[:63]
			}
			namespace(t, r.c, r.ns)
			t.Cleanup(r.cleanUp)
			r.run(readChainsawTest(t, file))
			return ctx
		})
	}
	f = f.Assess("every listed difference from upstream still shows", func(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
		for _, d := range upstreamDifferences {
			if !d.seen {
				t.Errorf("no upstream assertion ran into %s %s (%s): take it off upstreamDifferences", d.kind, d.path, d.why)
			}
		}
		return ctx
	})
	testenv.Test(t, f.Feature())
}

// upstreamRefusal is an error message kro-agent refuses an upstream
// example with, and why.
type upstreamRefusal struct {
	pattern *regexp.Regexp
	why     string
}

// upstreamRefusals are why kro-agent refuses some of upstream's examples
// (README, "Differences from upstream kro").
var upstreamRefusals = []upstreamRefusal{
	{regexp.MustCompile(`unknown marker "\w+": a value written without quotes ends at the first space`), "a default of several words needs quotes (kro refuses it too)"},
	{regexp.MustCompile(`is embedded in text, so it must be a string, but has type bool`), "a value embedded in text must be a string"},
	{regexp.MustCompile(`expression has type bool, but the field expects string`), "an expression's type must fit its field"},
	{regexp.MustCompile(`undeclared reference to 'spc'`), "an expression naming an unknown resource (kro refuses it too)"},
	{regexp.MustCompile(`unknown field "spec\.resources\[\w+\]\.externalRef\.(name|namespace)"`), "a field an RGD does not have (kro refuses it too)"},
	{regexp.MustCompile(`key "\w+" already set in map`), "a key given twice, which validate reads in the file (kubectl keeps the last without a word)"},
}

// TestUpstreamExamples validates every RGD among upstream kro's examples,
// file by file, as kubectl kro validate --offline does (kinds that are not
// built in typed dyn): each is valid, or refused only for the reasons of
// upstreamRefusals, each of which still shows.
func TestUpstreamExamples(t *testing.T) {
	examples := filepath.Join(upstreamModule(t), "examples")
	f := features.New("upstream kro's example RGDs are valid, or refused as the README says").
		Assess("every example RGD", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			used := make([]bool, len(upstreamRefusals))
			validated := 0
			err := filepath.WalkDir(examples, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(path)) {
					return err
				}
				raw, err := os.ReadFile(path)
				if err != nil || !strings.Contains(string(raw), "kind: ResourceGraphDefinition") {
					return err
				}
				name, _ := filepath.Rel(examples, path)
				out, err := kroStdout(t, cfg, "validate", "--offline", "-o", "json", "-f", path)
				if err != nil && strings.Contains(err.Error(), "no ResourceGraphDefinition found") {
					return nil // the experimental Graph kind's examples, which write RGDs in their templates
				}
				var report plugin.ValidationReport
				if jerr := json.Unmarshal([]byte(out), &report); jerr != nil {
					t.Errorf("%s: %v (%v):\n%s", name, jerr, err, out)
					return nil
				}
				for _, u := range report.Unreadable {
					t.Errorf("%s: not read: %s", name, u)
				}
				for _, r := range report.Results {
					validated++
					for _, e := range r.Errors {
						i := slices.IndexFunc(upstreamRefusals, func(r upstreamRefusal) bool { return r.pattern.MatchString(e) })
						if i < 0 {
							t.Errorf("%s: refused for a reason the README does not give: %s", name, e)
							continue
						}
						used[i] = true
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if validated < 40 {
				t.Errorf("validated %d example RGDs in %s, want at least 40", validated, examples)
			}
			for i, r := range upstreamRefusals {
				if !used[i] {
					t.Errorf("no example was refused for %s (%s): take it off upstreamRefusals", r.why, r.pattern)
				}
			}
			return ctx
		})
	testenv.Test(t, f.Feature())
}

// upstreamModule downloads upstream kro's module, as make bench does to
// build it, and returns its directory.
func upstreamModule(t *testing.T) string {
	t.Helper()
	module := "github.com/kubernetes-sigs/kro@" + upstreamKro
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go mod download -json %s: %v\n%s%s", module, err, out, stderr)
	}
	var dl struct{ Dir string }
	if err := json.Unmarshal(out, &dl); err != nil || dl.Dir == "" {
		t.Fatalf("go mod download -json %s printed no directory: %v\n%s", module, err, out)
	}
	return dl.Dir
}

// chainsawTest is the part of a chainsaw Test the upstream suite uses.
// Decoding is strict: an operation this runner does not know fails the
// test rather than being skipped.
type chainsawTest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Description string `json:"description"`
		Steps       []struct {
			Name string       `json:"name"`
			Try  []chainsawOp `json:"try"`
			// Collecting kro's pod logs on failure, and sleeping: nothing
			// to do here, where assertions wait for what they expect.
			Catch   []chainsawAside `json:"catch"`
			Finally []chainsawAside `json:"finally"`
		} `json:"steps"`
	} `json:"spec"`
}

type chainsawFile struct {
	File string `json:"file"`
}

type chainsawRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
}

type chainsawOp struct {
	Description string        `json:"description"`
	Apply       *chainsawFile `json:"apply"`
	Assert      *chainsawFile `json:"assert"`
	Error       *chainsawFile `json:"error"`
	Delete      *struct {
		Ref chainsawRef `json:"ref"`
	} `json:"delete"`
	Wait *struct {
		chainsawRef `json:",inline"`
		Timeout     string `json:"timeout"`
		For         struct {
			JSONPath struct {
				Path  string `json:"path"`
				Value string `json:"value"`
			} `json:"jsonPath"`
		} `json:"for"`
	} `json:"wait"`
}

type chainsawAside struct {
	Description string `json:"description"`
	PodLogs     *struct {
		Selector  string `json:"selector"`
		Namespace string `json:"namespace"`
	} `json:"podLogs"`
	Sleep *struct {
		Duration string `json:"duration"`
	} `json:"sleep"`
}

func readChainsawTest(t *testing.T, file string) *chainsawTest {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ct := &chainsawTest{}
	if err := yaml.UnmarshalStrict(raw, ct); err != nil {
		t.Fatalf("%s: %v (an operation this runner does not know?)", file, err)
	}
	return ct
}

// chainsawRun runs one upstream test in its namespace.
type chainsawRun struct {
	t       *testing.T
	c       *clients
	dir, ns string
	// applied lists what the test applied, to delete it afterwards in
	// reverse order: instances before their RGDs.
	applied []*unstructured.Unstructured
}

const chainsawTimeout = 60 * time.Second

func (r *chainsawRun) run(ct *chainsawTest) {
	for _, step := range ct.Spec.Steps {
		for _, op := range step.Try {
			what := fmt.Sprintf("step %q, %s", step.Name, op.Description)
			switch {
			case op.Apply != nil:
				for _, u := range r.objects(op.Apply.File) {
					r.apply(what, u)
				}
			case op.Assert != nil:
				for _, want := range r.objects(op.Assert.File) {
					r.assert(what+" ("+op.Assert.File+")", want)
				}
			case op.Error != nil:
				for _, want := range r.objects(op.Error.File) {
					r.assertNot(what+" ("+op.Error.File+")", want)
				}
			case op.Delete != nil:
				r.delete(what, op.Delete.Ref)
			case op.Wait != nil:
				r.wait(what, op.Wait.chainsawRef, op.Wait.For.JSONPath.Path, op.Wait.For.JSONPath.Value)
			default:
				r.t.Fatalf("%s: an operation this runner does not know", what)
			}
		}
	}
}

// objects reads a file of the test's directory, each object in the test's
// namespace unless it names one or its kind is cluster-scoped.
func (r *chainsawRun) objects(file string) []*unstructured.Unstructured {
	r.t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.dir, file))
	if err != nil {
		r.t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(raw), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			r.t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if r.namespaced(u.GetAPIVersion(), u.GetKind()) {
			if u.GetNamespace() == "" {
				u.SetNamespace(r.ns)
			}
		} else {
			u.SetNamespace("")
		}
		out = append(out, u)
	}
	return out
}

// namespaced says whether a kind is namespaced, once its API is served.
func (r *chainsawRun) namespaced(apiVersion, kind string) bool {
	r.t.Helper()
	r.c.resource(r.t, apiVersion, kind) // waits until the kind is served
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		r.t.Fatal(err)
	}
	m, err := r.c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		r.t.Fatal(err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}

func (r *chainsawRun) apply(what string, u *unstructured.Unstructured) {
	r.t.Helper()
	out, err := r.c.applyObject(r.t, u)
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
	if !slices.ContainsFunc(r.applied, func(a *unstructured.Unstructured) bool { return sameObject(a, out) }) {
		r.applied = append(r.applied, out)
	}
}

func sameObject(a, b *unstructured.Unstructured) bool {
	return a.GroupVersionKind() == b.GroupVersionKind() && a.GetNamespace() == b.GetNamespace() && a.GetName() == b.GetName()
}

// assert waits until the object want names exists and holds what want
// says, apart from the listed differences.
func (r *chainsawRun) assert(what string, want *unstructured.Unstructured) {
	r.t.Helper()
	eventually(r.t, chainsawTimeout, fmt.Sprintf("%s: %s %s to be as expected", what, want.GetKind(), want.GetName()), func() (bool, string) {
		mismatches, err := r.mismatches(want)
		if err != nil {
			return false, err.Error()
		}
		return len(mismatches) == 0, strings.Join(mismatches, "; ")
	})
}

// assertNot waits until no object matches want: chainsaw's error
// operation.
func (r *chainsawRun) assertNot(what string, want *unstructured.Unstructured) {
	r.t.Helper()
	eventually(r.t, chainsawTimeout, fmt.Sprintf("%s: %s %s not to be as described", what, want.GetKind(), want.GetName()), func() (bool, string) {
		mismatches, err := r.mismatches(want)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return len(mismatches) > 0, "it matches"
	})
}

// mismatches compares the object want names with want, as chainsaw does:
// every field want has must be there with that value; a list must have as
// many items, each matching; a key in parentheses is an expression (only
// the one upstream's suite uses is known).
func (r *chainsawRun) mismatches(want *unstructured.Unstructured) ([]string, error) {
	got, err := r.c.get(r.t, want.GetAPIVersion(), want.GetKind(), want.GetNamespace(), want.GetName())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range partialMatch(r.t, plainJSON(r.t, want.Object), plainJSON(r.t, got.Object), "") {
		if !r.expectedDifference(want.GetKind(), m.path) {
			out = append(out, m.String())
		}
	}
	return out, nil
}

func (r *chainsawRun) expectedDifference(kind, path string) bool {
	for i := range upstreamDifferences {
		d := &upstreamDifferences[i]
		if d.kind == kind && d.path.MatchString(path) {
			d.seen = true
			return true
		}
	}
	return false
}

// plainJSON gives a value as encoding/json decodes it, so that numbers from
// YAML and from the API server compare equal.
func plainJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type mismatch struct{ path, problem string }

func (m mismatch) String() string { return m.path + ": " + m.problem }

// readyConditions is the one expression upstream's assertions use: the
// conditions of type Ready.
var readyConditions = regexp.MustCompile(`^\(conditions\[\?type == '([A-Za-z]+)'\]\)$`)

func partialMatch(t *testing.T, want, got any, path string) []mismatch {
	switch want := want.(type) {
	case map[string]any:
		gotMap, ok := got.(map[string]any)
		if !ok {
			return []mismatch{{path, fmt.Sprintf("want an object, got %v", got)}}
		}
		var out []mismatch
		for k, v := range want {
			if strings.HasPrefix(k, "(") {
				m := readyConditions.FindStringSubmatch(k)
				if m == nil {
					t.Fatalf("%s: upstream's assertion uses the expression %s, which this runner does not evaluate", path, k)
				}
				var matching []any
				conds, _ := gotMap["conditions"].([]any)
				for _, c := range conds {
					if c, _ := c.(map[string]any); c["type"] == m[1] {
						matching = append(matching, c)
					}
				}
				out = append(out, partialMatch(t, v, matching, path+".conditions[type="+m[1]+"]")...)
				continue
			}
			gv, ok := gotMap[k]
			if !ok {
				out = append(out, mismatch{path + "." + k, "missing"})
				continue
			}
			out = append(out, partialMatch(t, v, gv, path+"."+k)...)
		}
		return out
	case []any:
		gotList, ok := got.([]any)
		if !ok || len(gotList) != len(want) {
			return []mismatch{{path, fmt.Sprintf("want %d items, got %v", len(want), got)}}
		}
		var out []mismatch
		for i := range want {
			out = append(out, partialMatch(t, want[i], gotList[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []mismatch{{path, fmt.Sprintf("want %v, got %v", want, got)}}
		}
		return nil
	}
}

func (r *chainsawRun) delete(what string, ref chainsawRef) {
	r.t.Helper()
	ns := ref.Namespace
	if !r.namespaced(ref.APIVersion, ref.Kind) {
		ns = ""
	}
	ri := r.c.resource(r.t, ref.APIVersion, ref.Kind).Namespace(ns)
	if err := ri.Delete(context.Background(), ref.Name, metav1.DeleteOptions{}); err != nil {
		r.t.Fatalf("%s: deleting %s %s: %v", what, ref.Kind, ref.Name, err)
	}
	eventually(r.t, chainsawTimeout, fmt.Sprintf("%s: %s %s to be gone", what, ref.Kind, ref.Name), func() (bool, string) {
		_, err := ri.Get(context.Background(), ref.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// wait waits until a JSONPath of the object has the value; the namespace
// "($namespace)" is chainsaw's for the test's own.
func (r *chainsawRun) wait(what string, ref chainsawRef, path, value string) {
	r.t.Helper()
	jp := jsonpath.New("wait")
	if err := jp.Parse(path); err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
	ns := ref.Namespace
	if ns == "($namespace)" || ns == "" {
		ns = r.ns
	}
	eventually(r.t, chainsawTimeout, fmt.Sprintf("%s: %s of %s %s to be %s", what, path, ref.Kind, ref.Name, value), func() (bool, string) {
		u, err := r.c.get(r.t, ref.APIVersion, ref.Kind, ns, ref.Name)
		if err != nil {
			return false, err.Error()
		}
		var b strings.Builder
		if err := jp.Execute(&b, u.Object); err != nil {
			return false, err.Error()
		}
		return b.String() == value, b.String()
	})
}

// cleanUp deletes what the test applied, last first, each gone before the
// next (an instance's objects before its RGD), and the CRDs of its RGDs,
// which kro-agent keeps.
func (r *chainsawRun) cleanUp() {
	var generated []string
	for _, u := range slices.Backward(r.applied) {
		switch u.GetKind() {
		case "CustomResourceDefinition":
			r.c.deleteCRD(r.t, u.GetName())
			continue
		case "ResourceGraphDefinition":
			crds, err := r.c.resource(r.t, "apiextensions.k8s.io/v1", "CustomResourceDefinition").List(context.Background(),
				metav1.ListOptions{LabelSelector: v1alpha1.LabelRGDName + "=" + u.GetName()})
			if err != nil {
				r.t.Fatalf("listing the CRD of RGD %s: %v", u.GetName(), err)
			}
			for _, crd := range crds.Items {
				generated = append(generated, crd.GetName())
			}
		}
		r.c.deleteAll(r.t, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
	}
	for _, name := range generated {
		r.c.deleteCRD(r.t, name)
	}
}
