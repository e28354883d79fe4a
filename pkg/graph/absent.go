package graph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kro-agent/kro-agent/pkg/celenv"
	"github.com/kro-agent/kro-agent/pkg/expr"
)

// AbsentRead is an expression's read of a field its object never has:
// one the API server never returns, or one nothing writes for an object
// as its template makes it. The schema, and so the type check, knows the
// field, and upstream kro takes such an RGD, so it is legal; but what
// waits for the value waits for good.
type AbsentRead struct {
	// Key is the key CEL finds missing.
	Key string
	// Advice says why it is missing and what to read instead.
	Advice string
}

// absentField is a field of a kind that its objects, or some of them,
// never have.
type absentField struct {
	group, kind string
	// at is the field, from the object's root; a read at or below it finds
	// nothing.
	at expr.Path
	// missing is the key CEL finds missing when it is read.
	missing string
	// advice says why n's objects never have it, and what to read instead
	// of rest, the path read below at; "" when they may have it.
	advice func(n *Node, rest expr.Path) string
}

var absentFields = []absentField{
	// The API server writes a Secret's stringData into data,
	// base64-encoded, and stores none.
	{kind: "Secret", at: expr.Path{}.Child("stringData"), missing: "stringData", advice: func(n *Node, rest expr.Path) string {
		return "no Secret read back has stringData: the API server writes it into data, base64-encoded; read " + readFromData(n.ID, rest)
	}},
	// Only a Service of type LoadBalancer gets an address from the
	// cluster's load balancer controller; status.loadBalancer of any other
	// is empty.
	{kind: "Service", at: expr.Path{}.Child("status").Child("loadBalancer").Child("ingress"), missing: "ingress", advice: func(n *Node, _ expr.Path) string {
		spec, _ := n.Template["spec"].(map[string]any)
		typ, given := spec["type"].(string)
		switch {
		case n.Template == nil, given && (typ == "LoadBalancer" || strings.Contains(typ, "${")):
			return ""
		case !given:
			typ = "ClusterIP, the default"
		}
		return fmt.Sprintf("no load balancer gives an address to a Service of type %s: only one of type LoadBalancer gets status.loadBalancer.ingress; set spec.type: LoadBalancer, or read %s.spec.clusterIP", typ, n.ID)
	}},
	// Since Kubernetes 1.24 nothing makes a token Secret for a
	// ServiceAccount, so its secrets are those its template lists.
	{kind: "ServiceAccount", at: expr.Path{}.Child("secrets"), missing: "secrets", advice: func(n *Node, _ expr.Path) string {
		if _, listed := n.Template["secrets"]; listed || n.Template == nil {
			return ""
		}
		return "nothing fills a ServiceAccount's secrets since Kubernetes 1.24, and the template lists none: make a Secret of type kubernetes.io/service-account-token with the annotation kubernetes.io/service-account.name: ${" + n.ID + ".metadata.name}, and read its data.token"
	}},
}

// warnAbsentReads notes a warning for each read, in e at path (raw is the
// field's value), of a field its object never has (absentFields), and
// keeps the first on e for the evaluation that waits for it to say why.
func (c *compiler) warnAbsentReads(e *Expression, path *field.Path, raw string) {
	var ast *cel.Ast
	for _, ref := range e.References {
		n := c.byID[ref]
		if n == nil || n.Kind == nil || n.IsCollection() {
			continue
		}
		for _, f := range absentFields {
			if n.Kind.GVK.Group != f.group || n.Kind.GVK.Kind != f.kind {
				continue
			}
			if ast == nil {
				// Parsed again, only for an expression reading such a
				// kind: the checked AST is not kept.
				var iss *cel.Issues
				if ast, iss = c.env.CEL().Parse(e.Source); iss.Err() != nil {
					return
				}
			}
			for _, p := range selections(ast, ref, true) {
				if !p.HasPrefix(f.at) {
					continue
				}
				advice := f.advice(n, p[len(f.at):])
				if advice == "" {
					continue
				}
				if e.AbsentRead == nil {
					e.AbsentRead = &AbsentRead{Key: f.missing, Advice: advice}
				}
				c.warnings = append(c.warnings, fmt.Sprintf("%s: %s reads %s.%s, but %s", path, raw, ref, f.at, advice))
			}
		}
	}
}

// readFromData is how to read, from a Secret's data, what rest of its
// stringData held: data's values are bytes, which string(...) decodes.
func readFromData(id string, rest expr.Path) string {
	sel := id + ".data"
	if len(rest) == 0 || rest[0].IsIndex {
		return sel + ", whose values are bytes (string(" + sel + "[\"key\"]))"
	}
	key := rest[0].Key
	if celenv.SelectsBare(key) {
		sel += "." + key
	} else {
		sel += "[" + strconv.Quote(key) + "]"
	}
	return "string(" + sel + ")"
}
