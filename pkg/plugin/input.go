package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// readInput reads the file given with -f as kubectl does: a path, "-" for
// standard input, or an http(s) URL.
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	if isURL(file) {
		return readURL(file)
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", file)
	}
	return b, err
}

// splitFileLists splits each -f value that names no file into the paths
// its commas separate, as kubectl reads -f a.yaml,b.yaml; a path whose own
// name holds a comma (a test's temporary directory, say) is taken whole,
// where kubectl would split it.
func splitFileLists(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil && strings.Contains(p, ",") && !isURL(p) {
			out = append(out, strings.Split(p, ",")...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// filesOnly is the Args of a command that reads its input from -f: a file
// given without -f is what a user most likely meant, so the error shows the
// command again with it, where cobra's NoArgs would call it an unknown
// command.
func filesOnly(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	path := cmd.CommandPath()
	return fmt.Errorf("%s reads files with -f, not as arguments: %s -f %s", path, path, strings.Join(args, " -f "))
}

// isURL reports whether -f names a manifest on the web.
func isURL(file string) bool {
	return strings.HasPrefix(file, "http://") || strings.HasPrefix(file, "https://")
}

// urlClient fetches manifests named by URL; a server that does not answer
// is given up on rather than waited for.
var urlClient = &http.Client{Timeout: 30 * time.Second}

// maxManifestSize bounds what is read from a URL: a manifest, not a
// download that would fill the memory.
const maxManifestSize = 16 << 20

// readURL fetches a manifest over HTTP(S).
func readURL(url string) ([]byte, error) {
	resp, err := urlClient.Get(url)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading %s: the server answered %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	if len(b) > maxManifestSize {
		return nil, fmt.Errorf("reading %s: larger than %d MiB, too large for a manifest", url, maxManifestSize>>20)
	}
	return b, nil
}

// yamlDocument is one document of a YAML (or JSON) stream and the line of
// the stream it starts on, so that an error in it can name the line of the
// file, where the YAML library counts from the document's first line.
type yamlDocument struct {
	data []byte
	// number counts the stream's documents from 1.
	number, firstLine int
}

// yamlDocuments splits a YAML (or JSON) stream into its documents where a
// line starts with "---" followed by nothing but a comment, as kubectl
// does; separators with nothing between them make no document.
func yamlDocuments(data []byte) []yamlDocument {
	var docs []yamlDocument
	current := yamlDocument{number: 1}
	for n, line := range bytes.SplitAfter(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if rest = bytes.TrimSpace(rest); len(rest) == 0 || rest[0] == '#' {
				if len(current.data) > 0 {
					docs = append(docs, current)
				}
				current = yamlDocument{number: len(docs) + 1}
				continue
			}
		}
		if len(current.data) == 0 {
			current.firstLine = n + 1
		}
		current.data = append(current.data, line...)
	}
	if len(current.data) > 0 {
		docs = append(docs, current)
	}
	return docs
}

// explain returns err, an error reading the document, with the line
// numbers the YAML library gives (counted from the document's first line)
// turned into lines of the file, and a hint when an unquoted expression
// caused it.
func (d yamlDocument) explain(err error) error {
	msg := yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		sub := yamlLine.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return sub[1] + strconv.Itoa(n+d.firstLine-1) + ":"
	})
	if m := mappingValuesAt.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		lines := bytes.Split(d.data, []byte("\n"))
		if n >= 1 && n <= len(lines) && bytes.Contains(lines[n-1], []byte("${")) {
			msg += fmt.Sprintf(`: the expression on line %d holds ": ", which YAML reads as a key and its value; quote the whole value ('${...}')`, n+d.firstLine-1)
		}
	}
	return errors.New(msg)
}

// failed is err, an error reading the document of file, as the user is
// told it: the file, the document's number, and err explained.
func (d yamlDocument) failed(file string, err error) error {
	return fmt.Errorf("%s: document %d: %w", file, d.number, d.explain(err))
}

// yamlLine matches a line number in the YAML library's messages: "yaml:
// line 4: ..." for a syntax error, and "\n  line 4: ..." for each of the
// errors of "yaml: unmarshal errors:".
var yamlLine = regexp.MustCompile(`(yaml: line |\n\s*line )(\d+):`)

// mappingValuesAt is the YAML library's error for ": " inside a plain
// value, which an expression like ${a ? b : c} written without quotes holds.
var mappingValuesAt = regexp.MustCompile(`yaml: line (\d+): mapping values are not allowed in this context`)

// documents are the objects of a YAML or JSON stream, empty documents
// left out.
func documents(file string, data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, doc := range yamlDocuments(data) {
		obj, err := decodeObject(doc.data)
		if err != nil {
			return nil, doc.failed(file, err)
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s: no instance or ResourceGraphDefinition found", file)
	}
	return objs, nil
}

// decodeObject reads one YAML or JSON document as the API server decodes
// JSON: whole numbers as int64, which integer fields and expressions take,
// where YAML decoding alone gives float64.
func decodeObject(doc []byte) (map[string]any, error) {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err) // as kubectl says it
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}
