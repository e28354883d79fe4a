package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"sigs.k8s.io/yaml"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// ErrInvalid makes the command exit 1 after its report is printed.
var ErrInvalid = errors.New("validation failed")

type validateOptions struct {
	*Options
	files   []string
	output  string
	offline bool
}

// ValidationResult is the outcome for one RGD, as -o json|yaml prints it.
type ValidationResult struct {
	Name             string   `json:"name"`
	File             string   `json:"file"`
	Valid            bool     `json:"valid"`
	TopologicalOrder []string `json:"topologicalOrder,omitempty"`
	Errors           []string `json:"errors,omitempty"`
}

// ValidationReport is the whole output of validate.
type ValidationReport struct {
	// Cluster says where custom kinds were resolved, or why they were not.
	Cluster string             `json:"cluster"`
	Results []ValidationResult `json:"results"`
}

func newValidateCommand(parent *Options) *cobra.Command {
	o := &validateOptions{Options: parent}
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Validate ResourceGraphDefinitions as the admission webhook does",
		Long: `Validate runs the full RGD validation: SimpleSchema, every CEL expression compiled
and type-checked, ids, the dependency graph and the generated CRD. Built-in kinds are
checked offline; kinds from CRDs are checked through the cluster of the current
kubeconfig when it is reachable. Exits 1 when any RGD is invalid.`,
		Example: `  kubectl kro validate -f examples/webapp/rgd.yaml
  kubectl kro validate -f rgd.yaml --offline -o json
  cat rgd.yaml | kubectl kro validate -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringSliceVarP(&o.files, "filename", "f", nil, "file with one or more RGDs; - reads standard input")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: json or yaml")
	cmd.Flags().BoolVar(&o.offline, "offline", false, "do not contact a cluster; kinds that are not built in are typed dyn")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (o *validateOptions) run(ctx context.Context) error {
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("--output must be json or yaml, not %q", o.output)
	}
	resolver, allowUnknown, where := o.resolver(ctx)
	report := ValidationReport{Cluster: where}
	for _, file := range o.files {
		rgds, err := readRGDs(file, o.Streams.In)
		if err != nil {
			return err
		}
		for _, rgd := range rgds {
			res := ValidationResult{Name: rgd.obj.Name, File: file}
			if rgd.err != nil {
				res.Errors = []string{rgd.err.Error()}
				report.Results = append(report.Results, res)
				continue
			}
			g, err := graph.Compile(rgd.obj, graph.Options{Resolver: resolver, AllowUnknownKinds: allowUnknown, ValidateCRD: offline.Validate})
			var cerr *graph.Error
			switch {
			case errors.As(err, &cerr):
				for _, e := range cerr.Errs {
					res.Errors = append(res.Errors, e.Error())
				}
			case err != nil:
				res.Errors = []string{err.Error()}
			default:
				res.Valid = true
				res.TopologicalOrder = g.Order()
			}
			report.Results = append(report.Results, res)
		}
	}
	if err := printValidation(o.Streams.Out, o.output, report); err != nil {
		return err
	}
	for _, r := range report.Results {
		if !r.Valid {
			return ErrInvalid
		}
	}
	return nil
}

// resolver picks where kinds come from: the cluster when one answers
// (built-in snapshot as a fallback), else the snapshot alone.
func (o *validateOptions) resolver(ctx context.Context) (kinds.Resolver, bool, string) {
	builtin, err := kinds.Builtin()
	if err != nil {
		// The snapshot is compiled in; failing to read it is a build bug.
		panic(err)
	}
	offline := fmt.Sprintf("offline: built-in kinds of Kubernetes %s are checked, other kinds are not", kinds.BuiltinVersion())
	if o.offline {
		return builtin, true, offline
	}
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return builtin, true, offline + " (no kubeconfig)"
	}
	cfg.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return builtin, true, offline + ": " + err.Error()
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return builtin, true, offline + " (cluster unreachable: " + firstLine(err.Error()) + ")"
	}
	return kinds.Chain{kinds.NewDiscovery(memory.NewMemCacheClient(dc)), builtin}, false,
		fmt.Sprintf("cluster %s (Kubernetes %s)", cfg.Host, v.GitVersion)
}

type parsedRGD struct {
	obj *v1alpha1.ResourceGraphDefinition
	err error
}

// readRGDs reads every ResourceGraphDefinition in a multi-document YAML or
// JSON file, strictly: an unknown field is an error, as the API server's
// strict field validation would say. Other kinds are skipped.
func readRGDs(file string, stdin io.Reader) ([]parsedRGD, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []parsedRGD
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		gv, _ := schema.ParseGroupVersion(meta.APIVersion)
		if meta.Kind != "ResourceGraphDefinition" || gv.Group != v1alpha1.GroupVersion.Group {
			continue
		}
		rgd := &v1alpha1.ResourceGraphDefinition{}
		if err := yaml.UnmarshalStrict(doc, rgd); err != nil {
			out = append(out, parsedRGD{obj: rgd, err: fmt.Errorf("document %d: %w", i+1, err)})
			continue
		}
		out = append(out, parsedRGD{obj: rgd})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no ResourceGraphDefinition found", file)
	}
	return out, nil
}

func printValidation(w io.Writer, format string, report ValidationReport) error {
	if format != "" {
		return printObject(w, format, report)
	}
	fmt.Fprintf(w, "Kinds resolved: %s\n", report.Cluster)
	for _, r := range report.Results {
		if r.Valid {
			fmt.Fprintf(w, "resourcegraphdefinition/%s (%s): valid\n  topological order: %s\n", r.Name, r.File, strings.Join(r.TopologicalOrder, " -> "))
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

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
