package plugin

import (
	"context"
	"sort"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// fetchMembers lists every kind of the graph by the instance-id label, and
// groups what it finds by node; forbidden names the nodes of kinds the
// user may not list.
func (c *cluster) fetchMembers(ctx context.Context, s *subject) (map[string][]*unstructured.Unstructured, map[string]bool) {
	objs, forbiddenKinds := c.listMembers(ctx, s.instance, c.memberKinds(s))
	found := map[string][]*unstructured.Unstructured{}
	for _, u := range objs {
		node := u.GetLabels()[v1alpha1.LabelNodeID]
		found[node] = append(found[node], u)
	}
	forbidden := map[string]bool{}
	for _, n := range s.graph.Nodes {
		if n.Kind != nil && forbiddenKinds[n.Kind.GVR()] {
			forbidden[n.ID] = true
		}
	}
	for _, objs := range found {
		sort.Slice(objs, func(a, b int) bool {
			ia, _ := strconv.Atoi(objs[a].GetLabels()[v1alpha1.LabelCollectionIndex])
			ib, _ := strconv.Atoi(objs[b].GetLabels()[v1alpha1.LabelCollectionIndex])
			if ia != ib {
				return ia < ib
			}
			return objs[a].GetName() < objs[b].GetName()
		})
	}
	return found, forbidden
}

// memberKind is a kind an instance's resources may be of.
type memberKind struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// kind names it to the user.
	kind string
}

// graphMemberKinds are the kinds g's templates create.
func graphMemberKinds(g *graph.Graph) []memberKind {
	var kinds []memberKind
	for _, n := range g.Nodes {
		if n.Template != nil && n.Kind != nil && n.Kind.Resource != "" {
			kinds = append(kinds, memberKind{gvr: n.Kind.GVR(), namespaced: n.Kind.Namespaced, kind: n.Kind.GVK.Kind})
		}
	}
	return kinds
}

// memberKinds are the kinds the instance of s may have objects of: those
// its graph creates, and those its ApplySet annotation records beside them
// (kinds of resources the RGD had before, whose objects kro-agent has not
// pruned, or still keeps with the graph of an earlier generation). A
// recorded kind the cluster no longer serves has nothing left to list.
func (c *cluster) memberKinds(s *subject) []memberKind {
	kinds := graphMemberKinds(s.graph)
	listed := map[schema.GroupResource]bool{}
	for _, k := range kinds {
		listed[k.gvr.GroupResource()] = true
	}
	for _, gk := range ownership.RecordedKinds(s.instance) {
		m, err := c.mapper.RESTMapping(gk)
		if err != nil || listed[m.Resource.GroupResource()] {
			continue
		}
		listed[m.Resource.GroupResource()] = true
		kinds = append(kinds, mappedMemberKind(m))
	}
	return kinds
}

// mappedMemberKind is the member kind m maps a recorded group and kind to.
func mappedMemberKind(m *meta.RESTMapping) memberKind {
	return memberKind{gvr: m.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace, kind: m.GroupVersionKind.Kind}
}

// listMembers lists, with a bounded worker pool, each of the kinds by the
// instance-id label of inst, in its namespace and the additional namespaces
// its ApplySet annotation names: one LIST per kind and namespace (and per
// 500 of the instance's objects of it), so the requests grow with the
// graph, not the cluster. It returns the objects, and the kinds the user
// may not list.
func (c *cluster) listMembers(ctx context.Context, inst *unstructured.Unstructured, kinds []memberKind) ([]*unstructured.Unstructured, map[schema.GroupVersionResource]bool) {
	selector := labels.SelectorFromSet(labels.Set{v1alpha1.LabelInstanceID: string(inst.GetUID())}).String()
	var namespaces []string
	if ns := inst.GetNamespace(); ns != "" {
		namespaces = append(namespaces, ns)
	}
	namespaces = append(namespaces, ownership.RecordedNamespaces(inst)...)
	if len(namespaces) == 0 {
		// A cluster-scoped instance whose resources' namespaces are not
		// recorded yet: look in all of them. Listing all namespaces beside
		// named ones would return the same objects twice.
		namespaces = []string{metav1.NamespaceAll}
	}
	type job struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	var jobs []job
	seen := map[job]bool{}
	for _, k := range kinds {
		for _, ns := range namespaces {
			if !k.namespaced {
				ns = ""
			}
			if j := (job{gvr: k.gvr, ns: ns}); !seen[j] {
				seen[j] = true
				jobs = append(jobs, j)
			}
		}
	}
	var mu sync.Mutex
	var found []*unstructured.Unstructured
	forbidden := map[schema.GroupVersionResource]bool{}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			items, err := listInChunks(ctx, c.dyn.Resource(j.gvr).Namespace(j.ns), metav1.ListOptions{LabelSelector: selector}, defaultChunkSize)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if apierrors.IsForbidden(err) {
					forbidden[j.gvr] = true
				}
				return
			}
			for i := range items {
				// One that only carries the instance's labels (copied by
				// the controller that made it) is not what kro-agent manages.
				if ownership.AppliedByAgent(items[i].GetManagedFields()) {
					found = append(found, &items[i])
				}
			}
			c.noteList(watchedList{gvr: j.gvr, namespace: j.ns, selector: selector, seen: seenOf(items)})
		}(j)
	}
	wg.Wait()
	return found, forbidden
}
