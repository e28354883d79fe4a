package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kro-agent/kro-agent/pkg/access"
	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/crdcheck"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/kinds"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// RGDValidator denies ResourceGraphDefinitions that the agent would refuse,
// running the same graph compilation.
type RGDValidator struct {
	Resolver kinds.Resolver
	// Client dry-run applies the generated CRD, so a schema the API server
	// would refuse is denied here with its RGD field; nil skips that check.
	Client client.Client
	// RGDs lists the RGDs (from the agent's cache): a kind another RGD
	// defines is denied, and one another RGD is about to serve waited
	// for; nil skips both.
	RGDs client.Reader
	// CRDLabels, when set, returns the ownership labels of the existing
	// CRD of a name: an RGD is denied a CRD that is not its to write.
	CRDLabels func(name string) (map[string]string, bool)
	// Stored, when set, reads from the API server, uncached, the CRD a
	// changed spec would replace and whether any instance of it is stored,
	// to warn of a change that would break them, and confirms an RGD of
	// the cache that would deny a kind; nil skips the warning and trusts
	// the cache.
	Stored client.Reader
	// Reviews, when set, asks the API server's authorizer whether the
	// agent may do with each kind of the graph what it needs (package
	// access), to warn of what its roles do not grant; nil skips the
	// warning.
	Reviews authorizationv1client.AuthorizationV1Interface
}

var _ admission.Handler = (*RGDValidator)(nil)

// Handle implements admission.Handler.
func (v *RGDValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	rgd := &v1alpha1.ResourceGraphDefinition{}
	if err := json.Unmarshal(req.Object.Raw, rgd); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the ResourceGraphDefinition: %w", err))
	}
	var errs field.ErrorList
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &v1alpha1.ResourceGraphDefinition{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err == nil {
			// The spec was admitted when it was written. It can have
			// become invalid since (a CRD it uses uninstalled), which the
			// RGD's conditions report; refusing a label or the removal of
			// another tool's finalizer for it would only leave the RGD
			// stuck, in deletion too.
			if equality.Semantic.DeepEqual(old.Spec, rgd.Spec) {
				return admission.Allowed("the spec is unchanged")
			}
			errs = append(errs, graph.ImmutableChanges(old, rgd)...)
		}
	}
	// Checked first: the compile's dry run of the CRD over another's
	// would only report what is wrong with the two merged.
	if taken := v.kindTaken(ctx, rgd); len(taken) > 0 {
		return denied(rgd, append(errs, taken...))
	}
	// A CRD applied together with the RGD (one `kubectl apply -f`) is
	// not served, or its schema not published, for a moment yet; nor is
	// the kind of another RGD applied with it.
	// Asked at each try of the wait: a kind found coming is not read
	// again; one not found is, as its RGD may reach the cache meanwhile.
	coming := map[schema.GroupVersionKind]bool{}
	generated := func(gvk schema.GroupVersionKind) bool {
		if !coming[gvk] && v.generated(ctx, gvk) {
			coming[gvk] = true
		}
		return coming[gvk]
	}
	opts := graph.Options{Resolver: kinds.Awaiting(ctx, v.Resolver, generated)}
	if v.Client != nil {
		opts.ValidateCRD = crdcheck.OnServer(ctx, v.Client, ownership.FieldManager)
	}
	g, err := graph.Compile(rgd, opts)
	var cerr *graph.Error
	switch {
	case errors.As(err, &cerr):
		errs = append(errs, cerr.Errs...)
	case err != nil:
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if len(errs) > 0 {
		return denied(rgd, errs)
	}
	// A read of a field that never comes holds every instance up for
	// good: it is not to be crowded out by hints.
	consequential := g.ReadWarnings()
	if w := v.breakingWarning(ctx, rgd, g); w != "" {
		consequential = append(consequential, w)
	}
	consequential = append(consequential, v.grantWarnings(ctx, g)...)
	return admission.Allowed("").WithWarnings(fitWarnings(g.Hints(), consequential)...)
}

// warningBudget is how many characters of warnings one admission response
// carries whole. Past 4096 in all, the API server cuts every warning of the
// response to 256 characters and drops those that no longer fit, and other
// admission plugins may warn of the same request.
const warningBudget = 3500

// fitWarnings returns the graph's hints followed by the consequential
// warnings (reads of fields that never come, a breaking change allowed,
// writes the agent may not make), leaving out as many hints as it takes
// for all to fit the budget: an RGD repeating one slip in 200 templates
// would otherwise push the warnings that matter off the end. A line says
// how many hints were left out and where to read them all.
func fitWarnings(hints, consequential []string) []string {
	left := warningBudget
	for _, w := range consequential {
		left -= utf8.RuneCountInString(w)
	}
	out := make([]string, 0, len(hints)+len(consequential)+1)
	noteRoom := len(omittedNote(len(hints)))
	for i, w := range hints {
		size := utf8.RuneCountInString(w)
		need := size
		// The last hint may use the room the note would take.
		if i < len(hints)-1 {
			need += noteRoom
		}
		if need > left {
			out = append(out, omittedNote(len(hints)-i))
			break
		}
		left -= size
		out = append(out, w)
	}
	return append(out, consequential...)
}

// omittedNote says that n hints were left out of the response.
func omittedNote(n int) string {
	return fmt.Sprintf("%d more warnings like those above are left out, to keep the rest whole: kubectl kro validate -f lists every one", n)
}

// namedResources is how many resources of one kind a grant warning names.
const namedResources = 3

// grantWarnings warns of each kind of the graph on which the agent's
// roles do not grant what it needs: the RGD is valid, but its instances'
// writes would be refused until they do. What cannot be asked is left to
// the instances' conditions, which name the refusal.
func (v *RGDValidator) grantWarnings(ctx context.Context, g *graph.Graph) []string {
	if v.Reviews == nil || g == nil {
		return nil
	}
	var needs []access.Need
	var ids [][]string // the resources of each need's kind
	at := map[schema.GroupResource]int{}
	for _, n := range g.Nodes {
		if n.Kind == nil {
			continue
		}
		gr := n.Kind.GVR().GroupResource()
		verbs := access.ManagedVerbs
		if n.External != nil {
			verbs = access.ReadVerbs
		}
		i, seen := at[gr]
		if !seen {
			i = len(needs)
			at[gr] = i
			needs = append(needs, access.Need{Resource: gr})
			ids = append(ids, nil)
		}
		ids[i] = append(ids[i], n.ID)
		if len(verbs) > len(needs[i].Verbs) {
			needs[i].Verbs = verbs // a template's besides an externalRef's
		}
	}
	roles := make([]string, len(ids))
	for i, of := range ids {
		switch {
		case len(of) == 1:
			roles[i] = "resource " + of[0]
		case len(of) > namedResources+1:
			// Hundreds of ids would make one warning longer than the
			// API server passes on whole.
			roles[i] = fmt.Sprintf("resources %s and %d more", strings.Join(of[:namedResources], ", "), len(of)-namedResources)
		default:
			roles[i] = "resources " + access.Words(of, "and")
		}
	}
	if g.CRD != nil {
		instances := schema.GroupResource{Group: g.CRD.Spec.Group, Resource: g.CRD.Spec.Names.Plural}
		needs = append(needs, access.Need{Resource: instances, Verbs: access.InstanceVerbs},
			access.Need{Resource: instances, Subresource: "status", Verbs: access.StatusVerbs})
		roles = append(roles, "the instances", "the instances' status")
	}
	kinds := len(needs)
	binds := boundRoles(g)
	for _, b := range binds {
		needs = append(needs, b.need)
	}
	denied, err := access.Denied(ctx, v.Reviews, needs)
	if err != nil {
		return nil
	}
	var warned []string
	for i, verbs := range denied {
		if len(verbs) == 0 {
			continue
		}
		n := needs[i]
		if i >= kinds {
			b := binds[i-kinds]
			warned = append(warned, fmt.Sprintf("kro-agent may not bind %s %s (resource %s), and the API server refuses the binding unless kro-agent holds every permission %s grants, so the instances cannot be reconciled until it may: grant it %s %s",
				b.kind, n.Name, b.id, n.Name, n.Grant(), access.GrantedIn))
			continue
		}
		warned = append(warned, fmt.Sprintf("kro-agent may not %s %s (%s), so the instances cannot be reconciled until it may: grant it %s %s",
			access.Words(verbs, "or"), n, roles[i], n.Grant(), access.GrantedIn))
	}
	return warned
}

// boundRole is a role a binding of the graph names as written, which
// kro-agent needs to be allowed to bind (unless it holds all the role
// grants itself, which is not asked).
type boundRole struct {
	id, kind string
	need     access.Need
}

// boundRoles are the roles the graph's RoleBindings and ClusterRoleBindings
// name by a literal roleRef; one an expression names is known only for an
// instance, and left to its conditions.
func boundRoles(g *graph.Graph) []boundRole {
	var out []boundRole
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Template == nil || n.Kind == nil || n.Kind.GVK.Group != rbacv1.GroupName ||
			(n.Kind.GVK.Kind != "RoleBinding" && n.Kind.GVK.Kind != "ClusterRoleBinding") {
			continue
		}
		kind, _, _ := unstructured.NestedString(n.Template, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(n.Template, "roleRef", "name")
		need, ok := access.Bind(kind, name)
		if !ok || strings.Contains(name, "${") {
			continue
		}
		if key := need.Grant(); !seen[key] {
			seen[key] = true
			out = append(out, boundRole{id: n.ID, kind: kind, need: need})
		}
	}
	return out
}

// breakingWarning is the warning, "" for none, of a schema change that would
// break the instances the API server stores (Graph.BreakageWarning), which
// kubectl apply shows at once. It costs two reads, made only for a spec that
// changed and a CRD that exists; what cannot be read is left to KindReady.
func (v *RGDValidator) breakingWarning(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition, g *graph.Graph) string {
	if v.Stored == nil || g == nil || g.CRD == nil {
		return ""
	}
	current := &extv1.CustomResourceDefinition{}
	if err := v.Stored.Get(ctx, client.ObjectKey{Name: g.CRD.Name}, current); err != nil {
		return ""
	}
	return g.BreakageWarning(rgd, current, func(gvk schema.GroupVersionKind) bool {
		stored := &metav1.PartialObjectMetadataList{}
		stored.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return v.Stored.List(ctx, stored, client.Limit(1)) == nil && len(stored.Items) > 0
	})
}

func denied(rgd *v1alpha1.ResourceGraphDefinition, errs field.ErrorList) admission.Response {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return admission.Denied(fmt.Sprintf("ResourceGraphDefinition %s is invalid (%d error(s)):\n%s", rgd.Name, len(errs), strings.Join(lines, "\n")))
}

// generated tells whether an RGD in the cluster generates gvk: the agent
// is about to serve it, as when RGDs using each other's kinds are applied
// together. One of the cache is read again (confirm): an RGD deleted a
// moment ago lingers there, and neither it nor one being deleted brings
// its kind.
func (v *RGDValidator) generated(ctx context.Context, gvk schema.GroupVersionKind) bool {
	for _, rgd := range v.listRGDs(ctx) {
		if s := rgd.Spec.Schema; s != nil && s.GroupVersionKind() == gvk {
			if live := v.confirm(ctx, &rgd); live != nil && live.DeletionTimestamp == nil {
				return true
			}
		}
	}
	return false
}

// listRGDs returns the RGDs of the agent's cache, shared: nothing here
// writes to them, and every RGD write is admitted here.
func (v *RGDValidator) listRGDs(ctx context.Context) []v1alpha1.ResourceGraphDefinition {
	if v.RGDs == nil {
		return nil
	}
	list := &v1alpha1.ResourceGraphDefinitionList{}
	if err := v.RGDs.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		// The agent reports what the webhook cannot check.
		return nil
	}
	return list.Items
}

// confirm reads again, uncached, an RGD of the cache that would deny
// another its kind: an RGD deleted a moment ago can linger in the cache,
// and the kind it defined is free once it is gone. It returns nil for an
// RGD that is gone, and the cached copy when it cannot tell.
func (v *RGDValidator) confirm(ctx context.Context, cached *v1alpha1.ResourceGraphDefinition) *v1alpha1.ResourceGraphDefinition {
	if v.Stored == nil {
		return cached
	}
	live := &v1alpha1.ResourceGraphDefinition{}
	switch err := v.Stored.Get(ctx, client.ObjectKey{Name: cached.Name}, live); {
	case err == nil:
		return live
	case apierrors.IsNotFound(err):
		return nil
	default:
		return cached
	}
}

// kindTaken refuses a kind that is another's: defined by another RGD, or
// served by a CRD that the RGD may not write (ownership.CRDConflict).
func (v *RGDValidator) kindTaken(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) field.ErrorList {
	if rgd.Spec.Schema == nil {
		return nil // the compile says what is missing
	}
	p := field.NewPath("spec", "schema", "kind")
	gk := rgd.Spec.Schema.GroupVersionKind().GroupKind()
	crd := graph.CRDName(gk.Kind, gk.Group)
	definesKind := func(other *v1alpha1.ResourceGraphDefinition) bool {
		return other.Spec.Schema != nil && other.Spec.Schema.GroupVersionKind().GroupKind() == gk
	}
	cached := map[string]*v1alpha1.ResourceGraphDefinition{}
	rgds := v.listRGDs(ctx)
	for i := range rgds {
		other := &rgds[i]
		cached[other.Name] = other
		if other.Name == rgd.Name || !definesKind(other) {
			continue
		}
		if live := v.confirm(ctx, other); live != nil && definesKind(live) {
			return field.ErrorList{field.Forbidden(p, fmt.Sprintf("the kind %s of %s is defined by ResourceGraphDefinition %s already; a kind is defined by one RGD", gk.Kind, gk.Group, other.Name))}
		}
	}
	if v.CRDLabels == nil {
		return nil
	}
	labels, ok := v.CRDLabels(crd)
	if !ok {
		return nil
	}
	exists := func(name string) bool {
		other, ok := cached[name]
		return ok && v.confirm(ctx, other) != nil
	}
	if err := ownership.CRDConflict(crd, labels, rgd.Name, exists); err != nil {
		return field.ErrorList{field.Forbidden(p, err.Error())}
	}
	return nil
}
