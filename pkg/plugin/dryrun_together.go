package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck/offline"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
)

// unservedKind is a kind that an RGD given to dry-run serves once it is
// applied and the cluster does not serve yet, with the CRD that RGD
// generates for it.
type unservedKind struct {
	rgd string
	crd *extv1.CustomResourceDefinition
}

// offlineRGD is an RGD given to dry-run that uses the kind of another one
// given, which the cluster does not serve yet. kro-agent's webhook denies
// it in a dry run, which creates nothing, though applied together the two
// are admitted (the webhook waits for a kind another RGD generates). So it
// is compiled here with the others, as kubectl kro validate compiles them.
type offlineRGD struct {
	rgd   *v1alpha1.ResourceGraphDefinition
	graph *graph.Graph
	err   error
	// awaits says which kinds of the RGDs given it uses: "InnerDB
	// (served once ResourceGraphDefinition innerdb is applied)".
	awaits []string
}

// compileGiven finds, among the RGDs given to dry-run, those that use
// the kind of another one given that the cluster does not serve yet, and
// compiles them with the others: by name, the RGDs to check offline. The
// kinds they use are recorded in c.unserved, for the plans of their
// instances.
func (c *cluster) compileGiven(rgds []*unstructured.Unstructured) map[string]*offlineRGD {
	parsed := make([]parsedRGD, len(rgds))
	generatedBy := map[schema.GroupVersionKind]string{}
	for i, u := range rgds {
		rgd := &v1alpha1.ResourceGraphDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rgd); err != nil {
			// The API server's dry run tells what is wrong with it.
			parsed[i].err = err
			continue
		}
		parsed[i].obj = rgd
		if rgd.Spec.Schema == nil {
			continue
		}
		if gvk := rgd.Spec.Schema.GroupVersionKind(); !c.serves(gvk) {
			generatedBy[gvk] = rgd.Name
		}
	}
	awaits := map[int][]string{}
	for i, p := range parsed {
		if p.err != nil {
			continue
		}
		for _, r := range p.obj.Spec.Resources {
			if r == nil {
				continue
			}
			gvk, ok := r.GroupVersionKind()
			by := generatedBy[gvk]
			if !ok || by == "" || by == p.obj.Name {
				continue
			}
			if kind := fmt.Sprintf("%s (served once ResourceGraphDefinition %s is applied)", gvk.Kind, by); !slices.Contains(awaits[i], kind) {
				awaits[i] = append(awaits[i], kind)
			}
		}
	}
	if len(awaits) == 0 {
		return nil
	}
	graphs, errs := compileTogether(parsed, kinds.NewDeclared(c.resolver), graph.Options{ValidateCRD: offline.Validate})
	blame := blameInvalidKinds(parsed, errs)
	c.unserved = map[schema.GroupVersionKind]unservedKind{}
	for i, g := range graphs {
		if g != nil && generatedBy[g.Instance] != "" {
			c.unserved[g.Instance] = unservedKind{rgd: parsed[i].obj.Name, crd: g.CRD}
		}
	}
	out := map[string]*offlineRGD{}
	for i, by := range awaits {
		off := &offlineRGD{rgd: parsed[i].obj, graph: graphs[i], err: errs[i], awaits: by}
		if len(blame[i]) > 0 {
			// What makes the kind it uses unknown is the other's error.
			off.graph, off.err = nil, errors.New(strings.Join(blame[i], "\n"))
		}
		out[parsed[i].obj.Name] = off
	}
	return out
}

// serves tells whether the cluster serves gvk, with its schema.
func (c *cluster) serves(gvk schema.GroupVersionKind) bool {
	_, err := c.resolver.Resolve(gvk)
	return err == nil
}

// admitOffline is the RGD off as the webhook would admit it, and its
// graph: what the webhook denies (an invalid graph, a change to what names
// the generated API) is the error, what it warns of is returned.
func (c *cluster) admitOffline(ctx context.Context, off *offlineRGD, current *v1alpha1.ResourceGraphDefinition) (*v1alpha1.ResourceGraphDefinition, *graph.Graph, []string, error) {
	rgd := off.rgd.DeepCopy()
	if off.err != nil {
		return nil, nil, nil, fmt.Errorf("ResourceGraphDefinition %s is invalid:\n%w", rgd.Name, off.err)
	}
	// Named as the API server would name it: the instances' labels carry it.
	rgd.UID = uuid.NewUUID()
	if current != nil {
		// Against current, read just now, rather than read again.
		if refused := immutableChanges(current, rgd); len(refused) > 0 {
			return nil, nil, nil, fmt.Errorf("the change to ResourceGraphDefinition %s is refused:\n%s", rgd.Name, strings.Join(refused, "\n"))
		}
		rgd.UID = current.UID
	}
	warnings := []string{fmt.Sprintf("ResourceGraphDefinition %s uses %s: kro-agent's admission webhook cannot check it before that, so it was checked here as kubectl kro validate checks it (applied in one kubectl apply, the webhook waits for what it uses)",
		rgd.Name, strings.Join(off.awaits, " and "))}
	return rgd, off.graph, append(warnings, off.graph.Warnings()...), nil
}

// planUnserved plans u, an object of a kind the cluster serves once the
// RGD given beside it (k) is applied. No dry run can check it before, so
// it is checked against the schema that RGD generates, as the API server
// checks a create; it returns the object as the API server would store
// it.
func planUnserved(ctx context.Context, n *graph.Node, u *unstructured.Unstructured, unresolved []error, k unservedKind) (PlannedResource, *unstructured.Unstructured) {
	p := PlannedResource{NodeID: n.ID, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Object: u.Object}
	if len(unresolved) > 0 {
		p.Action, p.Reason = unrenderable(unresolved)
		return p, u
	}
	admitted := u.DeepCopy()
	errs, err := offline.Admit(ctx, k.crd, admitted)
	switch {
	case err != nil:
		p.Action, p.Reason = ActionUnknown, err.Error()
		return p, u
	case len(errs) > 0:
		p.Action, p.Reason = ActionInvalid, invalidReason(n, apierrors.NewInvalid(n.Kind.GVK.GroupKind(), u.GetName(), errs))
		return p, u
	}
	p.Action, p.Diff = ActionCreate, diff(nil, admitted)
	p.Reason = fmt.Sprintf("%s is served once ResourceGraphDefinition %s is applied: checked against the schema it generates, not by a dry run", n.Kind.GVK.Kind, k.rgd)
	return p, admitted
}
