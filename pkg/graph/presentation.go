package graph

import (
	"fmt"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// PresentationChanges are the differences between two generated CRDs in how
// kubectl names and prints their kind: short names, categories and printer
// columns. None of them changes what an instance holds, but each changes
// what `kubectl get` takes or shows, which scripts and habits rely on.
func PresentationChanges(prev, next *extv1.CustomResourceDefinition) []string {
	if prev == nil || next == nil {
		return nil
	}
	out := setChanges("short name", prev.Spec.Names.ShortNames, next.Spec.Names.ShortNames)
	out = append(out, setChanges("category", prev.Spec.Names.Categories, next.Spec.Names.Categories)...)
	return append(out, columnChanges(printerColumns(prev), printerColumns(next))...)
}

// setChanges names what of prev is gone from next, then what next adds, in
// the order each lists them.
func setChanges(what string, prev, next []string) []string {
	var out []string
	for _, v := range prev {
		if !slices.Contains(next, v) {
			out = append(out, fmt.Sprintf("%s %s removed", what, v))
		}
	}
	for _, v := range next {
		if !slices.Contains(prev, v) {
			out = append(out, fmt.Sprintf("%s %s added", what, v))
		}
	}
	return out
}

func printerColumns(crd *extv1.CustomResourceDefinition) []extv1.CustomResourceColumnDefinition {
	if len(crd.Spec.Versions) == 0 {
		return nil
	}
	return crd.Spec.Versions[0].AdditionalPrinterColumns
}

// columnChanges compares printer columns by name: removed, added, reading
// another field or typed differently, and their order. Descriptions are
// left out, as kubectl get does not print them.
func columnChanges(prev, next []extv1.CustomResourceColumnDefinition) []string {
	var out []string
	byName := func(cols []extv1.CustomResourceColumnDefinition, name string) *extv1.CustomResourceColumnDefinition {
		if i := slices.IndexFunc(cols, func(c extv1.CustomResourceColumnDefinition) bool { return c.Name == name }); i >= 0 {
			return &cols[i]
		}
		return nil
	}
	var kept []string
	for _, p := range prev {
		n := byName(next, p.Name)
		if n == nil {
			out = append(out, fmt.Sprintf("printer column %s removed", p.Name))
			continue
		}
		kept = append(kept, p.Name)
		if p.JSONPath != n.JSONPath {
			out = append(out, fmt.Sprintf("printer column %s shows %s instead of %s", p.Name, n.JSONPath, p.JSONPath))
		}
		if p.Type != n.Type || p.Format != n.Format {
			out = append(out, fmt.Sprintf("printer column %s is %s instead of %s", p.Name, columnType(*n), columnType(p)))
		}
		if p.Priority != n.Priority {
			out = append(out, fmt.Sprintf("printer column %s %s", p.Name, priorityChange(n.Priority)))
		}
	}
	for _, n := range next {
		if byName(prev, n.Name) == nil {
			wide := ""
			if n.Priority > 0 {
				wide = ", with -o wide"
			}
			out = append(out, fmt.Sprintf("printer column %s added (%s, %s%s)", n.Name, n.JSONPath, columnType(n), wide))
		}
	}
	var order []string
	for _, n := range next {
		if slices.Contains(kept, n.Name) {
			order = append(order, n.Name)
		}
	}
	if !slices.Equal(order, kept) {
		out = append(out, fmt.Sprintf("printer columns %s now come in the order %s", strings.Join(kept, ", "), strings.Join(order, ", ")))
	}
	return out
}

// columnType is a column's type, with its format when it has one:
// "string", "integer (int32)".
func columnType(c extv1.CustomResourceColumnDefinition) string {
	if c.Format == "" {
		return c.Type
	}
	return c.Type + " (" + c.Format + ")"
}

// priorityChange says where a column of the new priority is shown:
// kubectl get shows priority 0 always, higher ones with -o wide.
func priorityChange(priority int32) string {
	if priority == 0 {
		return "is shown always, not only with -o wide"
	}
	return fmt.Sprintf("is shown only with -o wide (priority %d)", priority)
}
