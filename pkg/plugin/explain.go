package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
)

// meanings says in words what each built-in condition type stands for.
var meanings = map[string]string{
	v1alpha1.ConditionReady:           "the object is fully reconciled and healthy; the only condition automation needs to watch",
	v1alpha1.ConditionInstanceManaged: "kro-agent has taken the instance over: finalizer and ownership labels are in place",
	v1alpha1.ConditionGraphResolved:   "every resource template rendered from the instance's values, and the status its RGD declares computed",
	v1alpha1.ConditionResourcesReady:  "every resource exists and passes its readyWhen checks",
	v1alpha1.ConditionPlaced:          "the instance, labelled agent.kro.run/region, has a cluster to run on: a Ready cluster of its region, or the one it was placed on or reconciled in before",
	v1alpha1.ConditionGraphAccepted:   "the RGD is valid: schema, expressions and dependency graph",
	v1alpha1.ConditionKindReady:       "the generated CustomResourceDefinition is applied and established",
	v1alpha1.ConditionControllerReady: "kro-agent is reconciling instances of the kind",
}

// reasonMeanings explains the built-in reasons.
var reasonMeanings = map[string]string{
	v1alpha1.ReasonWaitingForInput:          "a resource waits for a dependency to become ready or for a value that does not exist yet",
	v1alpha1.ReasonFieldUnset:               "a resource template reads a field the instance does not set and its schema gives no default, or reads the instance alone and misses a value in it (an item past the end of its list, a key its map lacks); set it on the instance",
	v1alpha1.ReasonResourceNotReady:         "a resource is not ready yet: its readyWhen is not met, or it is not created until its inputs are there (the message names it)",
	v1alpha1.ReasonApplyFailed:              "a resource could not be written: the API server refused the write, or an object kro-agent does not take over holds its name (the message says which); kro-agent tries again with backoff",
	v1alpha1.ReasonResolveFailed:            "the instance's values do not make valid resources: an expression fails on them, a forEach expands past its limit, or two resources get one name (the message says which); change the instance spec, or the RGD",
	v1alpha1.ReasonStatusFailed:             "the resources are rendered, but a field or condition of the status the RGD declares (spec.schema.status) fails on the values it reads (the message names it and says how); change the instance spec if it reads the instance, or the expression in the RGD; it is evaluated again as what it reads changes",
	v1alpha1.ReasonStatusTooLarge:           "the status the RGD declares (spec.schema.status) is computed, but the instance with it is larger than the API server stores (the message names the largest fields), so it is written without those fields; project less into them, by changing the expressions or the values they read",
	v1alpha1.ReasonGraphNotAccepted:         "the instance's RGD has no graph kro-agent can serve (invalid, or changed in a way refused as breaking): nothing is applied or deleted for it until the RGD is fixed",
	v1alpha1.ReasonReleased:                 "the instance's RGD was deleted: kro-agent took its finalizer off and manages it no more",
	v1alpha1.ReasonFinalized:                "the instance is being deleted and kro-agent is done with it: it took its finalizer off, and another controller's finalizer keeps the instance until that controller removes it",
	v1alpha1.ReasonSuspended:                "the instance carries kro.run/reconcile: suspended; nothing is written",
	v1alpha1.ReasonDeleting:                 "the instance is being deleted, resources in reverse topological order",
	v1alpha1.ReasonInvalidResourceGraph:     "the RGD is invalid; the message is the validation error",
	v1alpha1.ReasonBreakingChange:           "the RGD's new schema would break stored instances; it is applied once none is left, or at once if the RGD is annotated to force it",
	v1alpha1.ReasonKindPending:              "work in progress: nothing has reported a result yet (for KindReady: the CRD is not established yet)",
	v1alpha1.ReasonNotServing:               "instances of the kind are not being reconciled",
	v1alpha1.ReasonServingEarlierGeneration: "instances are reconciled with the graph of an earlier generation of the RGD (the message names it), as its latest could not be applied (KindReady says why); they get the latest once it is",
	v1alpha1.ReasonKindNotWatched:           "kro-agent cannot list a kind the graph manages (its role does not grant it, most often), so it cannot see those objects: nothing is applied, pruned or deleted for an instance until it can; the message says what to grant",
	v1alpha1.ReasonStaysPlaced:              "the instance's region label changed after it was placed; it stays on its cluster, where its resources are (delete and create it again to move it)",
	v1alpha1.ReasonStaysLocal:               "the instance was given a region label after kro-agent reconciled it in the local cluster; it stays there, where its resources are (delete and create it again to place it)",
}

// unevaluatedMeanings explains the reasons kro-agent gives a condition the
// RGD declares whose status expression gave no status.
var unevaluatedMeanings = map[string]string{
	v1alpha1.ReasonWaitingForInput:  "its status expression reads a resource or a field that does not exist yet (the message names it); it is evaluated again as that changes",
	v1alpha1.ReasonEvaluationFailed: "its status expression fails on the values it reads (the message says how); it is evaluated again as they change",
}

// ExplainedCondition is one condition with its explanation.
type ExplainedCondition struct {
	Object             string `json:"object"`
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message,omitempty"`
	Meaning            string `json:"meaning"`
	ReasonMeaning      string `json:"reasonMeaning,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration"`
	Generation         int64  `json:"generation"`
	Stale              bool   `json:"stale"`
	// StaleReason says why a stale condition lags behind the generation.
	StaleReason string `json:"staleReason,omitempty"`
	// LastTransitionTime is the condition's, as RFC 3339, for programs;
	// Since is how long ago that was, for people.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Since              string `json:"since,omitempty"`
}

// Why a condition can lag behind its object's generation.
const (
	notCaughtUp = "the agent has not caught up"
	suspended   = "the instance is suspended (" + v1alpha1.AnnotationReconcile + "=" + v1alpha1.ReconcileSuspended + "): kro-agent leaves its conditions as they were until the annotation is removed"
	rgdGone     = "its ResourceGraphDefinition was deleted: kro-agent manages it no more"
	deleting    = "the instance is being deleted: kro-agent reports the deletion in ResourcesReady and Ready, and leaves the other conditions as they were before it"
)

// lagOf says why the conditions of an instance can lag behind its
// generation; behind says why kro-agent has not processed it. Marking an
// instance deleted moves its generation on: once Ready tells of the
// deletion, kro-agent has caught up, and what lags is what a deletion does
// not evaluate again.
func lagOf(instance *unstructured.Unstructured, behind string) string {
	if v1alpha1.IsSuspended(instance) {
		return suspended
	}
	if ready := findCondition(instance, v1alpha1.ConditionReady); instance.GetDeletionTimestamp() != nil && ready != nil && ready.ObservedGeneration >= instance.GetGeneration() {
		return deleting
	}
	return behind
}

// behind says why kro-agent has not caught up with an object, asked only
// for one whose conditions are stale: its Lease's word when no replica
// leads, notCaughtUp otherwise.
func (c *cluster) behind(ctx context.Context, objects ...*unstructured.Unstructured) string {
	stale := false
	for _, u := range objects {
		if u == nil {
			continue
		}
		for _, cond := range conditionsOf(u) {
			stale = stale || cond.ObservedGeneration < u.GetGeneration()
		}
	}
	if !stale {
		return notCaughtUp
	}
	if lease, leading := c.agentLeader(ctx); !leading {
		return lease
	}
	return notCaughtUp
}

// explainConditions explains the conditions of u, an instance or an RGD;
// custom are the traits of the custom conditions an instance's RGD declares
// (graph.DeclaredConditionTraits), nil for an RGD; lag says why a stale
// condition of u is stale.
func explainConditions(object string, u *unstructured.Unstructured, custom map[string]graph.ConditionTraits, lag string, now time.Time) []ExplainedCondition {
	var out []ExplainedCondition
	for _, c := range conditionsOf(u) {
		e := ExplainedCondition{
			Object: object, Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			Meaning:            meaningOf(c.Type, custom),
			ObservedGeneration: c.ObservedGeneration, Generation: u.GetGeneration(),
			Stale: c.ObservedGeneration < u.GetGeneration(),
		}
		if e.Stale {
			e.StaleReason = lag
		}
		if _, builtIn := meanings[c.Type]; builtIn {
			e.ReasonMeaning = reasonMeanings[c.Reason]
		} else if _, declared := custom[c.Type]; declared && c.Status == metav1.ConditionUnknown {
			// A declared condition's reason is its RGD author's word,
			// but for one whose expression gave no status.
			e.ReasonMeaning = unevaluatedMeanings[c.Reason]
		}
		if !c.LastTransitionTime.IsZero() {
			e.LastTransitionTime = c.LastTransitionTime.UTC().Format(time.RFC3339)
			e.Since = age(&c.LastTransitionTime, now)
		}
		out = append(out, e)
	}
	return out
}

// meaningOf says what a condition type stands for and, for a custom one,
// how it bears on Ready.
func meaningOf(conditionType string, custom map[string]graph.ConditionTraits) string {
	if m, ok := meanings[conditionType]; ok {
		return m
	}
	if custom == nil {
		return "not a condition kro-agent sets"
	}
	t, declared := custom[conditionType]
	if !declared {
		// The agent removes any other condition from its instances.
		return "computed by an expression of the RGD (runtime.newCondition); does not count toward Ready"
	}
	negative := t.Polarity == graph.PolarityNegative
	meaning := "declared by the RGD"
	if negative {
		meaning += " with negative polarity: True is bad"
	}
	switch {
	case !t.CountsTowardReady:
		return meaning + "; does not count toward Ready"
	case negative:
		return meaning + "; counts toward Ready: while it is True, Ready is not True"
	default:
		return meaning + "; counts toward Ready: unless it is True, Ready is not True"
	}
}

type explainOptions struct {
	*Options
	printFlags
	color string
}

func newExplainCommand(parent *Options) *cobra.Command {
	o := &explainOptions{Options: parent}
	cmd := instanceCommand(parent, "explain-conditions (KIND NAME | KIND/NAME | -f FILE)",
		"Explain every condition of an instance and of its RGD",
		`explain-conditions prints each condition of the instance and of its ResourceGraphDefinition:
what it means, its status and why, since when, and whether it is stale (observedGeneration
behind metadata.generation: the agent has not processed the latest change yet, the instance
is suspended or being deleted, or its RGD was deleted), and why. Given an RGD (rgd NAME), it explains the
RGD's conditions alone.`, true, []string{"json", "yaml"}, &o.printFlags, &o.color, o.run)
	cmd.Example = `  kubectl kro explain-conditions webapp demo
  kubectl kro explain-conditions rgd webapp`
	return cmd
}

func (o *explainOptions) run(ctx context.Context, kind, name string) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	conds, unread, err := c.explain(ctx, kind, name, time.Now())
	if err != nil {
		return err
	}
	if unread != nil {
		fmt.Fprintf(o.Streams.ErrOut, "Warning: %s; the conditions of the instance alone are explained, and those it declares only by their type.\n", unread.why())
	}
	if o.output != "" {
		return o.printObject(o.Streams.Out, conds)
	}
	printExplained(o.Streams.Out, conds, newPalette(o.Streams.Out, o.color))
	return nil
}

// explain explains the conditions of the instance KIND NAME and of its
// RGD, or of the RGD alone when KIND names RGDs. Those of an instance whose
// RGD the user may not read are explained alone, and unread says so.
func (c *cluster) explain(ctx context.Context, kind, name string, now time.Time) (conds []ExplainedCondition, unread *unreadableRGDError, err error) {
	rgd, err := c.rgdNamed(ctx, kind, name)
	if err != nil {
		return nil, nil, err
	}
	var instance *unstructured.Unstructured
	var instanceKind string
	var custom map[string]graph.ConditionTraits
	if rgd == nil {
		s, err := c.load(ctx, kind, name)
		var released *releasedError
		if errors.As(err, &released) {
			// No RGD to explain: the instance's conditions say it was released.
			return explainConditions(released.kind+"/"+name, released.instance, nil, rgdGone, now), nil, nil
		}
		if errors.As(err, &unread) {
			inst := unread.instance
			return explainConditions(unread.kind+"/"+name, inst, nil, lagOf(inst, c.behind(ctx, inst)), now), unread, nil
		}
		if err != nil {
			return nil, nil, err
		}
		rgd, instance, instanceKind = s.rgd, s.instance, s.mapping.GroupVersionKind.Kind
		var status runtime.RawExtension
		if sch := rgd.Spec.Schema; sch != nil {
			status = sch.Status
		}
		custom = graph.DeclaredConditionTraits(status)
	}
	rgdObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rgd)
	if err != nil {
		return nil, nil, err
	}
	rgdU := &unstructured.Unstructured{Object: rgdObj}
	lag := c.behind(ctx, rgdU, instance)
	if instance != nil {
		conds = explainConditions(instanceKind+"/"+instance.GetName(), instance, custom, lagOf(instance, lag), now)
	}
	return append(conds, explainConditions("ResourceGraphDefinition/"+rgd.Name, rgdU, nil, lag, now)...), nil, nil
}

func printExplained(w io.Writer, conds []ExplainedCondition, p palette) {
	last := ""
	for _, c := range conds {
		if c.Object != last {
			fmt.Fprintf(w, "%s\n", p.bold(c.Object))
			last = c.Object
		}
		stale := ""
		if c.Stale {
			stale = fmt.Sprintf(" (STALE: observed generation %d, object is at %d; %s)", c.ObservedGeneration, c.Generation, c.StaleReason)
		}
		fmt.Fprintf(w, "  %s=%s  reason %s, since %s%s\n", c.Type, p.verdict(c.Status), c.Reason, orDash(c.Since), stale)
		fmt.Fprintf(w, "    means:  %s\n", c.Meaning)
		if c.Message != "" {
			fmt.Fprintf(w, "    why:    %s\n", indented(c.Message, "            "))
		}
		if c.ReasonMeaning != "" { // none for a reason that only says all is well
			fmt.Fprintf(w, "    reason: %s\n", c.ReasonMeaning)
		}
	}
}
