package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
	"github.com/kro-agent/kro-agent/pkg/simpleschema"
	"github.com/kro-agent/kro-agent/pkg/spelling"
)

// Status fields every instance has, which an RGD cannot project into.
const (
	StatusState      = "state"
	StatusConditions = "conditions"
	// StatusPlacement holds the workload cluster and region of an instance
	// placed by region (agent.kro.run/v1alpha1 Placement).
	StatusPlacement = "placement"
	// StatusObservedGeneration is the metadata.generation the state and
	// conditions describe. Tools that judge health by kstatus (Flux,
	// cli-utils' appliers) read it to tell a Ready of the previous spec
	// from one of the current. An RGD that projects a field of this name
	// keeps it (Graph.ObservedGeneration).
	StatusObservedGeneration = "observedGeneration"
)

// IsAgentStatusField reports whether k, a top-level field of an instance's
// status, is one kro-agent writes on every instance rather than one an RGD
// projects.
func IsAgentStatusField(k string) bool {
	return k == StatusState || k == StatusConditions || k == StatusPlacement
}

// Built-in instance condition types; a custom condition cannot take them.
var builtinConditionTypes = []string{v1alpha1.ConditionReady, v1alpha1.ConditionInstanceManaged,
	v1alpha1.ConditionGraphResolved, v1alpha1.ConditionResourcesReady, v1alpha1.ConditionPlaced}

// IsBuiltinCondition reports whether t is the type of a condition the
// agent sets on every instance (or, Placed, on those placed by region).
func IsBuiltinCondition(t string) bool { return slices.Contains(builtinConditionTypes, t) }

var statusPath = schemaPath.Child("status")

// compileStatus compiles the projected status fields and infers their schema.
func (c *compiler) compileStatus(status map[string]any) (*extv1.JSONSchemaProps, []*Field) {
	if _, ok := status[StatusState]; ok {
		c.errs = append(c.errs, field.Forbidden(statusPath.Child(StatusState), "state is set by kro-agent and cannot be projected"))
	}
	if _, ok := status[StatusPlacement]; ok {
		c.errs = append(c.errs, field.Forbidden(statusPath.Child(StatusPlacement), "placement is set by kro-agent for instances placed by region and cannot be projected"))
	}
	// conditions, when given, declares custom conditions (compileConditions).
	projected := map[string]any{}
	for k, v := range status {
		if !IsAgentStatusField(k) {
			projected[k] = v
		}
	}
	var fields []*Field
	s := c.statusSchema(projected, nil, &fields)
	return s, fields
}

// statusSchema walks the status map, compiling leaves and building the
// object schema around them.
func (c *compiler) statusSchema(m map[string]any, at expr.Path, fields *[]*Field) *extv1.JSONSchemaProps {
	s := &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := c.statusValueSchema(m[k], at.Child(k), fields)
		if v == nil {
			continue
		}
		prop := *v
		if source, ok := m[k].(string); ok {
			// kubectl explain tells where the value comes from. Only on
			// the field: the value's schema is also what a status list's
			// items are compared by.
			prop.Description = "Projected by kro-agent from " + source
		}
		s.Properties[k] = prop
	}
	return s
}

// statusValueSchema compiles one status value (an expression, or a map or
// list of them, as kro allows) and returns its schema; nil when it is
// invalid, with the error recorded.
func (c *compiler) statusValueSchema(value any, p expr.Path, fields *[]*Field) *extv1.JSONSchemaProps {
	fp := p.FieldPath(statusPath)
	switch v := value.(type) {
	case map[string]any:
		return c.statusSchema(v, p, fields)
	case []any:
		if len(v) == 0 {
			c.errs = append(c.errs, field.Invalid(fp, v, "an empty list has no type to project; give its items as ${...} expressions"))
			return nil
		}
		var items *extv1.JSONSchemaProps
		freeForm := false
		for i, item := range v {
			s := c.statusValueSchema(item, p.Index(i), fields)
			switch {
			case s == nil:
				return nil
			case s.Type == "":
				// An item whose type is only known at run time (dyn, a
				// ternary with omit()) may be anything.
				freeForm = true
			case items == nil:
				items = s
			case !equality.Semantic.DeepEqual(items, s):
				c.errs = append(c.errs, field.Invalid(fp.Index(i), item, fmt.Sprintf("the items of a status list must have one type: %s before, %s here", schemaType(items), schemaType(s))))
				return nil
			}
		}
		if freeForm || items == nil {
			// The structural schema rules want a type on a list's items;
			// the list itself is free-form instead.
			return &extv1.JSONSchemaProps{XPreserveUnknownFields: ptrTo(true)}
		}
		return &extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: items}}
	case string:
		segs, err := expr.Parse(v)
		if err != nil {
			c.errs = append(c.errs, field.Invalid(fp, v, err.Error()))
			return nil
		}
		if !expr.HasExpr(segs) {
			c.errs = append(c.errs, field.Invalid(fp, v, "status fields are ${...} expressions over the resources and schema; "+literalStatusAdvice(v)))
			return nil
		}
		f := c.compileField(c.env, expr.Field{Path: p, Segments: segs}, statusPath, nil)
		if f == nil {
			return nil
		}
		f.Schema = &extv1.JSONSchemaProps{Type: "string"}
		if f.Standalone() {
			inferred, err := celenv.SchemaOf(f.Exprs[0].Type)
			if err != nil {
				c.errs = append(c.errs, field.Invalid(fp, v, err.Error()))
				return nil
			}
			f.Schema = inferred
		}
		*fields = append(*fields, f)
		return f.Schema
	}
	c.errs = append(c.errs, field.Invalid(fp, value, "status fields are ${...} expressions, or maps or lists of them"))
	return nil
}

// literalStatusAdvice says what to write for a status field given as plain
// text: a SimpleSchema type, as spec takes (the field's type comes from its
// expression instead), or a constant, which is an expression too.
func literalStatusAdvice(text string) string {
	typ, _, _ := strings.Cut(text, "|")
	typ = strings.TrimSpace(typ)
	switch {
	case simpleschema.IsType(typ):
		return fmt.Sprintf("a status field takes its type from its expression, so %s is not written: give the expression whose value it holds, as ${deployment.status.availableReplicas}", typ)
	default:
		return fmt.Sprintf("a constant is written as one too: ${%s}", strconv.Quote(text))
	}
}

// schemaType names a schema's type for error messages: "string", "array of
// integer", "object".
func schemaType(s *extv1.JSONSchemaProps) string {
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		return "array of " + schemaType(s.Items.Schema)
	}
	return s.Type
}

// conditionEntry is a custom condition declared as SPEC §5 writes it.
type conditionEntry struct {
	Type              string `json:"type"`
	Status            string `json:"status"`
	Reason            string `json:"reason"`
	Message           string `json:"message"`
	CountsTowardReady *bool  `json:"countsTowardReady"`
	Polarity          string `json:"polarity"`
}

// traits are the entry's traits with their defaults; false if its polarity
// is not one there is.
func (e conditionEntry) traits() (ConditionTraits, bool) {
	t := ConditionTraits{CountsTowardReady: true, Polarity: PolarityPositive}
	if e.CountsTowardReady != nil {
		t.CountsTowardReady = *e.CountsTowardReady
	}
	switch Polarity(e.Polarity) {
	case "", PolarityPositive:
	case PolarityNegative:
		t.Polarity = PolarityNegative
	default:
		return t, false
	}
	return t, true
}

// DeclaredConditionTraits reads, without compiling anything, the traits of
// the custom conditions an RGD's status (spec.schema.status) declares as
// objects, by type: what kubectl kro explains an instance's conditions
// with. Entries it cannot read are left out; validating the RGD reports
// them.
func DeclaredConditionTraits(status runtime.RawExtension) map[string]ConditionTraits {
	out := map[string]ConditionTraits{}
	var decl struct {
		Conditions []json.RawMessage `json:"conditions"`
	}
	if err := json.Unmarshal(status.Raw, &decl); err != nil {
		return out
	}
	for _, raw := range decl.Conditions {
		var e conditionEntry
		if json.Unmarshal(raw, &e) != nil || e.Type == "" {
			continue // a ${...} entry, or one validation refuses
		}
		if t, ok := e.traits(); ok {
			out[e.Type] = t
		}
	}
	return out
}

// compileConditions compiles the custom conditions declared under
// spec.schema.status.conditions. An entry is either an object (SPEC §5) or,
// as upstream kro writes it, one expression returning
// runtime.newCondition(...) or a list of them.
func (c *compiler) compileConditions(status map[string]any) ([]*CustomCondition, []*Expression) {
	decl, ok := status[StatusConditions]
	if !ok {
		return nil, nil
	}
	path := statusPath.Child(StatusConditions)
	list, ok := decl.([]any)
	if !ok {
		c.errs = append(c.errs, field.Invalid(path, decl, "must be a list of conditions: {type, status, reason, message, countsTowardReady, polarity} or ${runtime.newCondition(...)}"))
		return nil, nil
	}
	var declared []*CustomCondition
	var computed []*Expression
	types := map[string]bool{}
	for i, entry := range list {
		ep := path.Index(i)
		switch v := entry.(type) {
		case string:
			if e := c.compileComputedCondition(v, ep, types); e != nil {
				computed = append(computed, e)
			}
		case map[string]any:
			if cond := c.compileDeclaredCondition(v, ep, types); cond != nil {
				declared = append(declared, cond)
			}
		default:
			c.errs = append(c.errs, field.Invalid(ep, entry, "a condition is {type, status, reason, message, countsTowardReady, polarity} or ${runtime.newCondition(...)}"))
		}
	}
	return declared, computed
}

// conditionEntryFields are the fields of a declared condition.
var conditionEntryFields = []string{"type", "status", "reason", "message", "countsTowardReady", "polarity"}

// conditionEntryError words the error decoding a declared condition raw
// (at ep) for its author: the field of a wrong type, with how to write it,
// or the field there is none of, with the one spelt alike.
func conditionEntryError(raw map[string]any, ep *field.Path, err error) *field.Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		v := raw[typeErr.Field]
		if typeErr.Type.Kind() != reflect.String {
			msg := "must be true or false"
			if text, ok := v.(string); ok && (text == "true" || text == "false") {
				msg += fmt.Sprintf(", not the text %q: write it without quotes", text)
			}
			return field.Invalid(ep.Child(typeErr.Field), v, msg)
		}
		return field.Invalid(ep.Child(typeErr.Field), v, fmt.Sprintf("must be a string, not a %s", typeErr.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		msg := "a declared condition has " + strings.Join(conditionEntryFields, ", ")
		if meant, ok := spelling.Closest(name, conditionEntryFields); ok {
			msg = "did you mean " + meant + "? " + msg
		}
		return field.Invalid(ep.Child(name), raw[name], msg)
	}
	return field.Invalid(ep, raw, fmt.Sprintf("must be {%s}: %v", strings.Join(conditionEntryFields, ", "), strings.TrimPrefix(err.Error(), "json: ")))
}

// compileDeclaredCondition compiles an entry written as SPEC §5 writes it.
func (c *compiler) compileDeclaredCondition(raw map[string]any, ep *field.Path, types map[string]bool) *CustomCondition {
	b, _ := json.Marshal(raw)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e conditionEntry
	if err := dec.Decode(&e); err != nil {
		c.errs = append(c.errs, conditionEntryError(raw, ep, err))
		return nil
	}
	switch {
	case !kindPattern.MatchString(e.Type):
		c.errs = append(c.errs, field.Invalid(ep.Child("type"), e.Type, "condition types are UpperCamelCase, such as "+suchAs(e.Type, true, "DatabaseReachable")))
		return nil
	case IsBuiltinCondition(e.Type):
		c.errs = append(c.errs, field.Invalid(ep.Child("type"), e.Type, "is a built-in condition type"))
		return nil
	case types[e.Type]:
		c.errs = append(c.errs, field.Duplicate(ep.Child("type"), e.Type))
		return nil
	}
	types[e.Type] = true
	traits, ok := e.traits()
	if !ok {
		c.errs = append(c.errs, field.NotSupported(ep.Child("polarity"), e.Polarity, []string{string(PolarityPositive), string(PolarityNegative)}))
	}
	cond := &CustomCondition{Type: e.Type, Reason: e.Reason, ConditionTraits: traits}
	if e.Reason != "" && !kindPattern.MatchString(e.Reason) {
		c.errs = append(c.errs, field.Invalid(ep.Child("reason"), e.Reason, "reasons are UpperCamelCase, such as "+suchAs(e.Reason, true, "CertificateIssued")))
	}
	cond.Status = c.compileCondition(c.env, e.Status, ep.Child("status"))
	if e.Message != "" {
		segs, err := expr.Parse(e.Message)
		if err != nil {
			c.errs = append(c.errs, field.Invalid(ep.Child("message"), e.Message, err.Error()))
		} else {
			cond.Message = c.compileField(c.env, expr.Field{Path: expr.Path{}.Child("message"), Segments: segs}, ep, nil)
			if m := cond.Message; m != nil && m.Standalone() && !celenv.IsString(m.Exprs[0].Type) {
				c.errs = append(c.errs, field.Invalid(ep.Child("message"), e.Message,
					fmt.Sprintf("a message must be a string, but the expression has type %s", celenv.TypeString(m.Exprs[0].Type))))
			}
		}
	}
	if cond.Status == nil {
		return nil
	}
	return cond
}

// ConditionSchema is the OpenAPI schema of a status condition, as
// metav1.Condition serializes.
func conditionSchema() extv1.JSONSchemaProps {
	str := extv1.JSONSchemaProps{Type: "string"}
	return extv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"type", "status"},
		Properties: map[string]extv1.JSONSchemaProps{
			"type":               str,
			"status":             {Type: "string", Enum: []extv1.JSON{{Raw: []byte(strconv.Quote("True"))}, {Raw: []byte(strconv.Quote("False"))}, {Raw: []byte(strconv.Quote("Unknown"))}}},
			"reason":             str,
			"message":            str,
			"lastTransitionTime": {Type: "string", Format: "date-time"},
			"observedGeneration": {Type: "integer", Format: "int64"},
		},
	}
}
