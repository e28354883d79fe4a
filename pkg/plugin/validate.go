package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/manifests/crds"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/resolve"
)

// ErrInvalid makes the command exit 1 after its report is printed.
var ErrInvalid = errors.New("validation failed")

type validateOptions struct {
	*Options
	files     []string
	recursive bool
	printFlags
	offline bool
}

// ValidationResult is the outcome for one RGD, as -o json|yaml prints it.
type ValidationResult struct {
	Name             string   `json:"name"`
	File             string   `json:"file"`
	Valid            bool     `json:"valid"`
	TopologicalOrder []string `json:"topologicalOrder,omitempty"`
	Errors           []string `json:"errors,omitempty"`
	// Warnings are what the admission webhook would warn of: legal but
	// likely unmeant, or a change kro-agent would not apply.
	Warnings []string `json:"warnings,omitempty"`
	// Instances are the instances of the RGD's kind in the files, each
	// checked against the schema it generates as the API server would
	// check it on create.
	Instances []InstanceValidation `json:"instances,omitempty"`
}

// InstanceValidation is the outcome for one instance in the files of an
// RGD there.
type InstanceValidation struct {
	Name   string   `json:"name"`
	File   string   `json:"file"`
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors,omitempty"`
}

// ValidationReport is the whole output of validate.
type ValidationReport struct {
	// Cluster says where custom kinds were resolved, or why they were not.
	Cluster string             `json:"cluster"`
	Results []ValidationResult `json:"results"`
	// Unreadable names each document that is not YAML or JSON, or not an
	// object of its kind, with why: the others are validated all the same,
	// as kubectl apply -R goes on past a file it cannot read.
	Unreadable []string `json:"unreadable,omitempty"`
}

func newValidateCommand(parent *Options) *cobra.Command {
	o := &validateOptions{Options: parent}
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Validate ResourceGraphDefinitions as the admission webhook does",
		Long: `Validate runs the full RGD validation: SimpleSchema, every CEL expression compiled
and type-checked, ids, the dependency graph and the generated CRD. Built-in kinds are
checked offline; kinds from CRDs are checked through the cluster of the current
kubeconfig when it is reachable. CRDs in the given files, and the kinds the RGDs there
generate, are checked as the files declare them, as if all were applied together.
Instances in the files of an RGD there are checked against the schema it generates, as
the API server would check them on create (with its own code, offline too): fields the
schema does not declare, required fields, bounds and enums, validation rules; and their
values rendered into the templates (an expression that fails on them, such as a division
by zero, or a value of the wrong type for its field), as far as offline allows: what
reads another resource is not rendered.
Exits 1 when any RGD, or any instance of one, is invalid.`,
		Example: `  kubectl kro validate -f examples/webapp/rgd.yaml
  kubectl kro validate -f crds.yaml -f rgds.yaml
  kubectl kro validate -R -f platform/
  kubectl kro validate -f rgd.yaml --offline -o json
  cat rgd.yaml | kubectl kro validate -f -`,
		Args: filesOnly,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "file with one or more RGDs, a directory of such files, or a URL; - reads standard input")
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "R", false, "read the directories given with -f and all directories below them")
	addOutputFlag(cmd, &o.printFlags, "", "json", "yaml")
	cmd.Flags().BoolVar(&o.offline, "offline", false, "do not contact a cluster; kinds that are not built in are typed dyn")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (o *validateOptions) run(ctx context.Context) error {
	resolver, allowUnknown, where, live := o.resolver(ctx)
	// Kinds of CRDs in the files, and of the RGDs there, are checked as
	// if installed: the files are what will be applied together.
	declared := kinds.NewDeclared(resolver)
	files, err := expandDirectories(o.files, o.recursive)
	if err != nil {
		return err
	}
	var rgds []parsedRGD
	var others []fileObject
	var unreadable []string
	for _, file := range files {
		in, err := readFile(file, o.Streams.In)
		if err != nil {
			return err
		}
		rgds = append(rgds, in.rgds...)
		for _, crd := range in.crds {
			declared.Add(crd)
		}
		others = append(others, in.others...)
		unreadable = append(unreadable, in.unreadable...)
	}
	if len(rgds) == 0 && len(unreadable) > 0 {
		return errors.New(strings.Join(unreadable, "\nerror: "))
	}
	if len(rgds) == 0 {
		hint := ""
		switch {
		case !o.recursive && slices.ContainsFunc(o.files, isDirectory):
			hint = " (-R reads the directories below a directory too)"
		case len(others) > 0:
			var names []string
			for _, o := range others[:min(len(others), 3)] {
				names = append(names, o.String())
			}
			found := strings.Join(names, ", ")
			if len(others) > 3 {
				found += fmt.Sprintf(" and %d more", len(others)-3)
			}
			hint = fmt.Sprintf(", only %s: validate checks RGDs, and the instances given with them; kubectl kro dry-run -f checks an instance against the RGD the cluster serves", found)
		}
		return fmt.Errorf("%s: no ResourceGraphDefinition found%s", strings.Join(o.files, ", "), hint)
	}
	stored := storedIn(live)
	report := ValidationReport{Cluster: where, Results: make([]ValidationResult, len(rgds)), Unreadable: unreadable}
	graphs, errs := compileTogether(rgds, declared, graph.Options{AllowUnknownKinds: allowUnknown, ValidateCRD: offline.Validate})
	blame := blameInvalidKinds(rgds, errs)
	for i, err := range kindsDefinedTwice(rgds) {
		if err != nil {
			blame[i] = append(blame[i], err.Error())
		}
	}
	for i, rgd := range rgds {
		res := &report.Results[i]
		*res = ValidationResult{Name: rgd.obj.Name, File: rgd.file}
		var cerr *graph.Error
		res.Errors = blame[i]
		if rgd.err == nil {
			res.Errors = append(res.Errors, stored.immutableChanges(ctx, rgd.obj)...)
		}
		switch err := errs[i]; {
		case errors.As(err, &cerr):
			for _, e := range cerr.Errs {
				res.Errors = append(res.Errors, e.Error())
			}
		case err != nil:
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range joined.Unwrap() {
					res.Errors = append(res.Errors, e.Error())
				}
				break
			}
			res.Errors = append(res.Errors, err.Error())
		case len(res.Errors) > 0:
			// Valid alone, not with the RGD whose kind it uses, or not
			// as a change to the one the cluster has.
		default:
			res.Valid = true
			res.TopologicalOrder = graphs[i].Order()
			res.Warnings = graphs[i].Warnings()
			if w := stored.breakageWarning(ctx, rgd.obj, graphs[i]); w != "" {
				res.Warnings = append(res.Warnings, w)
			}
			res.Instances = checkInstances(ctx, graphs[i], others)
		}
	}
	if err := printValidation(o.Streams.Out, o.printFlags, report); err != nil {
		return err
	}
	for _, r := range report.Results {
		if !r.Valid || slices.ContainsFunc(r.Instances, func(i InstanceValidation) bool { return !i.Valid }) {
			return ErrInvalid
		}
	}
	if len(unreadable) > 0 {
		return ErrInvalid
	}
	return nil
}

// checkInstances checks the instances of g's kind among objs against the
// schema g generates, with the API server's own code, as it would check
// them on create (offline.Admit): fields it does not declare, required
// ones, bounds and validation rules; then what their values make of the
// templates (renderFailures).
func checkInstances(ctx context.Context, g *graph.Graph, objs []fileObject) []InstanceValidation {
	var checked []InstanceValidation
	for _, o := range objs {
		gvk := o.obj.GroupVersionKind()
		if gvk.GroupKind() != g.Instance.GroupKind() {
			continue
		}
		res := InstanceValidation{Name: displayName(o.obj), File: o.file}
		if gvk.Version != g.Instance.Version {
			res.Errors = []string{fmt.Sprintf("apiVersion: %s is not served: the RGD serves %s in %s only", gvk.GroupVersion(), gvk.Kind, g.Instance.GroupVersion())}
			checked = append(checked, res)
			continue
		}
		inst := o.obj.DeepCopy()
		if g.Namespaced && inst.GetNamespace() == "" {
			inst.SetNamespace(metav1.NamespaceDefault) // kubectl gives it its context's namespace
		}
		errs, err := offline.Admit(ctx, g.CRD, inst)
		if err != nil {
			errs = field.ErrorList{field.InternalError(nil, err)}
		}
		for _, e := range errs {
			res.Errors = append(res.Errors, e.Error())
		}
		if len(res.Errors) == 0 {
			res.Errors = renderFailures(g, inst)
		}
		res.Valid = len(res.Errors) == 0
		checked = append(checked, res)
	}
	return checked
}

// renderFailures renders g's resources from the instance inst alone, as
// kro-agent would, and says what cannot be rendered from its values: an
// expression failing on them (a division by zero, a value of the wrong
// type for its field), an includeWhen or forEach that fails, a collection
// over the default limit; each once, however many items of a collection
// fail alike. What waits on another resource, which offline does not
// exist, or on a value the instance leaves out, is not checked: kro-agent
// waits for those too.
func renderFailures(g *graph.Graph, inst *unstructured.Unstructured) []string {
	var failures []string
	fail := func(n *graph.Node, err error) {
		msg := fmt.Sprintf("resource %s: cannot be rendered from the instance's values: %v", n.ID, err)
		if !errors.Is(err, resolve.ErrPending) && !slices.Contains(failures, msg) {
			failures = append(failures, msg)
		}
	}
	scope := resolve.NewScope(g, inst.Object)
	skipped := map[string]bool{}
	for _, n := range g.Nodes {
		if skippedDependency(n, skipped) != "" {
			skipped[n.ID] = true
			continue
		}
		switch why, err := resolve.Excluded(n, scope); {
		case err != nil:
			fail(n, err)
			continue
		case why != "":
			skipped[n.ID] = true
			continue
		}
		if n.External != nil {
			continue // read from the cluster; what reads it waits
		}
		items := []resolve.Item{{Scope: scope}}
		if n.IsCollection() {
			var err error
			if items, err = resolve.Expand(n, scope, 0); err != nil {
				fail(n, err)
				continue
			}
		}
		for _, item := range items {
			resolve.RenderOr(n, item.Scope, func(_ *graph.Field, err error) any {
				fail(n, err)
				return nil
			})
		}
	}
	return failures
}

// compileTogether compiles RGDs meant to be applied together, with the
// kinds declared besides them: an RGD may use the kind another generates,
// so they are compiled in rounds until no more succeed, then once more for
// those left, with the kinds of the invalid ones resolved as if not in the
// files. It returns each RGD's graph or error (its parse error, if any).
func compileTogether(rgds []parsedRGD, declared *kinds.Declared, opts graph.Options) ([]*graph.Graph, []error) {
	graphs := make([]*graph.Graph, len(rgds))
	errs := make([]error, len(rgds))
	for i, rgd := range rgds {
		errs[i] = rgd.err
		if rgd.err == nil && rgd.obj.Spec.Schema != nil {
			declared.Expect(rgd.obj.Spec.Schema.GroupVersionKind())
		}
	}
	opts.Resolver = declared
	for progress, settled := true, false; progress || !settled; {
		if !progress {
			declared.Settle()
			settled = true
		}
		progress = false
		for i, rgd := range rgds {
			if rgd.err != nil || graphs[i] != nil {
				continue
			}
			g, err := graph.Compile(rgd.obj, opts)
			if errs[i] = err; err == nil {
				graphs[i] = g
				declared.Add(g.CRD)
				progress = true
			}
		}
	}
	return graphs, errs
}

// blameInvalidKinds says, for each RGD that uses the kind of an invalid RGD
// in the files, that it does: applied together, the other is denied, so its
// kind is never served and this one would be denied as well. Checked
// against the cluster's copy of the kind, or without checking it offline,
// it could otherwise look valid.
func blameInvalidKinds(rgds []parsedRGD, errs []error) [][]string {
	blame := make([][]string, len(rgds))
	generatedBy := map[schema.GroupKind]int{}
	for i, rgd := range rgds {
		if rgd.err == nil && rgd.obj.Spec.Schema != nil {
			generatedBy[rgd.obj.Spec.Schema.GroupVersionKind().GroupKind()] = i
		}
	}
	// Until nothing changes: an RGD blamed here makes those using its
	// kind invalid in turn.
	for changed := true; changed; {
		changed = false
		for i, rgd := range rgds {
			if rgd.err != nil {
				continue
			}
			for _, r := range rgd.obj.Spec.Resources {
				if r == nil {
					continue
				}
				gvk, ok := r.GroupVersionKind()
				j, generated := generatedBy[gvk.GroupKind()]
				if !ok || !generated || j == i || (errs[j] == nil && len(blame[j]) == 0) {
					continue
				}
				msg := fmt.Sprintf("resource %s: kind %s is generated by resourcegraphdefinition/%s, which is invalid: fix it first", r.ID, gvk.Kind, rgds[j].obj.Name)
				if !slices.Contains(blame[i], msg) {
					blame[i] = append(blame[i], msg)
					changed = true
				}
			}
		}
	}
	return blame
}

// kindsDefinedTwice refuses, as the webhook does, an RGD whose kind an RGD
// of another name earlier in the files defines: once applied, one of them
// would be denied.
func kindsDefinedTwice(rgds []parsedRGD) []error {
	errs := make([]error, len(rgds))
	first := map[schema.GroupKind]parsedRGD{}
	for i, rgd := range rgds {
		if rgd.err != nil || rgd.obj.Spec.Schema == nil {
			continue
		}
		gk := rgd.obj.Spec.Schema.GroupVersionKind().GroupKind()
		other, seen := first[gk]
		switch {
		case !seen:
			first[gk] = rgd
		case other.obj.Name != rgd.obj.Name:
			errs[i] = field.Forbidden(field.NewPath("spec", "schema", "kind"), fmt.Sprintf("the kind %s of %s is defined by resourcegraphdefinition/%s (%s) already; a kind is defined by one RGD",
				gk.Kind, gk.Group, other.obj.Name, other.file))
		}
	}
	return errs
}

// resolver picks where kinds come from: the cluster when one answers
// (built-in snapshot as a fallback), else the snapshot alone.
func (o *validateOptions) resolver(ctx context.Context) (kinds.Resolver, bool, string, *rest.Config) {
	builtin, err := kinds.Builtin()
	if err != nil {
		// The snapshot is compiled in; failing to read it is a build bug.
		panic(err)
	}
	offline := fmt.Sprintf("offline: built-in kinds of Kubernetes %s are checked, other kinds are not", kinds.BuiltinVersion())
	if o.offline {
		return builtin, true, offline, nil
	}
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return builtin, true, offline + " (no kubeconfig)", nil
	}
	cfg.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return builtin, true, offline + ": " + err.Error(), nil
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return builtin, true, offline + " (cluster unreachable: " + firstLine(err.Error()) + ")", nil
	}
	return kinds.Chain{kinds.NewDiscovery(memory.NewMemCacheClient(dc)), builtin}, false,
		fmt.Sprintf("cluster %s (Kubernetes %s)", cfg.Host, v.GitVersion), cfg
}

type parsedRGD struct {
	obj  *v1alpha1.ResourceGraphDefinition
	file string
	err  error
}

// manifestExtensions are the files a directory contributes, as kubectl
// reads them.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// expandDirectories replaces each directory among paths by the manifests in
// it, in lexical order, and those in the directories below it when
// recursive: as kubectl apply -f and -R read them.
func expandDirectories(paths []string, recursive bool) ([]string, error) {
	var files []string
	for _, path := range splitFileLists(paths) {
		info, err := os.Stat(path)
		if path == "-" || isURL(path) || (err == nil && !info.IsDir()) {
			files = append(files, path)
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the path %q does not exist", path)
		}
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(path, func(file string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && file != path && !recursive:
				return filepath.SkipDir
			case !d.IsDir() && slices.Contains(manifestExtensions, filepath.Ext(file)):
				files = append(files, file)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func isDirectory(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// fileContents is what validate reads in one file: the RGDs, the CRDs
// their kinds may come from, and other objects, among them instances of
// the RGDs.
type fileContents struct {
	rgds   []parsedRGD
	crds   []*extv1.CustomResourceDefinition
	others []fileObject
	// unreadable says, for each document that could not be read, which
	// and why.
	unreadable []string
}

// readFile reads every ResourceGraphDefinition and CustomResourceDefinition
// in a multi-document YAML or JSON file. RGDs are read strictly: an unknown
// field is an error, as the API server's strict field validation would
// say. Other kinds are skipped. A document that cannot be read (a Helm
// template among the manifests, say) is named in unreadable, and the rest
// of the file is read; the error is for a file that cannot be read at all.
func readFile(file string, stdin io.Reader) (fileContents, error) {
	var in fileContents
	data, err := readInput(file, stdin)
	if err != nil {
		return in, err
	}
	for _, doc := range yamlDocuments(data) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc.data, &meta); err != nil {
			in.unreadable = append(in.unreadable, doc.failed(file, err).Error())
			continue
		}
		switch gv, _ := schema.ParseGroupVersion(meta.APIVersion); {
		case gv.WithKind(meta.Kind).GroupKind() == v1alpha1.ResourceGraphDefinitionGroupKind:
			rgd, errs := decodeRGD(doc.data)
			for j, err := range errs {
				errs[j] = fmt.Errorf("document %d: %w", doc.number, doc.explain(err))
			}
			in.rgds = append(in.rgds, parsedRGD{obj: rgd, file: file, err: errors.Join(errs...)})
		case meta.Kind == "CustomResourceDefinition" && gv == extv1.SchemeGroupVersion:
			crd := &extv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(doc.data, crd); err != nil {
				in.unreadable = append(in.unreadable, doc.failed(file, err).Error())
				continue
			}
			in.crds = append(in.crds, crd)
		case meta.Kind != "":
			obj, err := decodeObject(doc.data)
			if err != nil {
				in.unreadable = append(in.unreadable, doc.failed(file, err).Error())
				continue
			}
			in.others = append(in.others, fileObject{obj: &unstructured.Unstructured{Object: obj}, file: file})
		}
	}
	return in, nil
}

// fileObject is an object read from file that is neither an RGD nor a CRD.
type fileObject struct {
	obj  *unstructured.Unstructured
	file string
}

func (f fileObject) String() string {
	return strings.TrimSpace(f.obj.GetKind() + " " + f.obj.GetName())
}

// decodeRGD reads an RGD as the API server's strict field validation
// does: a key given twice is an error (with its line), and so is each
// unknown field, named by its path as the API server names it, with a
// resource's id in place of its index. A value of the wrong type (a
// readyWhen written as one string rather than a list) is named as the API
// server names it, checking the RGD against its CustomResourceDefinition,
// at every field where it is wrong; so is a name, label or annotation the
// API server refuses.
func decodeRGD(doc []byte) (*v1alpha1.ResourceGraphDefinition, []error) {
	rgd := &v1alpha1.ResourceGraphDefinition{}
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		_ = yaml.Unmarshal(doc, rgd) // for its name, in the report
		return rgd, []error{err}
	}
	strict, err := json.UnmarshalStrict(data, rgd, json.DisallowUnknownFields)
	if err != nil {
		// Go's decoder names the first wrong value by the Go type's
		// field, without its index; what the API server would say is
		// what to correct. (The decoder fills in the rest, the name and
		// the ids among it.)
		strict = schemaErrors(data)
		if len(strict) == 0 {
			return rgd, []error{err}
		}
	} else {
		// The webhook sees only names the API server took: a name that
		// is not one (WebApp) is refused before it.
		rgd.Namespace = "" // taken away, as of any cluster-scoped object
		for _, e := range metavalidation.ValidateObjectMetaAccessor(rgd, false, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata")) {
			strict = append(strict, e)
		}
	}
	for i, e := range strict {
		msg := resourceIndex.ReplaceAllStringFunc(e.Error(), func(m string) string {
			n := resourceAt(m)
			if n < len(rgd.Spec.Resources) && rgd.Spec.Resources[n] != nil && rgd.Spec.Resources[n].ID != "" {
				return "spec.resources[" + rgd.Spec.Resources[n].ID + "]"
			}
			return m
		})
		strict[i] = errors.New(msg)
	}
	return rgd, strict
}

var resourceIndex = regexp.MustCompile(`spec\.resources\[(\d+)\]`)

// resourceAt is the index of the resource a path is in, or -1.
func resourceAt(path string) int {
	m := resourceIndex.FindStringSubmatch(path)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// schemaErrors checks an RGD, as JSON, against the schema of the
// ResourceGraphDefinition CRD, as the API server does on create.
func schemaErrors(data []byte) []error {
	crd, err := crds.ResourceGraphDefinitions()
	if err != nil {
		return []error{fmt.Errorf("reading the ResourceGraphDefinition CRD kubectl kro was built with: %w", err)}
	}
	obj := map[string]any{}
	if err := json.UnmarshalCaseSensitivePreserveInts(data, &obj); err != nil {
		return nil
	}
	errs, err := offline.Admit(context.Background(), crd, &unstructured.Unstructured{Object: obj})
	if err != nil {
		return []error{err}
	}
	// The schema's validator walks maps in no set order: resource by
	// resource, then by path, makes one order of every run.
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(cmp.Compare(resourceAt(a.Field), resourceAt(b.Field)), strings.Compare(a.Field, b.Field))
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		forEachWrittenAsItsList(e, obj)
		out[i] = e
	}
	return out
}

// forEachWrittenAsItsList adds to the error of a forEach written as the
// expression of its list (forEach: ${schema.spec.regions}) how to write it:
// a list of iterators, each naming the values of a list.
func forEachWrittenAsItsList(e *field.Error, obj map[string]any) {
	n := resourceAt(e.Field)
	if n < 0 || !strings.HasSuffix(e.Field, "].forEach") || e.Type != field.ErrorTypeTypeInvalid {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	resources, _ := spec["resources"].([]any)
	if n >= len(resources) {
		return
	}
	resource, _ := resources[n].(map[string]any)
	if list, ok := resource["forEach"].(string); ok && strings.Contains(list, "${") {
		e.Detail += fmt.Sprintf(": forEach is a list of iterators, each naming the values of a list: write [{item: %q}], and read each value as ${item}", list)
	}
}

func printValidation(w io.Writer, p printFlags, report ValidationReport) error {
	if p.output != "" {
		return p.printObject(w, report)
	}
	fmt.Fprintf(w, "Kinds resolved: %s\n", report.Cluster)
	for _, u := range report.Unreadable {
		fmt.Fprintf(w, "not read: %s\n", strings.ReplaceAll(u, "\n", "\n  "))
	}
	for _, r := range report.Results {
		if r.Valid {
			order := strings.Join(r.TopologicalOrder, " -> ")
			if order == "" {
				order = "none (no resources)"
			}
			fmt.Fprintf(w, "resourcegraphdefinition/%s (%s): valid\n  topological order: %s\n", r.Name, r.File, order)
			for _, warning := range r.Warnings {
				fmt.Fprintf(w, "  warning: %s\n", warning)
			}
			for _, inst := range r.Instances {
				if inst.Valid {
					fmt.Fprintf(w, "  instance %s (%s): valid\n", inst.Name, inst.File)
					continue
				}
				fmt.Fprintf(w, "  instance %s (%s): %d error(s)\n", inst.Name, inst.File, len(inst.Errors))
				for _, e := range inst.Errors {
					fmt.Fprintf(w, "    - %s\n", strings.ReplaceAll(e, "\n", "\n      "))
				}
			}
			continue
		}
		name := r.Name
		if name == "" {
			name = "<unnamed>" // a document that could not be read as an RGD
		}
		fmt.Fprintf(w, "resourcegraphdefinition/%s (%s): %d error(s)\n", name, r.File, len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(e, "\n", "\n    "))
		}
	}
	return nil
}

// storedReader reads what a cluster stores, for the warnings of changes
// that would break it; its zero value, offline, reads nothing.
type storedReader struct {
	dyn      dynamic.Interface
	metadata metadata.Interface
}

// storedIn is the reader of the cluster live, or of none when validate is
// offline (live nil) or cannot reach it.
func storedIn(live *rest.Config) storedReader {
	if live == nil {
		return storedReader{}
	}
	dyn, err := dynamic.NewForConfig(live)
	if err != nil {
		return storedReader{}
	}
	mc, err := metadata.NewForConfig(live)
	if err != nil {
		return storedReader{}
	}
	return storedReader{dyn: dyn, metadata: mc}
}

// immutableChanges are the errors, as the admission webhook denies them,
// of changing what names the generated API of the RGD of rgd's name the
// cluster has; none offline, or when it cannot be read.
func (r storedReader) immutableChanges(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) []string {
	if r.dyn == nil || rgd.Name == "" {
		return nil
	}
	old, err := readRGD(ctx, r.dyn, rgd.Name)
	if err != nil {
		return nil
	}
	return immutableChanges(old, rgd)
}

// immutableChanges are the errors, as the admission webhook denies them,
// of changing what names the generated API of old to rgd.
func immutableChanges(old, rgd *v1alpha1.ResourceGraphDefinition) []string {
	var out []string
	for _, e := range graph.ImmutableChanges(old, rgd) {
		out = append(out, e.Error())
	}
	return out
}

// breakageWarning warns, as the admission webhook does, of a schema change
// that would break the instances the cluster stores; "" when there is none,
// offline, or when what is stored cannot be read.
func (r storedReader) breakageWarning(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph) string {
	if g.CRD == nil {
		return ""
	}
	current := r.crd(ctx, g.CRD.Name)
	if current == nil {
		return ""
	}
	return g.BreakageWarning(rgd, current, r.holdsInstances(ctx, current))
}

// crd is the CRD of the given name the cluster serves now; nil offline, or
// when it cannot be read.
func (r storedReader) crd(ctx context.Context, name string) *extv1.CustomResourceDefinition {
	if r.dyn == nil {
		return nil
	}
	u, err := r.dyn.Resource(kinds.CRDResource).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	crd := &extv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil
	}
	return crd
}

// holdsInstances says whether the cluster stores an instance of a kind
// crd serves, as Graph.BreakageWarning asks.
func (r storedReader) holdsInstances(ctx context.Context, crd *extv1.CustomResourceDefinition) func(schema.GroupVersionKind) bool {
	return func(gvk schema.GroupVersionKind) bool {
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: crd.Spec.Names.Plural}
		stored, err := r.metadata.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(stored.Items) > 0
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
