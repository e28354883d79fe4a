// Package crdcheck validates a generated CustomResourceDefinition on the
// API server that will store it, with a server-side dry-run apply: the
// same validation, of the server's own version, as the real apply, without
// linking the API server's code into the agent (package offline does that,
// for checks without a cluster).
package crdcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OnServer returns a validator that dry-run applies a CRD as fieldManager.
// A CRD the API server refuses as invalid comes back as field errors with
// paths into the CRD; any other failure (unreachable, forbidden) is an
// error, since it says nothing about the CRD.
func OnServer(ctx context.Context, c client.Client, fieldManager string) func(*extv1.CustomResourceDefinition) (field.ErrorList, error) {
	return func(crd *extv1.CustomResourceDefinition) (field.ErrorList, error) {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetGroupVersionKind(extv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.DryRunAll, client.FieldOwner(fieldManager), client.ForceOwnership)
		if err == nil {
			return nil, nil
		}
		if errs := fieldErrors(err); len(errs) > 0 {
			return errs, nil
		}
		return nil, fmt.Errorf("dry-run apply of CustomResourceDefinition %s: %w", crd.Name, err)
	}
}

// fieldErrors turns an Invalid answer's causes back into field errors
// that print as the API server printed them.
func fieldErrors(err error) field.ErrorList {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out field.ErrorList
	for _, cause := range status.Status().Details.Causes {
		typ := field.ErrorType(cause.Type)
		if !knownTypes[typ] {
			typ = field.ErrorTypeInvalid
		}
		e := &field.Error{
			Type:     typ,
			Field:    cause.Field,
			BadValue: field.OmitValueType{},
			// The message already holds the type and the value.
			Detail: strings.TrimPrefix(strings.TrimPrefix(cause.Message, typ.String()), ": "),
		}
		if expression, rest, ok := quotedRule(e.Field, e.Detail); ok {
			e.BadValue, e.Detail = expression, rest
		}
		out = append(out, e)
	}
	return out
}

// quotedRule finds the expression an error about an x-kubernetes-validations
// rule or messageExpression is about (at path) in its detail, where the API
// server quotes the whole rule, a Go struct in JSON
// ({"Rule":"self > 0","Message":"",...}), before what is wrong with it.
func quotedRule(path, detail string) (expression, rest string, ok bool) {
	key := ""
	switch {
	case strings.HasSuffix(path, ".rule"):
		key = "Rule"
	case strings.HasSuffix(path, ".messageExpression"):
		key = "MessageExpression"
	default:
		return "", "", false
	}
	if !strings.HasPrefix(detail, "{") {
		return "", "", false
	}
	d := json.NewDecoder(strings.NewReader(detail))
	var rule map[string]any
	if d.Decode(&rule) != nil {
		return "", "", false
	}
	expression, ok = rule[key].(string)
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutPrefix(detail[d.InputOffset():], ": ")
	return expression, rest, ok
}

var knownTypes = map[field.ErrorType]bool{
	field.ErrorTypeNotFound: true, field.ErrorTypeRequired: true, field.ErrorTypeDuplicate: true,
	field.ErrorTypeInvalid: true, field.ErrorTypeNotSupported: true, field.ErrorTypeForbidden: true,
	field.ErrorTypeTooLong: true, field.ErrorTypeTooMany: true, field.ErrorTypeInternal: true,
	field.ErrorTypeTypeInvalid: true, field.ErrorTypeTooShort: true, field.ErrorTypeTooFew: true,
}
