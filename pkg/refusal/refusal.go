// Package refusal makes the API server's refusals of a write readable
// where users meet them: in an instance's conditions and events, and in
// kubectl kro's previews.
package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceUnavailable tells whether err refused a write of an object in
// namespace for want of it: the namespace does not exist, or is being
// deleted (terminating). Either passes once the namespace is (created
// again), so a writer waits for it rather than give up.
func NamespaceUnavailable(err error, namespace string) (terminating, ok bool) {
	var status apierrors.APIStatus
	if namespace == "" || !errors.As(err, &status) {
		return false, false
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return true, true
	}
	d := status.Status().Details
	return false, apierrors.IsNotFound(err) && d != nil && d.Kind == "namespaces" && d.Name == namespace
}

// IsImmutableChange tells whether err refuses a change to a field the API
// server lets no one change once the object exists: a Job's template, a
// Service's clusterIP, a selector, a claim's storage class. Deleting the
// object is the way through.
func IsImmutableChange(err error) bool {
	return apierrors.IsInvalid(err) && QuotesImmutableChange(err.Error())
}

// immutableWords are the ways Kubernetes' validation words a change to a
// field that cannot change once the object exists: most fields, then a
// claim's or volume's spec, a StatefulSet's (its volumeClaimTemplates, its
// selector), a Pod's, and fields that are set once.
var immutableWords = []string{
	"field is immutable",
	"is immutable after creation",
	"updates to statefulset spec for fields other than",
	"pod updates may not change fields other than",
	"may not change once set",
}

// QuotesImmutableChange tells whether message, a refusal or a condition
// quoting one, is about a field that cannot change once the object exists.
func QuotesImmutableChange(message string) bool {
	return slices.ContainsFunc(immutableWords, func(words string) bool { return strings.Contains(message, words) })
}

// quotedValueMax is how much of a refused value an error shows. The API
// server quotes the whole value an Invalid error is about: for an
// immutable Job or StatefulSet template that is the template as a Go
// struct, thousands of characters that bury the reason in the condition
// kubectl describe shows.
const quotedValueMax = 80

// Readable shortens the values an Invalid refusal quotes, keeping the
// field and the reason, and the rules a refused RBAC escalation lists. It
// keeps the error a *StatusError of the same reason and causes, so
// callers still classify it.
func Readable(err error) error {
	status, ok := err.(*apierrors.StatusError) // as the client returns it, unwrapped
	if ok && status.ErrStatus.Reason == metav1.StatusReasonForbidden {
		return readableEscalation(status)
	}
	if ok && status.ErrStatus.Code == http.StatusInternalServerError && TooLarge(status) {
		// In etcd's words alone, the refusal does not say what was large.
		short := &apierrors.StatusError{ErrStatus: *status.ErrStatus.DeepCopy()}
		short.ErrStatus.Message = "the object is larger than the API server stores (" + status.ErrStatus.Message + ")"
		return short
	}
	if ok {
		if words, ok := typedPatchWords(status.ErrStatus.Message); ok {
			short := &apierrors.StatusError{ErrStatus: *status.ErrStatus.DeepCopy()}
			short.ErrStatus.Message = words
			return short
		}
	}
	if !ok || status.ErrStatus.Reason != metav1.StatusReasonInvalid || status.ErrStatus.Details == nil {
		return err
	}
	short := &apierrors.StatusError{ErrStatus: *status.ErrStatus.DeepCopy()}
	s := &short.ErrStatus
	changed := false
	for i, c := range s.Details.Causes {
		m, ok := shortenQuotedValue(c.Message)
		if !ok {
			continue
		}
		s.Message = strings.ReplaceAll(s.Message, c.Message, m)
		s.Details.Causes[i].Message = m
		changed = true
	}
	if !changed {
		return err
	}
	return short
}

// typedPatch is how the API server refuses a server-side apply of an
// object that does not fit its kind's schema: as an internal error (500)
// whose message leads with its typed-patch machinery, the object and its
// kind (Kind=...), then the field's path with a leading dot and what is
// wrong there: a field the schema does not declare; two items of one key
// in a list the schema keys (containers by name); or a value of another
// type than the field's, the type expected, then the value in the Go syntax
// of that machinery (got &value.valueUnstructured{Value:true}) or the
// value's Go type.
var typedPatch = regexp.MustCompile(`^failed to create typed patch object \([^;]*; [^,]*, Kind=([^)]*)\): \.?(.+?): (?:(field not declared in schema)|duplicate entries for key \[(.+)\]|expected (string|numeric \(int or float\)|boolean|map|list|any scalar), got (.*))$`)

// What Readable words typedPatch's refusals with, which misfitsSchema
// knows them by.
const (
	undeclaredWords = ": field not declared in the schema of "
	duplicateWords  = ", and server-side apply takes one item of a key in a list the schema of "
)

// wrongTypeWords is a value of another type as Readable words it.
var wrongTypeWords = regexp.MustCompile(`: the schema of [^ ]+ declares a `)

// typedPatchWords words a typedPatch refusal for people: the field, what is
// wrong with it, and the kind; false for any other message.
func typedPatchWords(message string) (string, bool) {
	m := typedPatch.FindStringSubmatch(message)
	if m == nil {
		return "", false
	}
	kind, path := m[1], m[2]
	switch {
	case m[3] != "":
		return path + undeclaredWords + kind, true
	case m[4] != "":
		return path + ": two items have the key " + m[4] + duplicateWords + kind + " keys", true
	}
	return path + ": the schema of " + kind + " declares " + typeNamed(m[5]) + valueGot(m[6]), true
}

// typeNamed is a type as typedPatch's message names it, in words.
func typeNamed(expected string) string {
	switch expected {
	case "numeric (int or float)":
		return "a number"
	case "any scalar":
		return "a string, a number or a boolean"
	}
	return "a " + expected
}

// valueGot says what the value typedPatch's message shows was, when the Go
// syntax tells: a boolean or number (as YAML reads y or 1.10 written
// without quotes), text, a map or a list; "" otherwise.
func valueGot(got string) string {
	inner, ok := strings.CutPrefix(got, "&value.valueUnstructured{Value:")
	if ok {
		inner = strings.TrimSuffix(inner, "}")
	}
	switch {
	case inner == "true" || inner == "false":
		return ", not the boolean " + inner
	case ok && isNumber(inner):
		return ", not the number " + inner
	case got == "string" || ok && strings.HasPrefix(inner, `"`):
		return ", not a string"
	case got == "bool":
		return ", not a boolean"
	case strings.HasPrefix(inner, "map[") || strings.HasPrefix(got, "map["):
		return ", not a map"
	case strings.HasPrefix(inner, "[]") || strings.HasPrefix(got, "[]"):
		return ", not a list"
	}
	return ""
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// shortenQuotedValue cuts the value out of "Invalid value: VALUE: detail"
// when it is long. The detail is what follows the value's last ": ".
func shortenQuotedValue(msg string) (string, bool) {
	const prefix = "Invalid value: "
	rest, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return msg, false
	}
	end := strings.LastIndex(rest, ": ")
	if end <= quotedValueMax {
		return msg, false
	}
	cut := quotedValueMax
	for cut > 0 && !utf8.RuneStart(rest[cut]) {
		cut-- // not inside a character
	}
	return prefix + rest[:cut] + "…" + rest[end:], true
}

// escalation is how the API server refuses a role or binding that grants
// what its writer does not hold, before the rules it would grant, one a
// line.
const escalation = "is attempting to grant RBAC permissions not currently held:"

// readableEscalation replaces the rules a refused escalation lists (every
// rule of the role bound, for a binding of a role like admin: seventy
// lines) by their number and the first, and says how to allow it.
func readableEscalation(status *apierrors.StatusError) error {
	head, list, ok := strings.Cut(status.ErrStatus.Message, escalation)
	if !ok {
		return status
	}
	var rules, rest []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if strings.HasPrefix(line, "{") {
			rules = append(rules, line)
		} else if line = strings.TrimSpace(line); line != "" {
			rest = append(rest, line)
		}
	}
	if len(rules) == 0 {
		return status
	}
	msg := fmt.Sprintf("%s%s %d rules, the first %s; to bind a role granting what it does not hold itself, the writer needs the verb bind on that role (a rule on rbac.authorization.k8s.io clusterroles or roles naming it in resourceNames)",
		head, escalation, len(rules), rules[0])
	if len(rest) > 0 {
		msg += " " + strings.Join(rest, " ")
	}
	short := &apierrors.StatusError{ErrStatus: *status.ErrStatus.DeepCopy()}
	short.ErrStatus.Message = msg
	return short
}

// IsLasting tells whether err is a refusal the API server gives again to
// the same write until something changes: the object is invalid, the writer
// is forbidden (by its roles, an admission webhook or policy, a quota), the
// request is one the server does not take, or the object does not fit its
// kind's schema. A conflict, a timeout, throttling or any other server error
// may pass on the next try.
func IsLasting(err error) bool {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err):
		return true
	}
	return MisfitsSchema(err) || TooLarge(err)
}

// Message is the API server's own words of err, a refusal wrapped in the
// agent's context: the Status message, or err's text when it is no
// refusal of the API server's.
func Message(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// TooLarge tells whether err refused a write for the size of the object:
// a request past the API server's limit (413), or an object past what
// etcd stores, which the API server answers as an internal error in
// etcd's words or in those of its etcd client (the messages its own
// handlers look for, to try again without managed fields).
func TooLarge(err error) bool {
	if apierrors.IsRequestEntityTooLargeError(err) {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusInternalServerError {
		return false
	}
	msg := status.Status().Message
	return strings.Contains(msg, "etcdserver: request is too large") ||
		strings.Contains(msg, "trying to send message larger than max")
}

// MisfitsSchema tells whether err is the API server's refusal of an apply
// whose object does not fit its kind's schema (a string where it takes a
// number): an internal error that names the first such field alone.
func MisfitsSchema(err error) bool {
	var status apierrors.APIStatus
	return apierrors.IsInternalError(err) && errors.As(err, &status) && misfitsSchema(status.Status().Message)
}

// misfitsSchema tells whether message is the API server's refusal of an
// apply whose object does not fit its kind's schema (a field it does not
// declare, a value of another type), as the server words it or as Readable
// does. The server answers it as an internal error.
func misfitsSchema(message string) bool {
	return strings.HasPrefix(message, "failed to create typed patch object") ||
		strings.Contains(message, undeclaredWords) || strings.Contains(message, duplicateWords) ||
		wrongTypeWords.MatchString(message)
}

// unauthorized is how the API server's authorizer words a request it
// denies: `User "NAME" cannot VERB resource "RESOURCE" in API group …`.
// Admission webhooks and policies deny with 403 Forbidden too, in their
// own words, and granting the writer more would not get past them.
var unauthorized = regexp.MustCompile(`User ".*" cannot [a-z]+ resource "`)

// IsUnauthorized tells whether err is a request the API server's
// authorizer denied: the writer's roles lack the verb on the resource.
func IsUnauthorized(err error) bool {
	return apierrors.IsForbidden(err) && QuotesUnauthorized(err.Error())
}

// QuotesUnauthorized tells whether message, a refusal or a condition
// quoting one, is the authorizer's denial of a request.
func QuotesUnauthorized(message string) bool {
	return unauthorized.MatchString(message)
}

// QuotesEscalation tells whether message, a refusal or a condition quoting
// one, is the API server's refusal of a role or binding that grants what
// its writer does not hold: like a denial, a grant to the writer ends it
// (the verb bind or escalate, or what it would grant).
func QuotesEscalation(message string) bool {
	return strings.Contains(message, escalation)
}

// InvalidFields are the fields an Invalid refusal names, as its causes
// give them (spec.containers[0].image, metadata.labels), in order and once
// each; none for any other error.
func InvalidFields(err error) []string {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if c.Field != "" && !slices.Contains(fields, c.Field) {
			fields = append(fields, c.Field)
		}
	}
	return fields
}
