package refusal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestReadableRefusalShortensQuotedValues(t *testing.T) {
	type container struct{ Name, Image, TerminationMessagePath string }
	template := struct {
		Labels     map[string]string
		Containers []container
	}{map[string]string{"job-name": "g1"}, []container{{"c", "busybox", "/dev/termination-log"}, {"d", "busybox", "/dev/termination-log"}}}
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	refused := apierrors.NewInvalid(gk, "g1", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template"), template, "field is immutable"),
		field.Invalid(field.NewPath("spec", "parallelism"), -1, "must be greater than or equal to 0"),
	})
	got := Readable(refused)
	if !apierrors.IsInvalid(got) {
		t.Fatalf("the shortened error is no longer Invalid: %#v", got)
	}
	msg := got.Error()
	for _, want := range []string{`Job.batch "g1" is invalid: [spec.template: Invalid value: `, `…: field is immutable`,
		`spec.parallelism: Invalid value: -1: must be greater than or equal to 0]`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "/dev/termination-log") || len(msg) > 300 {
		t.Errorf("the template is still quoted in full (%d characters):\n%s", len(msg), msg)
	}
	if strings.Contains(refused.Error(), "…") {
		t.Error("the original error was changed")
	}
	// A short value stays as the API server wrote it.
	short := apierrors.NewInvalid(gk, "g1", field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "B_b", "a lowercase RFC 1123 subdomain")})
	if got := Readable(short); got.Error() != short.Error() {
		t.Errorf("a short refusal changed: %s", got)
	}
}

// A value is cut between characters, never inside one.
func TestReadableRefusalCutsBetweenCharacters(t *testing.T) {
	value := "ab" + strings.Repeat("é", 100) // two bytes each, from an odd byte of the quoted value
	refused := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Invalid(field.NewPath("data", "v"), value, "is refused")})
	msg := Readable(refused).Error()
	if !utf8.ValidString(msg) || !strings.Contains(msg, "…: is refused") {
		t.Errorf("not cut at a character boundary: %q", msg)
	}
}

// A refusal of a field that cannot change is told apart from other
// invalid values, and from errors that are not refusals.
func TestIsImmutableChange(t *testing.T) {
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	immutable := apierrors.NewInvalid(gk, "g1", field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "{...}", "field is immutable")})
	negative := apierrors.NewInvalid(gk, "g1", field.ErrorList{field.Invalid(field.NewPath("spec", "parallelism"), -1, "must be greater than or equal to 0")})
	if !IsImmutableChange(immutable) || !IsImmutableChange(Readable(immutable)) {
		t.Error("a change of the template is not recognised")
	}
	if IsImmutableChange(negative) || IsImmutableChange(apierrors.NewBadRequest("field is immutable")) {
		t.Error("another refusal is taken for an immutable field")
	}
	// As the validation of claims and StatefulSets words it.
	for _, refused := range []struct {
		gk  schema.GroupKind
		err *field.Error
	}{
		{schema.GroupKind{Kind: "PersistentVolumeClaim"}, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")},
	} {
		if err := apierrors.NewInvalid(refused.gk, "a", field.ErrorList{refused.err}); !IsImmutableChange(err) {
			t.Errorf("a change refused as %v is not recognised", err)
		}
	}
}

// A binding of a role the writer does not hold is refused with every rule
// of the role, one a line: the condition gets their number and the first,
// and how to allow it.
func TestReadableRefusalOfAnEscalation(t *testing.T) {
	rules := []string{`{APIGroups:[""], Resources:["bindings"], Verbs:["get" "list" "watch"]}`}
	for range 70 {
		rules = append(rules, `{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["create" "delete" "patch"]}`)
	}
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, "team-admins",
		errors.New(`user "system:serviceaccount:kro-system:kro-agent" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
`+strings.Join(rules, "\n")))
	got := Readable(refused)
	if !apierrors.IsForbidden(got) {
		t.Fatalf("the shortened error is no longer Forbidden: %#v", got)
	}
	msg := got.Error()
	for _, want := range []string{
		`rolebindings.rbac.authorization.k8s.io "team-admins" is forbidden: user "system:serviceaccount:kro-system:kro-agent"`,
		`is attempting to grant RBAC permissions not currently held: 71 rules, the first {APIGroups:[""], Resources:["bindings"], Verbs:["get" "list" "watch"]};`,
		"the writer needs the verb bind on that role",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "deployments/scale") || strings.Contains(msg, "\n") {
		t.Errorf("the rules are still listed:\n%s", msg)
	}
	other := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("no"))
	if Readable(other) != other {
		t.Error("another refusal was changed")
	}
}

func TestIsUnauthorizedTellsTheAuthorizerFromAdmission(t *testing.T) {
	ns := schema.GroupResource{Resource: "namespaces"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"authorizer, namespaced", apierrors.NewForbidden(ns, "other", errors.New(`User "system:serviceaccount:kro-system:kro-agent" cannot patch resource "namespaces" in API group "" in the namespace "other"`)), true},
		{"authorizer, cluster scope", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "x", errors.New(`User "alice" cannot delete resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`)), true},
		{"admission webhook", apierrors.NewForbidden(ns, "other", errors.New(`admission webhook "deny.example.com" denied the request: no`)), false},
		{"admission policy", apierrors.NewForbidden(ns, "other", errors.New(`ValidatingAdmissionPolicy 'kro-agent-no-takeover' with binding 'kro-agent-no-takeover' denied request: cannot take over`)), false},
		{"escalation", apierrors.NewForbidden(ns, "other", errors.New(`user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`)), false},
		{"not forbidden", errors.New(`User "alice" cannot patch resource "namespaces"`), false},
	} {
		if got := IsUnauthorized(c.err); got != c.want {
			t.Errorf("%s: IsUnauthorized(%q) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// An apply of a field the kind does not declare, which the API server
// refuses as an internal error worded by its typed-patch machinery, names
// the field and the kind, and stays the same error to classify.
func TestReadableRefusalOfAnUndeclaredField(t *testing.T) {
	for _, tc := range []struct{ message, want string }{
		{"failed to create typed patch object (default/bad; kro.run/v1alpha1, Kind=WebApp): .spec.colour: field not declared in schema",
			"spec.colour: field not declared in the schema of WebApp"},
		{"failed to create typed patch object (default/x; /v1, Kind=ConfigMap): .colour: field not declared in schema",
			"colour: field not declared in the schema of ConfigMap"},
		// Two items of one key in a keyed list.
		{`failed to create typed patch object (default/dupcheck; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="web"].env: duplicate entries for key [name="A"]`,
			`spec.template.spec.containers[name="web"].env: two items have the key name="A", and server-side apply takes one item of a key in a list the schema of Deployment keys`},
		// A value of another type: what it was, when the Go syntax says.
		{"failed to create typed patch object (default/x; /v1, Kind=ConfigMap): .data: expected map, got &{[] [] true}",
			"data: the schema of ConfigMap declares a map"},
		{"failed to create typed patch object (default/y1; kro.run/v1alpha1, Kind=WebApp): .spec.name: expected string, got &value.valueUnstructured{Value:true}",
			"spec.name: the schema of WebApp declares a string, not the boolean true"},
		{"failed to create typed patch object (default/y1; kro.run/v1alpha1, Kind=WebApp): .spec.version: expected string, got &value.valueUnstructured{Value:1.1}",
			"spec.version: the schema of WebApp declares a string, not the number 1.1"},
		{"failed to create typed patch object (default/y1; kro.run/v1alpha1, Kind=WebApp): .spec.name: expected string, got &value.valueUnstructured{Value:map[string]interface {}{\"a\":\"b\"}}",
			"spec.name: the schema of WebApp declares a string, not a map"},
		{"failed to create typed patch object (default/bad; kro.run/v1alpha1, Kind=WebApp): .spec.port: expected numeric (int or float), got string",
			"spec.port: the schema of WebApp declares a number, not a string"},
		{"failed to create typed patch object (default/bad; kro.run/v1alpha1, Kind=WebApp): .spec.on: expected boolean, got &{x}",
			"spec.on: the schema of WebApp declares a boolean"},
	} {
		refused := apierrors.NewInternalError(errors.New("x"))
		refused.ErrStatus.Message = tc.message
		got := Readable(refused)
		if got.Error() != tc.want || apierrors.ReasonForError(got) != apierrors.ReasonForError(refused) {
			t.Errorf("Readable(%q) = %q (%s), want %q", tc.message, got, apierrors.ReasonForError(got), tc.want)
		}
	}
}

// An apply the API server could not fit to the kind's schema is told from
// its other internal errors and from a validation's refusal.
func TestMisfitsSchema(t *testing.T) {
	misfit := apierrors.NewInternalError(errors.New("x"))
	misfit.ErrStatus.Message = "failed to create typed patch object (default/bad; kro.run/v1alpha1, Kind=WebApp): .spec.port: expected numeric (int or float), got string"
	duplicate := apierrors.NewInternalError(errors.New("x"))
	duplicate.ErrStatus.Message = `failed to create typed patch object (default/d; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="web"].env: duplicate entries for key [name="A"]`
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{misfit, true},
		{fmt.Errorf("applying the instance: %w", misfit), true},
		{Readable(misfit), true},
		{Readable(duplicate), true},
		{apierrors.NewInternalError(errors.New(`failed calling webhook "deny.example.com": connection refused`)), false},
		{apierrors.NewInvalid(schema.GroupKind{Kind: "WebApp"}, "bad", field.ErrorList{field.Invalid(field.NewPath("spec", "port"), "eighty", "must be of type integer")}), false},
		{errors.New("failed to create typed patch object"), false},
	} {
		if got := MisfitsSchema(tc.err); got != tc.want {
			t.Errorf("MisfitsSchema(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// A refusal that stays until something changes is told apart from errors
// the next try may get past.
func TestIsLasting(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	undeclared := apierrors.NewInternalError(errors.New("x"))
	undeclared.ErrStatus.Message = "failed to create typed patch object (default/x; /v1, Kind=ConfigMap): .colour: field not declared in schema"
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Required(field.NewPath("data"), "")}), true},
		{apierrors.NewForbidden(gr, "x", errors.New(`admission webhook "deny.example.com" denied the request`)), true},
		{apierrors.NewBadRequest("the body is not JSON"), true},
		{apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		{serverError("etcdserver: request is too large"), true},
		{Readable(serverError("etcdserver: request is too large")), true},
		{undeclared, true},
		{Readable(undeclared), true},
		{fmt.Errorf("applying ConfigMap x (resource cm): %w", undeclared), true},
		{fmt.Errorf("applying ConfigMap x (resource config): %w", apierrors.NewForbidden(gr, "x", errors.New("exceeded quota"))), true},
		{apierrors.NewConflict(gr, "x", errors.New("the object has been modified")), false},
		{apierrors.NewTooManyRequests("slow down", 1), false},
		{apierrors.NewServerTimeout(gr, "patch", 1), false},
		{apierrors.NewInternalError(errors.New(`failed calling webhook "deny.example.com": connection refused`)), false},
		{apierrors.NewNotFound(gr, "x"), false},
		{errors.New("dial tcp 127.0.0.1:6443: connection refused"), false},
	} {
		if got := IsLasting(tc.err); got != tc.want {
			t.Errorf("IsLasting(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// serverError is an internal error as the client decodes the API server's
// answer when storage failed: code 500, no reason, the storage's words.
func serverError(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: message}}
}

// A refusal for the object's size in etcd's words says what was too
// large; the API server's own 413 says it already.
func TestReadableRefusalOfAnObjectTooLarge(t *testing.T) {
	got := Readable(serverError("etcdserver: request is too large"))
	if want := "the object is larger than the API server stores (etcdserver: request is too large)"; got.Error() != want {
		t.Errorf("Readable = %q, want %q", got, want)
	}
	if !TooLarge(got) {
		t.Errorf("Readable's %q is no longer TooLarge", got)
	}
	tooLarge := apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	if got := Readable(tooLarge); got != error(tooLarge) {
		t.Errorf("Readable(413) = %v, want it unchanged", got)
	}
}

// A write refused for the size of the object is told apart in each of the
// three ways the API server words it, and from other internal errors.
func TestTooLarge(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		{serverError("etcdserver: request is too large"), true},
		{serverError("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2101693 vs. 2097152)"), true},
		{fmt.Errorf("writing status: %w", serverError("etcdserver: request is too large")), true},
		{serverError("etcdserver: request timed out"), false},
		{apierrors.NewInternalError(errors.New(`failed calling webhook "deny.example.com": connection refused`)), false},
		{apierrors.NewBadRequest("etcdserver: request is too large"), false},
		{errors.New("etcdserver: request is too large"), false},
	} {
		if got := TooLarge(tc.err); got != tc.want {
			t.Errorf("TooLarge(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// A refusal wrapped in the agent's context reads in the API server's own
// words; an error that is no refusal reads as it is.
func TestMessage(t *testing.T) {
	wrapped := fmt.Errorf("writing status: %w", serverError("etcdserver: request is too large"))
	if got := Message(wrapped); got != "etcdserver: request is too large" {
		t.Errorf("Message(%v) = %q", wrapped, got)
	}
	if got := Message(errors.New("dial tcp: connection refused")); got != "dial tcp: connection refused" {
		t.Errorf("Message of an error that is no refusal = %q", got)
	}
}

// An Invalid refusal names its fields once each, in order; other errors
// name none.
func TestInvalidFields(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "x", field.ErrorList{
		field.Invalid(field.NewPath("metadata", "name"), "X", "lowercase"),
		field.Invalid(field.NewPath("metadata", "labels"), "bad key!", "name part"),
		field.Invalid(field.NewPath("metadata", "name"), "X", "too long"),
	})
	if got := InvalidFields(fmt.Errorf("applying: %w", invalid)); !slices.Equal(got, []string{"metadata.name", "metadata.labels"}) {
		t.Errorf("invalid: %q", got)
	}
	if got := InvalidFields(apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "x", errors.New("no"))); got != nil {
		t.Errorf("forbidden: %q", got)
	}
}
