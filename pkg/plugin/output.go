package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// templateFormats are the -o formats that take a template, as kubectl get
// takes them: FORMAT=TEMPLATE, or FORMAT-file=FILE. The template runs over
// the document -o json prints.
var templateFormats = []string{"jsonpath", "jsonpath-file", "go-template", "go-template-file"}

// printFlags are how a command prints: its -o format, and for a template
// format whether the template may read a key the document lacks, as
// kubectl get's --allow-missing-template-keys says.
type printFlags struct {
	output                   string
	allowMissingTemplateKeys bool
}

// addOutputFlag adds -o/--output with the formats a command prints, offers
// them to shell completion, and refuses any other, and any template that
// does not parse, before the command contacts the cluster. usage describes
// the formats when they differ in more than encoding. A command that
// prints json also prints through the template formats, and takes
// --template and --allow-missing-template-keys with them.
func addOutputFlag(cmd *cobra.Command, flags *printFlags, usage string, formats ...string) {
	output := &flags.output
	takesTemplates := slices.Contains(formats, "json")
	offered := formats
	list := strings.Join(formats[:len(formats)-1], ", ") + " or " + formats[len(formats)-1]
	if takesTemplates {
		const templates = "jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE"
		offered = slices.Clone(formats)
		for _, f := range templateFormats {
			offered = append(offered, f+"=")
		}
		list = strings.Join(formats, ", ") + ", " + templates
		if usage != "" {
			usage += "; " + templates + " print through a template over the json document, as kubectl get does"
		}
	}
	if usage == "" {
		usage = "output format: " + list
	}
	cmd.Flags().StringVarP(output, "output", "o", "", usage)
	var templateFlag string
	if takesTemplates {
		// kubectl get's spelling of the template, from before -o took
		// it: -o go-template --template '{{...}}', or --template alone.
		cmd.Flags().StringVar(&templateFlag, "template", "", "the template, or its file, of -o jsonpath, jsonpath-file, go-template or go-template-file (go-template when -o is not given), as kubectl get takes it")
		// kubectl's default: a missing key prints nothing (jsonpath) or
		// <no value> (go-template); false makes it an error, for scripts
		// that must tell a missing field from an empty one.
		cmd.Flags().BoolVar(&flags.allowMissingTemplateKeys, "allow-missing-template-keys", true, "if false, a template reading a field or key the document lacks is an error; -o jsonpath, jsonpath-file, go-template and go-template-file only")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var matching []cobra.Completion
		for _, f := range offered {
			if strings.HasPrefix(f, toComplete) {
				matching = append(matching, f)
			}
		}
		directive := cobra.ShellCompDirectiveNoFileComp
		if len(matching) > 0 && !slices.ContainsFunc(matching, func(f string) bool { return !strings.HasSuffix(f, "=") }) {
			// No space after jsonpath=: the template follows.
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return matching, directive
	})
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("template") {
			withTemplate, err := withTemplateFlag(*output, templateFlag)
			if err != nil {
				return err
			}
			*output = withTemplate
		}
		if *output != "" && !slices.Contains(formats, *output) {
			if !takesTemplates || !isTemplateFormat(*output) {
				return fmt.Errorf("unknown output format %q: use %s", *output, list)
			}
			if _, err := parseTemplate(*output, true); err != nil {
				return err
			}
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}

// withTemplateFlag is the -o format that --template gives: the template
// format named by -o, or go-template when -o is not given, with text, the
// template, after its =.
func withTemplateFlag(format, text string) (string, error) {
	if format == "" {
		format = "go-template"
	}
	name, given, hasTemplate := strings.Cut(format, "=")
	switch {
	case !slices.Contains(templateFormats, name):
		return "", fmt.Errorf("--template is the template of -o %s, not of -o %s", strings.Join(templateFormats, ", -o "), format)
	case hasTemplate && given != "":
		return "", fmt.Errorf("-o %s gives the template already; give it once, there or in --template", name)
	}
	return name + "=" + text, nil
}

// isTemplateFormat reports whether format names a template format, with
// or without its template.
func isTemplateFormat(format string) bool {
	name, _, _ := strings.Cut(format, "=")
	return slices.Contains(templateFormats, name)
}

// printTemplate prints a value through a parsed template.
type printTemplate func(w io.Writer, value any) error

// parseTemplate reads and parses the template of a template format:
// jsonpath as kubectl's (client-go's util/jsonpath), a missing key printing
// nothing; go-template as Go's text/template, a missing key printing
// <no value>, both as kubectl get prints them, unless allowMissingKeys is
// false: then a missing key is an error, as with kubectl get
// --allow-missing-template-keys=false.
func parseTemplate(format string, allowMissingKeys bool) (printTemplate, error) {
	flag, text, _ := strings.Cut(format, "=")
	if text == "" {
		return nil, fmt.Errorf("-o %s needs a template: -o %s=%s", flag, flag, templateExample(flag))
	}
	name := flag
	if file, ok := strings.CutSuffix(flag, "-file"); ok {
		b, err := os.ReadFile(text)
		if err != nil {
			return nil, fmt.Errorf("-o %s: reading the template: %w", flag, err)
		}
		name, text = file, string(b)
	}
	// Both kinds of template execute alike.
	var tmpl interface {
		Execute(w io.Writer, data any) error
	}
	var err error
	switch name {
	case "jsonpath":
		j := jsonpath.New("output").AllowMissingKeys(allowMissingKeys)
		tmpl, err = j, j.Parse(text)
	default:
		missingKey := "missingkey=default"
		if !allowMissingKeys {
			missingKey = "missingkey=error"
		}
		tmpl, err = template.New("output").Option(missingKey).Parse(text)
	}
	if err != nil {
		return nil, fmt.Errorf("-o %s: parsing the template %q: %w", flag, text, err)
	}
	return func(w io.Writer, value any) error {
		if err := tmpl.Execute(w, value); err != nil {
			return fmt.Errorf("-o %s: executing the template %q: %w", flag, text, err)
		}
		return nil
	}, nil
}

func templateExample(name string) string {
	switch name {
	case "jsonpath":
		return `'{.name}'`
	case "go-template":
		return `'{{.name}}'`
	}
	return "FILE"
}

// printObject prints v as -o json or -o yaml, or through the template of
// a template format.
func (p printFlags) printObject(w io.Writer, v any) error {
	format := p.output
	switch {
	case format == "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case format == "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case isTemplateFormat(format):
		printThrough, err := parseTemplate(format, p.allowMissingTemplateKeys)
		if err != nil {
			return err
		}
		// The template sees the json document, its field names and
		// all, as kubectl's see the object's.
		doc, err := jsonDocument(v)
		if err != nil {
			return err
		}
		return printThrough(w, doc)
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", format)
}

// jsonDocument is v as -o json prints it, decoded as unstructured data:
// what a template or a --sort-by path reads. Whole numbers decode as
// int64, as in the objects kubectl's templates see: 1000000 prints so,
// not as 1e+06, and a filter compares it with an integer.
func jsonDocument(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := utiljson.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
