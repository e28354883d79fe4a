package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/owned"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/version"
)

// Names of the objects the agent registers.
const (
	ConfigName        = "kro-agent"
	rgdWebhookName    = "resourcegraphdefinitions.kro-agent.kro.run"
	instanceHookName  = "instances.kro-agent.kro.run"
	fieldManagerLabel = v1alpha1.LabelManagedBy
)

// Registrar keeps the webhook configurations and the guard policies in the
// cluster up to date: the CA bundle as certificates rotate, and the
// instance kinds as RGDs come and go.
type Registrar struct {
	Client kubernetes.Interface
	// URL is the base of the webhook URLs when the agent runs outside the
	// cluster (https://127.0.0.1:9443); otherwise Service is used.
	URL     string
	Service *admissionregv1.ServiceReference
	// AgentUser is the agent's own username: the only one allowed to
	// change ownership labels.
	AgentUser string
	// Refresh, when set, reads the CA bundle again before Verify registers
	// what someone else changed: the change may be another replica's
	// registration of a newer bundle than this one holds, and writing the
	// older one back would leave the API server distrusting what that
	// replica serves.
	Refresh func(context.Context) error

	// registering lets one registration run at a time, each of the state
	// as it is when it starts: two racing registrations (a CA rotation and a
	// new kind) must not leave the older state in the cluster.
	registering sync.Mutex

	mu       sync.Mutex
	caBundle []byte
	kinds    []schema.GroupVersionResource
	// kindsComplete says kinds are all the served kinds there are: the
	// leader has reconciled every RGD once. Until then the instance
	// webhook keeps the kinds registered in the cluster beside kinds: a
	// standby registering its CA, or a leader still going through the RGDs,
	// must not take a kind off the webhook and let its instances be
	// admitted without their labels.
	kindsComplete bool
	// changes counts the changes to caBundle and kinds; registered is the
	// count the last successful registration held. Equal: nothing pending.
	changes, registered int
	// left is what the last successful registration left, for Verify,
	// leftCA the CA it registered and leftKinds the instance kinds.
	left      *registered
	leftCA    []byte
	leftKinds []schema.GroupVersionResource
}

// SetCABundle records a new CA and re-registers.
func (r *Registrar) SetCABundle(ctx context.Context, ca []byte) error {
	r.mu.Lock()
	r.caBundle = ca
	r.changes++
	r.mu.Unlock()
	return r.Apply(ctx)
}

// SetInstanceKinds records the served instance kinds and re-registers.
func (r *Registrar) SetInstanceKinds(ctx context.Context, kinds []schema.GroupVersionResource) error {
	slices.SortFunc(kinds, compareKinds)
	r.mu.Lock()
	if !slices.Equal(r.kinds, kinds) {
		r.kinds = kinds
		// Until the kinds are complete the webhook keeps the kinds it
		// has, so one it has already is nothing to register. As an agent
		// starts, that is every kind it served before, which would
		// otherwise be registered again one RGD at a time, each time in
		// the way of the RGD's reconcile.
		if r.kindsComplete || r.left == nil || !subset(kinds, r.leftKinds) {
			r.changes++
		}
	}
	r.mu.Unlock()
	return r.Sync(ctx)
}

// KindsComplete records that the kinds set last are all the served kinds
// there are, so kinds registered earlier that are not among them are
// taken off the instance webhook, and re-registers.
func (r *Registrar) KindsComplete(ctx context.Context) error {
	r.mu.Lock()
	if !r.kindsComplete {
		r.kindsComplete = true
		r.changes++
	}
	r.mu.Unlock()
	return r.Sync(ctx)
}

// Sync registers what has changed since the last successful registration,
// if anything: after a failed one, it is how the registration is retried.
func (r *Registrar) Sync(ctx context.Context) error {
	r.mu.Lock()
	pending := r.registered != r.changes
	r.mu.Unlock()
	if !pending {
		return nil
	}
	return r.Apply(ctx)
}

func (r *Registrar) clientConfig(ca []byte, path string) admissionregv1.WebhookClientConfig {
	cc := admissionregv1.WebhookClientConfig{CABundle: ca}
	if r.URL != "" {
		cc.URL = ptr.To(r.URL + path)
	} else {
		svc := *r.Service
		svc.Path = ptr.To(path)
		cc.Service = &svc
	}
	return cc
}

// Apply writes the webhook configurations and the guard policies.
func (r *Registrar) Apply(ctx context.Context) error {
	r.registering.Lock()
	defer r.registering.Unlock()
	r.mu.Lock()
	ca := r.caBundle
	kinds, complete := slices.Clone(r.kinds), r.kindsComplete
	state := r.changes
	r.mu.Unlock()
	if len(ca) == 0 {
		return nil // registered once the CA is known
	}
	written := kinds
	mutating := func(cur *admissionregv1.MutatingWebhookConfiguration) *admissionregv1.MutatingWebhookConfiguration {
		if !complete {
			written = union(registeredKinds(cur), kinds)
		}
		return r.mutatingConfig(ca, instanceRules(written))
	}
	api := r.Client.AdmissionregistrationV1()
	mwcs := api.MutatingWebhookConfigurations()
	var left registered
	var err error
	if left.validating, err = r.putValidating(ctx, ca); err != nil {
		return fmt.Errorf("registering the RGD webhook: %w", err)
	}
	if left.mutating, err = owned.PutFrom(ctx, ConfigName, mutating, mwcs.Get, mwcs.Create, mwcs.Update); err != nil {
		return fmt.Errorf("registering the instance webhook: %w", err)
	}
	if left.guard, err = r.putGuard(ctx); err != nil {
		return fmt.Errorf("registering the guard policies: %w", err)
	}
	r.mu.Lock()
	r.registered = max(r.registered, state)
	r.left, r.leftCA, r.leftKinds = &left, ca, written
	r.mu.Unlock()
	return nil
}

// putValidating registers the RGD webhook's configuration. It changes only
// with the CA: one still as the last registration left it is not written
// again when only the instance kinds changed, which costs one read instead
// of a write.
func (r *Registrar) putValidating(ctx context.Context, ca []byte) (owned.Version, error) {
	vwcs := r.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	r.mu.Lock()
	prev, prevCA := r.left, r.leftCA
	r.mu.Unlock()
	if prev != nil && bytes.Equal(prevCA, ca) {
		if intact, err := owned.At(ctx, vwcs.Get, ConfigName, prev.validating); err == nil && intact {
			return prev.validating, nil
		}
	}
	return owned.Put(ctx, r.validatingConfig(ca), vwcs.Get, vwcs.Create, vwcs.Update)
}

// putGuard registers the guard policies. They change with neither the CA
// nor the instance kinds: ones still as the last registration left them
// are not written again when only the kinds changed (each RGD created or
// deleted), which costs four reads instead of four writes.
func (r *Registrar) putGuard(ctx context.Context) (guard.Versions, error) {
	r.mu.Lock()
	prev := r.left
	r.mu.Unlock()
	if prev != nil {
		if intact, err := guard.Intact(ctx, r.Client, prev.guard); err == nil && intact {
			return prev.guard, nil
		}
	}
	return guard.Ensure(ctx, r.Client, guard.Self, r.AgentUser)
}

// configMeta names the webhook configurations and labels them with the
// version of the agent that registered them last, which `kubectl kro
// version` reports.
func configMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: ConfigName, Labels: map[string]string{
		fieldManagerLabel:        ownership.FieldManager,
		v1alpha1.LabelKroVersion: version.Version,
	}}
}

// validatingConfig is the configuration of the RGD webhook.
func (r *Registrar) validatingConfig(ca []byte) *admissionregv1.ValidatingWebhookConfiguration {
	none := admissionregv1.SideEffectClassNone
	return &admissionregv1.ValidatingWebhookConfiguration{
		ObjectMeta: configMeta(),
		Webhooks: []admissionregv1.ValidatingWebhook{{
			Name:         rgdWebhookName,
			ClientConfig: r.clientConfig(ca, PathValidateRGD),
			Rules: []admissionregv1.RuleWithOperations{{
				Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
				Rule: admissionregv1.Rule{APIGroups: []string{v1alpha1.GroupVersion.Group}, APIVersions: []string{v1alpha1.GroupVersion.Version},
					Resources: []string{"resourcegraphdefinitions"}, Scope: ptr.To(admissionregv1.ClusterScope)},
			}},
			// An update that leaves the spec as it is (a label, another
			// tool's finalizer) is not sent at all: there is nothing to
			// validate, and failing closed while the agent is down must
			// not leave an RGD stuck, in deletion too.
			MatchConditions: []admissionregv1.MatchCondition{{Name: "spec-changed", Expression: rgdSpecChanged}},
			// Fail: an RGD that skipped validation could break every
			// instance of its kind. Only RGDs are affected when the agent
			// is down; nothing else goes through this webhook.
			FailurePolicy:           ptr.To(admissionregv1.Fail),
			SideEffects:             &none,
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// rgdSpecChanged is the RGD webhook's match condition: a create, or an
// update that changes the spec. The API server evaluates it before calling
// the webhook; a create has no oldObject, which the first test spares it.
const rgdSpecChanged = "request.operation != 'UPDATE' || !has(oldObject.spec) || !has(object.spec) || object.spec != oldObject.spec"

// instanceMetadataChanged is the instance webhook's match condition: a
// create, or an update that changes the labels or finalizers, or one of
// the ApplySet annotations, which the webhook keeps or puts back. Any other
// annotation is left out: kubectl apply rewrites its own on every change
// of the spec.
var instanceMetadataChanged = "request.operation != 'UPDATE' || " +
	"object.metadata.?labels != oldObject.metadata.?labels || " +
	"object.metadata.?finalizers != oldObject.metadata.?finalizers || " +
	fmt.Sprintf("['%s', '%s', '%s'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])",
		v1alpha1.AnnotationApplySetTooling, v1alpha1.AnnotationApplySetGroupKinds, v1alpha1.AnnotationApplySetNamespaces)

// instanceRules are the instance webhook's rules for the served kinds.
func instanceRules(kinds []schema.GroupVersionResource) []admissionregv1.RuleWithOperations {
	var rules []admissionregv1.RuleWithOperations
	for _, k := range kinds {
		rules = append(rules, admissionregv1.RuleWithOperations{
			Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
			Rule:       admissionregv1.Rule{APIGroups: []string{k.Group}, APIVersions: []string{k.Version}, Resources: []string{k.Resource}},
		})
	}
	return rules
}

// registeredKinds are the kinds the instance webhook has in cur, the
// configuration in the cluster (nil if there is none).
func registeredKinds(cur *admissionregv1.MutatingWebhookConfiguration) []schema.GroupVersionResource {
	if cur == nil {
		return nil
	}
	var kinds []schema.GroupVersionResource
	for _, w := range cur.Webhooks {
		if w.Name != instanceHookName {
			continue
		}
		for _, rule := range w.Rules {
			for _, g := range rule.APIGroups {
				for _, v := range rule.APIVersions {
					for _, res := range rule.Resources {
						kinds = append(kinds, schema.GroupVersionResource{Group: g, Version: v, Resource: res})
					}
				}
			}
		}
	}
	return kinds
}

// union is the sorted set of the kinds in a and b.
func union(a, b []schema.GroupVersionResource) []schema.GroupVersionResource {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, compareKinds)
	return slices.Compact(all)
}

// subset reports whether every kind in a is in b, which is sorted.
func subset(a, b []schema.GroupVersionResource) bool {
	for _, k := range a {
		if _, found := slices.BinarySearchFunc(b, k, compareKinds); !found {
			return false
		}
	}
	return true
}

func compareKinds(a, b schema.GroupVersionResource) int {
	return strings.Compare(a.String(), b.String())
}

// mutatingConfig is the configuration of the instance webhook, called for
// the kinds in rules; with none, it has no webhook.
func (r *Registrar) mutatingConfig(ca []byte, rules []admissionregv1.RuleWithOperations) *admissionregv1.MutatingWebhookConfiguration {
	mutating := &admissionregv1.MutatingWebhookConfiguration{ObjectMeta: configMeta()}
	if len(rules) == 0 {
		return mutating
	}
	none := admissionregv1.SideEffectClassNone
	mutating.Webhooks = []admissionregv1.MutatingWebhook{{
		Name:         instanceHookName,
		ClientConfig: r.clientConfig(ca, PathMutateInstance),
		Rules:        rules,
		// System namespaces never hold instances; keeping them out
		// means the webhook can never sit in the way of the control plane.
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-public", "kube-node-lease"},
		}}},
		// An update that leaves the metadata the webhook looks after as
		// it is (a change of the spec by kubectl patch, edit or a
		// server-side apply) is not sent: the webhook would change
		// nothing, and the agent puts right whatever is missing.
		MatchConditions: []admissionregv1.MatchCondition{{Name: "ownership-metadata-changed", Expression: instanceMetadataChanged}},
		// Ignore: the labels are a convenience the agent also adds on
		// its first reconcile, so an agent that is down must not stop
		// anyone from creating instances.
		FailurePolicy:           ptr.To(admissionregv1.Ignore),
		SideEffects:             &none,
		TimeoutSeconds:          ptr.To[int32](5),
		ReinvocationPolicy:      ptr.To(admissionregv1.IfNeededReinvocationPolicy),
		AdmissionReviewVersions: []string{"v1"},
	}}
	return mutating
}

// registered is what the last registration left in the cluster: the
// versions of the webhook configurations and the guard policies.
type registered struct {
	validating, mutating owned.Version
	guard                guard.Versions
}

// Verify reads what the last registration left and registers again when
// any of it is gone or was changed by someone else: without the
// configurations nothing is validated, and without the policies nothing is
// guarded. It only reads while all is as it was, so a quiet cluster sees no
// writes. It reports whether anything had to be registered again.
func (r *Registrar) Verify(ctx context.Context) (bool, error) {
	// A registration in flight is waited for: what it leaves is what to
	// compare with, and its own writes are not someone else's changes.
	r.registering.Lock()
	r.mu.Lock()
	left := r.left
	r.mu.Unlock()
	r.registering.Unlock()
	if left == nil {
		return false, nil // nothing registered yet; Sync registers
	}
	intact, err := r.intact(ctx, left)
	if err != nil || intact {
		return false, err
	}
	// A Secret that cannot be read stops nothing: configurations someone
	// deleted must come back, with the bundle this replica holds.
	var refreshed error
	if r.Refresh != nil {
		if err := r.Refresh(ctx); err != nil {
			refreshed = fmt.Errorf("reading the CA bundle before registering again: %w", err)
		}
	}
	r.mu.Lock()
	r.changes++
	r.mu.Unlock()
	return true, errors.Join(refreshed, r.Apply(ctx))
}

// Registers tells whether the object of the admission resource gr called
// name is one the registrar writes: a change to it is a reason to Verify.
func (r *Registrar) Registers(gr schema.GroupResource, name string) bool {
	if gr.Group != admissionregv1.GroupName {
		return false
	}
	switch gr.Resource {
	case "validatingwebhookconfigurations", "mutatingwebhookconfigurations":
		return name == ConfigName
	case "validatingadmissionpolicies", "validatingadmissionpolicybindings":
		return guard.Guards(name)
	}
	return false
}

func (r *Registrar) intact(ctx context.Context, left *registered) (bool, error) {
	api := r.Client.AdmissionregistrationV1()
	if ok, err := owned.At(ctx, api.ValidatingWebhookConfigurations().Get, ConfigName, left.validating); !ok || err != nil {
		return false, wrapCheck(err)
	}
	if ok, err := owned.At(ctx, api.MutatingWebhookConfigurations().Get, ConfigName, left.mutating); !ok || err != nil {
		return false, wrapCheck(err)
	}
	return guard.Intact(ctx, r.Client, left.guard)
}

func wrapCheck(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("checking the webhook configurations: %w", err)
}
