package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
)

// maxNesting bounds how many levels of instances managed by instances tree
// follows.
const maxNesting = 5

// isInstance tells an object that is itself an instance of an RGD (one RGD
// composing another): the ApplySet parent label and its RGD's name, which
// the agent sets on every instance.
func isInstance(u *unstructured.Unstructured) bool {
	l := u.GetLabels()
	return l[v1alpha1.LabelApplySetID] != "" && l[v1alpha1.LabelRGDName] != ""
}

// nestedPlace marks, in a row's place, the rows of a nested instance's
// own tree: after the instance's row (and any collection item's, -1),
// before the resources of the outer graph that depend on it (0 and up).
const nestedPlace = -2

// expandNested puts each nested instance's own tree under its row. The
// rows' node ids become paths from the top instance (database/config),
// so that they stay unique in -o json and -o dot.
func (c *cluster) expandNested(ctx context.Context, t *Tree, level int) {
	if level >= maxNesting {
		return
	}
	rows := make([]Row, 0, len(t.Rows))
	for _, r := range t.Rows {
		rows = append(rows, r)
		if r.object == nil || !isInstance(r.object) {
			continue
		}
		sub, err := c.nestedTree(ctx, r.object, level)
		if err != nil {
			row := &rows[len(rows)-1]
			why := "its own resources cannot be shown: " + err.Error()
			if row.Reason != "" {
				why = row.Reason + "; " + why
			}
			row.Reason = why
			continue
		}
		prefix := r.node()
		hasParent := map[string]bool{}
		for _, e := range sub.edges {
			hasParent[e[1]] = true
			t.edges = append(t.edges, [2]string{prefix + "/" + e[0], prefix + "/" + e[1]})
		}
		for _, sr := range sub.Rows {
			if !hasParent[sr.NodeID] {
				t.edges = append(t.edges, [2]string{r.NodeID, prefix + "/" + sr.NodeID})
				hasParent[sr.NodeID] = true
			}
			sr.NodeID = prefix + "/" + sr.NodeID
			sr.Depth += r.Depth
			// Under the nested instance's row, before what depends on it.
			sr.place = append(append(slices.Clone(r.place), nestedPlace), sr.place...)
			rows = append(rows, sr)
		}
	}
	t.Rows = rows
}

// nestedTree is the tree of the nested instance u, expanded in turn.
func (c *cluster) nestedTree(ctx context.Context, u *unstructured.Unstructured, level int) (*Tree, error) {
	gvk := u.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	s, err := c.subjectOf(ctx, u, mapping)
	if released := (*releasedError)(nil); errors.As(err, &released) {
		// What it left is listed, flat, all the same.
		t, _, err := c.releasedTree(ctx, released, level+1)
		return t, err
	}
	if unreadable := (*unreadableRGDError)(nil); errors.As(err, &unreadable) {
		t, _, err := c.unreadableTree(ctx, unreadable, level+1)
		return t, err
	}
	if err != nil {
		return nil, err
	}
	if s.graphErr != nil {
		return nil, fmt.Errorf("ResourceGraphDefinition %s does not compile: %w", s.rgd.Name, s.graphErr)
	}
	t, err := c.buildTree(ctx, s)
	if err != nil {
		return nil, err
	}
	c.expandNested(ctx, t, level+1)
	return t, nil
}

// nodeName is the last step of a node id path, as the tree prints it under
// its parent.
func nodeName(id string) string {
	return id[strings.LastIndex(id, "/")+1:]
}
