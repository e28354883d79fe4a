package plugin

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// The template formats run over the document -o json prints, with whole
// numbers as integers (printed as written, compared in filters) and a
// missing key printing what kubectl's templates print for one.
func TestTemplateFormatsPrintTheJSONDocument(t *testing.T) {
	rows := []InstanceStatusRow{
		{Kind: "WebApp", Name: "shop", State: "ACTIVE"},
		{Kind: "WebApp", Name: "blog", State: "IN_PROGRESS"},
	}
	big := map[string]any{"replicas": 1000000, "items": []map[string]any{{"name": "a", "size": 2}, {"name": "b", "size": 3}}}
	file := filepath.Join(t.TempDir(), "names.tmpl")
	if err := os.WriteFile(file, []byte(`{range [*]}{.name}{"\n"}{end}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format string
		value  any
		want   string
	}{
		{`jsonpath={range [*]}{.name}={.state}{"\n"}{end}`, rows, "shop=ACTIVE\nblog=IN_PROGRESS\n"},
		{`jsonpath={[?(@.state=="ACTIVE")].name}`, rows, "shop"},
		{`jsonpath={[*].missing}`, rows, ""},
		{"jsonpath-file=" + file, rows, "shop\nblog\n"},
		{`jsonpath={.replicas}`, big, "1000000"},
		{`jsonpath={.items[?(@.size==3)].name}`, big, "b"},
		{`go-template={{range .}}{{.name}} {{.missing}}{{"\n"}}{{end}}`, rows, "shop <no value>\nblog <no value>\n"},
		{`go-template={{.replicas}}`, big, "1000000"},
	} {
		var out strings.Builder
		if err := (printFlags{output: tc.format, allowMissingTemplateKeys: true}).printObject(&out, tc.value); err != nil {
			t.Errorf("-o %s: %v", tc.format, err)
			continue
		}
		if out.String() != tc.want {
			t.Errorf("-o %s printed %q, want %q", tc.format, out.String(), tc.want)
		}
	}
}

// With --allow-missing-template-keys=false a template reading a key the
// document lacks fails, naming the template, as kubectl get's does; a key
// that is there prints as before.
func TestMissingTemplateKeysCanBeErrors(t *testing.T) {
	rows := []InstanceStatusRow{{Kind: "WebApp", Name: "shop", State: "ACTIVE"}}
	for _, tc := range []struct {
		format, want string
	}{
		{`jsonpath={[*].missing}`, `-o jsonpath: executing the template "{[*].missing}": missing is not found`},
		{`go-template={{range .}}{{.missing}}{{end}}`, `-o go-template: executing the template "{{range .}}{{.missing}}{{end}}": template: output:1:13: executing "output" at <.missing>: map has no entry for key "missing"`},
	} {
		err := printFlags{output: tc.format}.printObject(io.Discard, rows)
		if err == nil || err.Error() != tc.want {
			t.Errorf("-o %s: got %v, want %q", tc.format, err, tc.want)
		}
	}
	for _, format := range []string{`jsonpath={[*].name}`, `go-template={{range .}}{{.name}}{{end}}`} {
		var out strings.Builder
		if err := (printFlags{output: format}).printObject(&out, rows); err != nil || out.String() != "shop" {
			t.Errorf("-o %s: %q, %v", format, out.String(), err)
		}
	}
	// The flag, on a command; kubectl's default allows them.
	args := []string{"validate", "--offline", "-f", "../../examples/webapp/rgd.yaml", "-o", "jsonpath={.results[0].nope}"}
	if out, err := runPlugin(args...); err != nil || out != "" {
		t.Errorf("%q: %q, %v", args, out, err)
	}
	args = append(args, "--allow-missing-template-keys=false")
	if _, err := runPlugin(args...); err == nil || !strings.Contains(err.Error(), "nope is not found") {
		t.Errorf("%q: got %v, want nope is not found", args, err)
	}
}

// A template that cannot be read or parsed is refused, naming the format
// and the template, before a file is read or the cluster contacted; a
// command that prints no json takes no template.
func TestBadTemplatesAreRefusedFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-o", "jsonpath={.items["}, `-o jsonpath: parsing the template "{.items[": unterminated array`},
		{[]string{"tree", "webapp", "demo", "-o", "jsonpath"}, `-o jsonpath needs a template: -o jsonpath='{.name}'`},
		{[]string{"why-not-ready", "webapp/demo", "-o", "go-template="}, `-o go-template needs a template: -o go-template='{{.name}}'`},
		{[]string{"explain-conditions", "webapp", "demo", "-o", "go-template={{.x"}, `-o go-template: parsing the template "{{.x": template: output:1: unclosed action`},
		{[]string{"validate", "-f", "missing.yaml", "-o", "jsonpath-file=/no/such/file"}, `-o jsonpath-file: reading the template: open /no/such/file: no such file or directory`},
		{[]string{"dry-run", "-f", "missing.yaml", "-o", "go-template-file"}, `-o go-template-file needs a template: -o go-template-file=FILE`},
		{[]string{"version", "-o", "jsonpath-file="}, `-o jsonpath-file needs a template: -o jsonpath-file=FILE`},
		{[]string{"status", "-o", "json", "--template", "{.x}"}, `--template is the template of -o jsonpath, -o jsonpath-file, -o go-template, -o go-template-file, not of -o json`},
		{[]string{"status", "-o", "jsonpath={.a}", "--template", "{.b}"}, `-o jsonpath gives the template already; give it once, there or in --template`},
		{[]string{"status", "-o", "jsonpath", "--template", "{.items["}, `-o jsonpath: parsing the template "{.items[": unterminated array`},
	} {
		if err := runWithoutCluster(tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// Every command that prints json prints through a template; here those
// that need no cluster for it.
func TestCommandsPrintThroughTemplates(t *testing.T) {
	out, err := runPlugin("version", "--client", "-o", "jsonpath={.clientVersion}")
	if err != nil || out == "" || strings.ContainsAny(out, "{}\n") {
		t.Errorf("version -o jsonpath: %q, %v", out, err)
	}
	out, err = runPlugin("validate", "--offline", "-f", "../../examples/webapp/rgd.yaml", "-o", `go-template={{range .results}}{{.name}} {{.valid}}{{end}}`)
	if err != nil || out != "webapp true" {
		t.Errorf("validate -o go-template: %q, %v", out, err)
	}
	// The template in --template, as kubectl get takes it: after -o, or
	// alone for a go-template.
	out, err = runPlugin("version", "--client", "-o", "jsonpath", "--template", "{.clientVersion}")
	if err != nil || out == "" || strings.ContainsAny(out, "{}\n") {
		t.Errorf("version -o jsonpath --template: %q, %v", out, err)
	}
	out, err = runPlugin("validate", "--offline", "-f", "../../examples/webapp/rgd.yaml", "--template", `{{range .results}}{{.name}} {{.valid}}{{end}}`)
	if err != nil || out != "webapp true" {
		t.Errorf("validate --template: %q, %v", out, err)
	}
}

// -o completes to the command's formats and the template formats; after
// a template format's = the template follows, so no space is added.
func TestOutputCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tree", "webapp", "demo", "-o", ""}, "json\nyaml\ndot\nname\njsonpath=\njsonpath-file=\ngo-template=\ngo-template-file=\n:4\n"},
		{[]string{"status", "-o", "js"}, "json\njsonpath=\njsonpath-file=\n:4\n"},
		{[]string{"status", "-o", "go"}, "go-template=\ngo-template-file=\n:6\n"},
	} {
		var out strings.Builder
		cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
		cmd.SetArgs(append([]string{"__complete"}, tc.args...))
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err != nil || out.String() != tc.want {
			t.Errorf("completing %q: %v, offered %q, want %q", tc.args, err, out.String(), tc.want)
		}
	}
}
