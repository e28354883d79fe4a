// Package guard holds the ValidatingAdmissionPolicies that protect what
// kro-agent manages, in every cluster it writes to: only the agent changes
// ownership labels, and the agent never takes over an object it did not
// create. They run in the API server: no webhook round trip, and they hold
// while the agent is down.
package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/owned"
	"github.com/kro-agent/kro-agent/pkg/ownership"
)

// Names of the policies; each binding has its policy's name.
const (
	LabelsPolicyName     = "kro-agent-ownership-labels"
	NoTakeoverPolicyName = "kro-agent-no-takeover"
)

// AnnotationIdentities is the annotation on each policy that records, by
// writer, the username kro-agent writes with in the cluster, as JSON
// ({"self": "system:serviceaccount:kro-system:kro-agent"}). A cluster may
// be written to by kro-agent as two identities: its own ServiceAccount,
// and a hub's kubeconfig that registers it as a workload Cluster. The
// policies recognise every identity recorded, and each writer replaces
// only its own entry: written whole for one identity, each would undo the
// other's at its next check, and deny the other's writes in between.
const AnnotationIdentities = "agent.kro.run/identities"

// Self is the writer of the policies in the agent's own cluster.
const Self = "self"

// ForCluster is the writer of the policies in the workload Cluster name.
func ForCluster(name string) string { return "cluster/" + name }

// Policies returns both policies with their bindings, for identities: the
// usernames kro-agent has in the cluster they are for, by writer.
func Policies(identities map[string]string) []Policy {
	users := slices.Sorted(maps.Values(identities))
	users = slices.Compact(users)
	annotations := map[string]string{}
	if len(identities) > 0 {
		recorded, _ := json.Marshal(identities) // a map of strings marshals; keys sorted
		annotations[AnnotationIdentities] = string(recorded)
	}
	policies := []Policy{labelsPolicy(users), noTakeoverPolicy(users)}
	for _, p := range policies {
		p.Policy.Annotations = maps.Clone(annotations)
	}
	return policies
}

// identitiesOf reads the identities recorded on a policy of kro-agent's;
// none for another's, or for one that records none.
func identitiesOf(p *admissionregv1.ValidatingAdmissionPolicy) map[string]string {
	identities := map[string]string{}
	if p == nil || p.Labels[v1alpha1.LabelManagedBy] != ownership.FieldManager {
		return identities
	}
	if err := json.Unmarshal([]byte(p.Annotations[AnnotationIdentities]), &identities); err != nil {
		return map[string]string{}
	}
	return identities
}

// isAgent is the CEL test that the request comes from one of users;
// notAgent its negation.
func isAgent(users []string) string {
	if len(users) == 1 {
		return fmt.Sprintf("request.userInfo.username == %q", users[0])
	}
	return "request.userInfo.username in " + quotedList(users)
}

func notAgent(users []string) string {
	if len(users) == 1 {
		return fmt.Sprintf("request.userInfo.username != %q", users[0])
	}
	return "!(request.userInfo.username in " + quotedList(users) + ")"
}

func quotedList(users []string) string {
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = fmt.Sprintf("%q", u)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Guards tells whether name is that of one of the policies, and so of its
// binding.
func Guards(name string) bool {
	return name == LabelsPolicyName || name == NoTakeoverPolicyName
}

// managedBy labels what the agent registers as its own.
func managedBy() map[string]string {
	return map[string]string{v1alpha1.LabelManagedBy: ownership.FieldManager}
}

// guardedPrefixes begin the label keys the ownership-labels policy
// protects.
var guardedPrefixes = []string{"kro.run/", "applyset.kubernetes.io/"}

// Guarded tells whether the ownership-labels policy protects the label
// key: on what kro-agent manages, only kro-agent may add, change or remove
// it.
func Guarded(key string) bool {
	return slices.ContainsFunc(guardedPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// Policy is a policy and its binding.
type Policy struct {
	Policy  *admissionregv1.ValidatingAdmissionPolicy
	Binding *admissionregv1.ValidatingAdmissionPolicyBinding
}

// Identity returns the username the client's credentials have in its
// cluster, from a SelfSubjectReview: what the policies recognise the agent
// by, and what no caller can claim for itself.
func Identity(ctx context.Context, client kubernetes.Interface) (string, error) {
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("finding the agent's own identity (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// Versions are what Ensure left of each object, by kind and name: what
// Intact compares with.
type Versions map[string]owned.Version

// Ensure writes both policies and their bindings whole, replacing
// whatever is there (package owned), but for the identities other writers
// recorded on each policy: writer's entry becomes agentUser. It returns
// the versions it left. The update is conditional on what it read, so a
// writer adding its identity meanwhile fails it with a conflict, and the
// next check puts both.
func Ensure(ctx context.Context, client kubernetes.Interface, writer, agentUser string) (Versions, error) {
	policies := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	applied := Versions{}
	for i, p := range Policies(nil) {
		desired := func(cur *admissionregv1.ValidatingAdmissionPolicy) *admissionregv1.ValidatingAdmissionPolicy {
			identities := identitiesOf(cur)
			identities[writer] = agentUser
			return Policies(identities)[i].Policy
		}
		v, err := owned.PutFrom(ctx, p.Policy.Name, desired, policies.Get, policies.Create, policies.Update)
		if err != nil {
			return nil, fmt.Errorf("writing %s %s: %w", policyKind, p.Policy.Name, err)
		}
		applied[policyKind+"/"+p.Policy.Name] = v
		if v, err = owned.Put(ctx, p.Binding, bindings.Get, bindings.Create, bindings.Update); err != nil {
			return nil, fmt.Errorf("writing %s %s: %w", bindingKind, p.Binding.Name, err)
		}
		applied[bindingKind+"/"+p.Binding.Name] = v
	}
	return applied, nil
}

// Retract takes writer's identity off both policies, as when the Cluster
// it stands for is deleted: the policies go on recognising the identities
// other writers recorded, and are deleted with their bindings once none is
// left, rather than deny every writer. A policy without writer's entry, or
// not kro-agent's, is left as it is. Each write is conditional on what was
// read, so an identity another writer adds meanwhile is not lost.
func Retract(ctx context.Context, client kubernetes.Interface, writer string) error {
	policies := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	for i, p := range Policies(nil) {
		cur, err := policies.Get(ctx, p.Policy.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", policyKind, p.Policy.Name, err)
		}
		identities := identitiesOf(cur)
		if _, ok := identities[writer]; !ok {
			continue
		}
		delete(identities, writer)
		if len(identities) > 0 {
			desired := Policies(identities)[i].Policy
			desired.ResourceVersion = cur.ResourceVersion
			if _, err := policies.Update(ctx, desired, metav1.UpdateOptions{FieldManager: ownership.FieldManager}); err != nil {
				return fmt.Errorf("writing %s %s: %w", policyKind, p.Policy.Name, err)
			}
			continue
		}
		// The policy first, as read: its binding goes only once it has.
		err = policies.Delete(ctx, p.Policy.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &cur.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", policyKind, p.Policy.Name, err)
		}
		if err := bindings.Delete(ctx, p.Binding.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", bindingKind, p.Binding.Name, err)
		}
	}
	return nil
}

const (
	policyKind  = "ValidatingAdmissionPolicy"
	bindingKind = "ValidatingAdmissionPolicyBinding"
)

// Intact reports whether every policy and binding Ensure wrote is still
// there as it left them, with reads only: a check that costs a quiet
// cluster no writes. Anything deleted or edited since makes it false, for
// Ensure to put back.
func Intact(ctx context.Context, client kubernetes.Interface, applied Versions) (bool, error) {
	policies := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	for _, p := range Policies(nil) {
		ok, err := owned.At(ctx, policies.Get, p.Policy.Name, applied[policyKind+"/"+p.Policy.Name])
		if ok && err == nil {
			ok, err = owned.At(ctx, bindings.Get, p.Binding.Name, applied[bindingKind+"/"+p.Binding.Name])
		}
		if err != nil {
			return false, fmt.Errorf("checking the guard policies: %w", err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// labelsPolicy is the ValidatingAdmissionPolicy (and its binding) that denies
// changes to kro.run/* and applyset.kubernetes.io/* labels on anything the
// agent manages, by anyone but the agent. It runs in the API server, so it
// holds while the agent is down, and it reads the caller's identity from
// the request's authenticated user info, which no caller can set.
//
// What the agent manages is what it applied, as its informers tell it
// (ownership.Applied), and the instances and CRDs it labels. Objects a
// controller makes with labels copied from a managed parent (a Service's
// EndpointSlices and Endpoints) carry kro.run/instance-id too, and their
// controller relabels them when the parent's labels change (an upgrade of
// kro-agent changes kro.run/kro-version; a deletion with propagationPolicy
// Orphan takes the labels off). Denying that would leave the Service's
// EndpointSlices stale, and traffic going to Pods that are gone.
func labelsPolicy(agentUsers []string) Policy {
	owned := &metav1.LabelSelector{MatchLabels: map[string]string{v1alpha1.LabelOwned: "true"}}
	var startsWith []string
	for _, p := range guardedPrefixes {
		startsWith = append(startsWith, "k.startsWith('"+p+"')")
	}
	guarded := "(" + strings.Join(startsWith, " || ") + ")"
	policy := &admissionregv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: LabelsPolicyName, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregv1.Fail),
			MatchConstraints: &admissionregv1.MatchResources{
				ObjectSelector: owned,
				ResourceRules: []admissionregv1.NamedRuleWithOperations{{RuleWithOperations: admissionregv1.RuleWithOperations{
					Operations: []admissionregv1.OperationType{admissionregv1.Update},
					Rule:       admissionregv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
			},
			MatchConditions: []admissionregv1.MatchCondition{
				{Name: "not-kro-agent", Expression: notAgent(agentUsers)},
				{Name: "instance-or-applied-by-kro-agent", Expression: instanceOrApplied},
			},
			Variables: []admissionregv1.Variable{
				{Name: "old", Expression: "oldObject.metadata.?labels.orValue({})"},
				{Name: "new", Expression: "object.metadata.?labels.orValue({})"},
				{Name: "changed", Expression: "variables.old.filter(k, " + guarded + " && (!(k in variables.new) || variables.new[k] != variables.old[k])) + " +
					"variables.new.filter(k, " + guarded + " && !(k in variables.old))"},
			},
			Validations: []admissionregv1.Validation{{
				Expression:        "size(variables.changed) == 0",
				MessageExpression: "'label ' + variables.changed[0] + ' records ownership by kro-agent; only kro-agent may change or remove it'",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	return Policy{Policy: policy, Binding: denyBinding(LabelsPolicyName)}
}

// instanceOrApplied matches the objects labelsPolicy guards: those without
// kro.run/instance-id (instances, generated CRDs) and those kro-agent's
// server-side apply wrote (ownership.Applied).
var instanceOrApplied = fmt.Sprintf("!(%q in oldObject.metadata.?labels.orValue({})) || "+
	"oldObject.metadata.?managedFields.orValue([]).exists(f, f.?manager.orValue('') == %q && f.?operation.orValue('') == %q)",
	v1alpha1.LabelInstanceID, ownership.FieldManager, metav1.ManagedFieldsOperationApply)

// noTakeoverPolicy is the ValidatingAdmissionPolicy (and its binding) that
// keeps the agent from taking over an object it did not create. The agent
// knows the objects it made from its informers, which only hold objects
// with its labels; an object of the same name made by someone else is not
// among them, and a server-side apply would quietly make it the agent's,
// to be changed and, with its instance, deleted. Such an apply is an
// update that adds kro.run/instance-id where there was none, which this
// policy denies, unless the object's owner handed it to that instance
// with the annotation kro.run/adopt-by. Updates that keep the label, and
// creates, are untouched.
func noTakeoverPolicy(agentUsers []string) Policy {
	instanceID := fmt.Sprintf("%q in ", v1alpha1.LabelInstanceID)
	policy := &admissionregv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: NoTakeoverPolicyName, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregv1.Fail),
			MatchConstraints: &admissionregv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{v1alpha1.LabelOwned: "true"}},
				ResourceRules: []admissionregv1.NamedRuleWithOperations{{RuleWithOperations: admissionregv1.RuleWithOperations{
					Operations: []admissionregv1.OperationType{admissionregv1.Update},
					Rule:       admissionregv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
			},
			MatchConditions: []admissionregv1.MatchCondition{
				{Name: "kro-agent", Expression: isAgent(agentUsers)},
				// Managed resources carry the label; instances and
				// generated CRDs do not.
				{Name: "managed-resource", Expression: instanceID + "object.metadata.?labels.orValue({})"},
			},
			Variables: handedOverVariables,
			Validations: []admissionregv1.Validation{{
				Expression:        instanceID + `oldObject.metadata.?labels.orValue({}) || variables.adoptBy != "" && variables.adoptBy == variables.instance`,
				MessageExpression: "object.kind + ' ' + object.metadata.name + ' already exists and was not created by kro-agent, which does not take over objects it did not create (unless their owner hands them to the instance with the annotation " + v1alpha1.AnnotationAdoptBy + ")'",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	return Policy{Policy: policy, Binding: denyBinding(NoTakeoverPolicyName)}
}

// handedOverVariables let the agent's update through when the object's
// owner handed it to the instance the update labels it for
// (ownership.HandedTo): adoptBy is its annotation kro.run/adopt-by as it
// was before the update, instance that instance as the annotation names
// it, "namespace/name" or, for a cluster-scoped one, "name".
var handedOverVariables = []admissionregv1.Variable{
	{Name: "adoptBy", Expression: fmt.Sprintf(`oldObject.metadata.?annotations[?%q].orValue("")`, v1alpha1.AnnotationAdoptBy)},
	{Name: "instance", Expression: fmt.Sprintf(`(object.metadata.labels[?%[1]q].orValue("") == "" ? "" : object.metadata.labels[%[1]q] + "/") + object.metadata.labels[?%[2]q].orValue("")`,
		v1alpha1.LabelInstanceNamespace, v1alpha1.LabelInstanceName)},
}

// denyBinding binds a policy to every object it matches, denying what it
// refuses.
func denyBinding(policy string) *admissionregv1.ValidatingAdmissionPolicyBinding {
	return &admissionregv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy, Labels: managedBy()},
		Spec: admissionregv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy,
			ValidationActions: []admissionregv1.ValidationAction{admissionregv1.Deny},
		},
	}
}
