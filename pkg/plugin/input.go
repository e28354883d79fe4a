package plugin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// readInput reads the file given with -f; "-" is standard input.
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", file)
	}
	return b, err
}

// yamlDocuments splits a YAML (or JSON) stream into its documents.
func yamlDocuments(file string, data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		docs = append(docs, doc)
	}
}

// documents are the objects of a YAML or JSON stream, empty documents
// left out.
func documents(file string, data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := yamlDocuments(file, data)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for i, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s: no instance found", file)
	}
	return objs, nil
}
