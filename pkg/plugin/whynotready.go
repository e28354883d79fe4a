package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/graph"
	"github.com/kro-agent/kro-agent/pkg/limitrange"
	"github.com/kro-agent/kro-agent/pkg/ownership"
	"github.com/kro-agent/kro-agent/pkg/podsecurity"
	"github.com/kro-agent/kro-agent/pkg/quota"
	"github.com/kro-agent/kro-agent/pkg/refusal"
	"github.com/kro-agent/kro-agent/pkg/resolve"
	"github.com/kro-agent/kro-agent/pkg/webhookcall"
)

// ErrNotReady makes why-not-ready exit 1 after printing its diagnosis.
var ErrNotReady = errors.New("not ready")

// Diagnosis is why-not-ready's answer.
type Diagnosis struct {
	// Instance is the instance diagnosed, "Kind namespace/name"; "" for
	// an RGD.
	Instance string `json:"instance,omitempty"`
	Ready    bool   `json:"ready"`
	// Cause is the first match of: RGD not Active, suspended, stale
	// conditions, blocking resource, instance condition.
	Cause    string   `json:"cause,omitempty"`
	Resource *Row     `json:"resource,omitempty"`
	Details  []string `json:"details,omitempty"`
	// Pods are what keeps the Pods of a blocking workload from being
	// ready.
	Pods   []PodTrouble `json:"pods,omitempty"`
	Events []string     `json:"events,omitempty"`
	Advice string       `json:"advice,omitempty"`
}

type whyOptions struct {
	*Options
	printFlags
	color    string
	watch    bool
	interval time.Duration
}

func newWhyNotReadyCommand(parent *Options) *cobra.Command {
	o := &whyOptions{Options: parent}
	cmd := instanceCommand(parent, "why-not-ready (KIND NAME | KIND/NAME | -f FILE)",
		"Find the root cause that keeps an instance from being Ready",
		`why-not-ready walks from the RGD through the instance to the earliest resource, in
topological order, that blocks readiness, and prints the root cause: the RGD not Active,
the instance suspended, conditions stale (agent not running or behind), or the blocking
resource with its failing readyWhen, the values it read, its health and its recent events.
Given an RGD (rgd NAME), it says why the RGD is not Active. Exits 0 when the instance
is Ready (the RGD Active) and 1 otherwise, for scripts. --watch waits for that: it prints
the diagnosis again whenever it changes (it watches the instance, its RGD and what its tree
was read from, by metadata) and ends, exiting 0, once the instance is Ready.`, true, []string{"json", "yaml"}, &o.printFlags, &o.color, o.run)
	addWatchFlags(cmd, &o.watch, &o.interval)
	cmd.Example = `  kubectl kro why-not-ready webapp demo
  kubectl kro why-not-ready rgd webapp
  kubectl kro why-not-ready webapp demo --watch`
	return cmd
}

func (o *whyOptions) run(ctx context.Context, kind, name string) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	var d *Diagnosis
	if !o.watch {
		if d, err = c.whyNotReady(ctx, kind, name); err != nil {
			return err
		}
		if err := o.print(d); err != nil {
			return err
		}
	} else {
		err = redrawOnChange(ctx, newListWatch(c.metadata, o.Streams.ErrOut), o.Streams.Out, o.output, o.interval, func() (*watchView, error) {
			rc, reads := c.recording()
			read, err := rc.whyNotReady(ctx, kind, name)
			if err != nil {
				return nil, err
			}
			key, err := json.Marshal(read)
			if err != nil {
				return nil, err
			}
			d = read
			return &watchView{key: string(key), lists: reads.lists, draw: func() error { return o.print(read) }, done: read.Ready}, nil
		})
		if err != nil {
			return err
		}
	}
	if d == nil || !d.Ready {
		return ErrNotReady
	}
	return nil
}

// whyNotReady diagnoses the instance KIND NAME, or the RGD NAME when KIND
// names RGDs.
func (c *cluster) whyNotReady(ctx context.Context, kind, name string) (*Diagnosis, error) {
	rgd, err := c.rgdNamed(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	if rgd != nil {
		c.noteObject(rgdGVR, "", rgd.Name, rgd)
		return c.diagnoseRGD(ctx, rgd), nil
	}
	s, err := c.load(ctx, kind, name)
	var released *releasedError
	var unreadable *unreadableRGDError
	switch {
	case errors.As(err, &released):
		// Its RGD coming back is what would change it.
		c.noteObject(rgdGVR, "", released.rgd, nil)
		d := diagnoseReleased(released)
		d.Instance = instanceName(released.kind, released.instance)
		return d, nil
	case errors.As(err, &unreadable):
		c.noteObject(unreadable.mapping.Resource, unreadable.instance.GetNamespace(), unreadable.instance.GetName(), unreadable.instance)
		d := diagnoseUnreadable(unreadable)
		if !d.Ready {
			d.Events = c.recentEvents(ctx, unreadable.instance)
			c.unhealthyMember(ctx, d, unreadable)
		}
		d.Instance = instanceName(unreadable.kind, unreadable.instance)
		return d, nil
	case err != nil:
		return nil, err
	}
	d := c.diagnose(ctx, s)
	d.Instance = instanceName(s.mapping.GroupVersionKind.Kind, s.instance)
	return d, nil
}

// print writes the diagnosis as text, or in the -o format.
func (o *whyOptions) print(d *Diagnosis) error {
	if o.output != "" {
		return o.printObject(o.Streams.Out, d)
	}
	printDiagnosis(o.Streams.Out, d, newPalette(o.Streams.Out, o.color))
	return nil
}

// diagnoseReleased explains an instance whose RGD was deleted: nothing
// will make it Ready but the RGD coming back.
func diagnoseReleased(e *releasedError) *Diagnosis {
	inst := e.instance
	return &Diagnosis{
		Cause: e.Error(),
		Advice: fmt.Sprintf("apply ResourceGraphDefinition %s (or another for %s) again and kro-agent takes it back; deleting it now leaves its resources, which carry the label %s=%s (kubectl kro tree %s %s%s lists them)",
			e.rgd, e.kind, v1alpha1.LabelInstanceID, inst.GetUID(), strings.ToLower(e.kind), inst.GetName(), namespaceFlag(inst.GetNamespace())),
	}
}

// diagnoseUnreadable diagnoses an instance whose RGD the user may not read
// from what kro-agent reported on it: without the graph there is no walk
// to the blocking resource, but the conditions name it, as far as
// kro-agent got, and say why.
func diagnoseUnreadable(e *unreadableRGDError) *Diagnosis {
	inst := e.instance
	d := asReported(e.kind, inst)
	if !d.Ready && d.Advice == "" {
		d.Advice = e.why() + "; with it, why-not-ready walks the graph to the resource that blocks, and tells what keeps that one from being ready"
	}
	return d
}

// asReported diagnoses the instance inst of kind from what kro-agent
// reported on it alone, for a user who may not look at what it reports on.
func asReported(kind string, inst *unstructured.Unstructured) *Diagnosis {
	ref := kind + "/" + inst.GetName()
	ready := findCondition(inst, v1alpha1.ConditionReady)
	switch {
	case ready == nil:
		return &Diagnosis{Cause: ref + " has no Ready condition: kro-agent has not processed it", Advice: adviceUnprocessed}
	case ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == inst.GetGeneration() && inst.GetDeletionTimestamp() == nil:
		return &Diagnosis{Ready: true, Cause: ref + " is Ready"}
	}
	d := &Diagnosis{Cause: fmt.Sprintf("%s is not Ready, as kro-agent reports: %s", ref, orDash(ready.Message))}
	switch {
	case inst.GetDeletionTimestamp() != nil:
		d.Cause = ref + " is being deleted"
	case ready.ObservedGeneration < inst.GetGeneration():
		d.Cause = fmt.Sprintf("%s changed since kro-agent last reported on it (it is at generation %d, its Ready condition at %d): %s=%s, as it was then",
			ref, inst.GetGeneration(), ready.ObservedGeneration, ready.Type, ready.Status)
	}
	for _, t := range []string{v1alpha1.ConditionInstanceManaged, v1alpha1.ConditionGraphResolved, v1alpha1.ConditionResourcesReady} {
		if c := findCondition(inst, t); c != nil && c.Status != metav1.ConditionTrue {
			d.Details = append(d.Details, conditionLine(*c))
		}
	}
	if v1alpha1.IsSuspended(inst) {
		d.Details = append(d.Details, fmt.Sprintf("it is suspended (kubectl annotate %s %s%s %s- resumes it)", strings.ToLower(kind), inst.GetName(), namespaceFlag(inst.GetNamespace()), v1alpha1.AnnotationReconcile))
	}
	return d
}

// unhealthyMember adds to d, the diagnosis of an instance whose RGD cannot
// be read, the first of its objects, in the order they were created, whose
// health is not Current: what its readyWhen says is not known without the
// graph, but what keeps it from being healthy is (a Deployment's
// ReplicaFailure quoting a ResourceQuota, its Pods' troubles).
func (c *cluster) unhealthyMember(ctx context.Context, d *Diagnosis, e *unreadableRGDError) {
	t, s, err := c.unreadableTree(ctx, e, 0)
	if err != nil {
		return
	}
	where := c.members(s)
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.object == nil || r.Health == "" || r.Health == status.CurrentStatus.String() {
			continue
		}
		d.Resource = r
		advised := false
		for _, cond := range troubled(conditionsOf(r.object)) {
			d.Details = append(d.Details, fmt.Sprintf("%s %s: %s", r.Kind, r.Name, conditionLine(cond)))
			if advice := admissionAdvice(cond.Message, r, true); advice != "" && !isInstance(r.object) {
				if !advised {
					// The advice it takes the place of.
					d.Details = append(d.Details, e.why())
				}
				d.Advice, advised = advice, true
			}
		}
		where.explainPods(ctx, d, r, advised)
		return
	}
}

// heldInDeletion is the resource of s, an instance being deleted, that is
// terminating and not gone yet, nil for none: of several, the one last in
// topological order, as kro-agent deletes in reverse and waits for it.
func (c *cluster) heldInDeletion(ctx context.Context, s *subject) *Row {
	tree, err := c.buildTree(ctx, s)
	if err != nil || tree == nil {
		return nil
	}
	for i := len(tree.Rows) - 1; i >= 0; i-- {
		if r := &tree.Rows[i]; r.Ready == VerdictDeleting && r.object != nil {
			return r
		}
	}
	return nil
}

// conditionLine is one condition as a diagnosis shows it among its details.
func conditionLine(c metav1.Condition) string {
	if c.Message == "" {
		return fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason)
	}
	return fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
}

// nextRetry is when kro-agent tries again a write the API server refused,
// when nothing it follows changes: its work queue's backoff.
const nextRetry = "at its next retry (a second after the first refusal, the wait doubling with each, up to 16 minutes)"

// What to do about conditions the agent has not written, of an instance or
// an RGD.
const (
	adviceUnprocessed   = "check that kro-agent is running (its Lease kro-agent.kro.run names the leader) and that its logs show no error"
	adviceStale         = "kro-agent has not processed the latest change: check that it is running and not failing"
	adviceStatusRefused = "kro-agent processes the instance, but the API server refuses its status as the last event above says: for a denial, grant what it names, where it says; kro-agent tries again as soon as a grant is aggregated into its role or an admission policy or webhook changes, and otherwise " + nextRetry
	adviceTooLarge      = "make the instance's spec smaller: the API server stores an object with its status only up to etcd's request limit (1.5 MiB unless its --max-request-bytes says otherwise); kro-agent writes the status as soon as the spec changes. Until then, deleting the instance may be refused the same way, as marking it deleted makes it larger"
	adviceNoLeader      = "start kro-agent: kubectl -n kro-system get pods -l app.kubernetes.io/name=kro-agent shows its replicas and why they do not run; kro-agent processes what is waiting as soon as one leads"
)

// notProcessed is the diagnosis of an object kro-agent has not processed,
// or not in its latest change (cause, with details); advice is what to do
// when kro-agent runs. For an instance (inst; nil for an RGD, which ref
// names) whose latest event tells a status write the API server refused,
// that is the diagnosis: an agent processes it. Otherwise kro-agent's
// Lease says whether one runs.
func (c *cluster) notProcessed(ctx context.Context, inst *unstructured.Unstructured, ref, cause string, details []string, advice string) *Diagnosis {
	d := &Diagnosis{Cause: cause, Details: details, Advice: advice}
	if inst != nil {
		d.Events = c.recentEvents(ctx, inst)
		last := ""
		if n := len(d.Events); n > 0 {
			last = d.Events[n-1]
		}
		refused := "Warning " + v1alpha1.EventStatusWriteFailed + ": "
		switch {
		case strings.HasPrefix(last, refused+v1alpha1.InstanceTooLargeForStatus):
			d.Cause = ref + " is too large to be stored with a status: the API server refuses kro-agent's writes of it"
			d.Advice = adviceTooLarge
			return d
		case strings.HasPrefix(last, refused):
			d.Cause = ref + "'s status is not up to date: the API server refuses kro-agent's writes of it"
			d.Advice = adviceStatusRefused
			return d
		}
	}
	if lease, leading := c.agentLeader(ctx); lease != "" {
		d.Details = append(d.Details, lease)
		if !leading {
			d.Advice = adviceNoLeader
		}
	}
	return d
}

// diagnoseRGD says why an RGD is not Active, for why-not-ready given the
// RGD itself.
func (c *cluster) diagnoseRGD(ctx context.Context, rgd *v1alpha1.ResourceGraphDefinition) *Diagnosis {
	ref := "ResourceGraphDefinition " + rgd.Name
	ready := meta.FindStatusCondition(rgd.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case len(rgd.Status.Conditions) == 0:
		return c.notProcessed(ctx, nil, ref, ref+" has no conditions: kro-agent has not processed it", nil, adviceUnprocessed)
	case ready != nil && ready.ObservedGeneration < rgd.Generation:
		return c.notProcessed(ctx, nil, ref, fmt.Sprintf("%s's conditions are stale: they describe generation %d, the RGD is at %d", ref, ready.ObservedGeneration, rgd.Generation),
			[]string{fmt.Sprintf("Ready=%s (%s): %s", ready.Status, ready.Reason, ready.Message)}, adviceStale)
	case rgd.Status.State == v1alpha1.StateActive:
		kind := rgdKind(rgd).Kind
		return &Diagnosis{Ready: true, Cause: fmt.Sprintf("%s is Active: it serves %s (kubectl kro status rgd %s lists its instances)", ref, kind, rgd.Name)}
	}
	d := rgdNotActive(rgd, nil)
	if len(d.Details) == 0 {
		// No condition says why: say what compiling it here finds.
		if _, err := graph.Compile(rgd, graph.Options{Resolver: c.resolver, AllowUnknownKinds: true}); err != nil {
			d.Details = append(d.Details, err.Error())
		}
	}
	// When it stopped being Active, and what it said then.
	d.Events = c.recentEventsAbout(ctx, v1alpha1.ResourceGraphDefinitionGroupKind.Kind, "", rgd.Name, rgd.UID)
	return d
}

// rgdNotActive explains an RGD that is not Active from its conditions, or
// from graphErr, what compiling it gave, when none says why.
func rgdNotActive(rgd *v1alpha1.ResourceGraphDefinition, graphErr error) *Diagnosis {
	d := &Diagnosis{Cause: fmt.Sprintf("ResourceGraphDefinition %s is not Active (state %q)", rgd.Name, orDash(string(rgd.Status.State)))}
	d.Advice = "fix the RGD (kubectl kro validate -f rgd.yaml shows every error); instances resume once it is Active"
	for _, cond := range rgd.Status.Conditions {
		if cond.Type != v1alpha1.ConditionReady && cond.Status != metav1.ConditionTrue {
			d.Details = append(d.Details, conditionLine(cond))
			if cond.Type == v1alpha1.ConditionControllerReady && cond.Reason == v1alpha1.ReasonKindNotWatched {
				d.Advice = "grant kro-agent the kind named above, as the message says (the RGD is fine); kro-agent lists it again within half a minute, and its instances resume then"
			}
			if cond.Type == v1alpha1.ConditionGraphAccepted && graph.MissingKind(cond.Message) {
				d.Advice = "install the CRD of the kind named above (kro-agent compiles the RGD again when a CRD of its group comes), or change the RGD not to use it; instances resume once it is Active"
			}
			if cond.Type == v1alpha1.ConditionKindReady && cond.Reason == v1alpha1.ReasonBreakingChange {
				d.Advice = fmt.Sprintf("undo the change of the schema, or make it one stored instances keep working with (a new field with a default); if they may break, kubectl annotate rgd %s %s=true applies it; instances resume once it is Active",
					rgd.Name, v1alpha1.AnnotationAllowBreakingChanges)
				if served := meta.FindStatusCondition(rgd.Status.Conditions, v1alpha1.ConditionControllerReady); served != nil && served.Status == metav1.ConditionTrue {
					// Served with the graph of before, the instances can
					// be deleted (held ones wait on the RGD).
					d.Advice += "; it is also applied once no instance is left"
				}
			}
		}
	}
	if graphErr != nil && len(d.Details) == 0 {
		d.Details = append(d.Details, graphErr.Error())
	}
	return d
}

// diagnose finds the first root cause, in order of precedence.
func (c *cluster) diagnose(ctx context.Context, s *subject) *Diagnosis {
	inst := s.instance
	instRef := s.mapping.GroupVersionKind.Kind + "/" + inst.GetName()
	if s.rgd.Status.State != v1alpha1.StateActive {
		// Instances of an RGD whose latest change was refused are still
		// reconciled with the graph of the generation before.
		if ready := findCondition(inst, v1alpha1.ConditionReady); ready != nil && ready.Status == metav1.ConditionTrue &&
			ready.ObservedGeneration == inst.GetGeneration() && inst.GetDeletionTimestamp() == nil {
			return &Diagnosis{Ready: true, Cause: fmt.Sprintf("%s is Ready, though ResourceGraphDefinition %s is not Active (kubectl kro why-not-ready rgd %s says why)", instanceName(s.mapping.GroupVersionKind.Kind, inst), s.rgd.Name, s.rgd.Name)}
		}
		return rgdNotActive(s.rgd, s.graphErr)
	}
	if inst.GetDeletionTimestamp() != nil {
		return c.deletionDiagnosis(ctx, s, instRef)
	}
	if v1alpha1.IsSuspended(inst) {
		d := &Diagnosis{
			Cause:  instRef + " is suspended by the annotation " + v1alpha1.AnnotationReconcile + "=" + v1alpha1.ReconcileSuspended,
			Advice: fmt.Sprintf("kubectl annotate %s %s%s %s- to resume", strings.ToLower(s.mapping.GroupVersionKind.Kind), inst.GetName(), namespaceFlag(inst.GetNamespace()), v1alpha1.AnnotationReconcile),
		}
		// GraphResolved is not touched while suspended: it tells the
		// generation last applied.
		if gr := findCondition(inst, v1alpha1.ConditionGraphResolved); gr != nil && gr.ObservedGeneration < inst.GetGeneration() {
			d.Details = append(d.Details, fmt.Sprintf("the instance changed since kro-agent last applied it (generation %d; it is at %d): the change is applied once it is resumed",
				gr.ObservedGeneration, inst.GetGeneration()))
		}
		return d
	}
	conds := conditionsOf(inst)
	ready := findCondition(inst, v1alpha1.ConditionReady)
	switch {
	case len(conds) == 0:
		return c.notProcessed(ctx, inst, instRef, instRef+" has no conditions: kro-agent has not processed it", nil, adviceUnprocessed)
	case ready != nil && ready.ObservedGeneration < inst.GetGeneration():
		return c.notProcessed(ctx, inst, instRef, fmt.Sprintf("%s's conditions are stale: they describe generation %d, the instance is at %d", instRef, ready.ObservedGeneration, inst.GetGeneration()),
			[]string{fmt.Sprintf("Ready=%s (%s): %s", ready.Status, ready.Reason, ready.Message)}, adviceStale)
	}
	if d := placementDiagnosis(s, instRef); d != nil {
		// Among them, for one placed again, that its Cluster was deleted
		// and what was left there.
		d.Events = c.recentEvents(ctx, inst)
		return d
	}
	if cond := findCondition(inst, v1alpha1.ConditionGraphResolved); cond != nil && cond.Reason == v1alpha1.ReasonFieldUnset {
		return &Diagnosis{
			Cause:   instRef + " does not set a value its resources are rendered from",
			Details: []string{conditionLine(*cond)},
			Advice: fmt.Sprintf("set it on the instance (kubectl edit %s %s%s), or change ResourceGraphDefinition %s: a default for the field in its schema (| default=...), or an expression that does without it; kro-agent goes on as soon as it is there",
				strings.ToLower(s.mapping.GroupVersionKind.Kind), inst.GetName(), namespaceFlag(inst.GetNamespace()), s.rgd.Name),
		}
	}
	tree, _ := c.buildTree(ctx, s)
	where := c.members(s)
	if r, cond := failsToRender(inst, tree); r != nil {
		// Named by the agent: the earliest missing resource may be
		// another, waiting on it or failing too, and the one that fails
		// may still exist as it was last rendered.
		d := &Diagnosis{Resource: r, Cause: fmt.Sprintf("resource %s (%s) cannot be rendered from %s's values", r.NodeID, r.Kind, instRef),
			Details: []string{conditionLine(*cond)}, Events: c.recentEvents(ctx, inst)}
		_, d.Advice = creationBlocked(inst)
		return d
	}
	if d := c.changeRefused(ctx, tree, s, instRef); d != nil {
		return d
	}
	for i := range tree.Rows {
		r := &tree.Rows[i]
		if r.Ready == VerdictExternal && r.blocking != "" {
			return externalDiagnosis(ctx, r, s, where)
		}
		if r.blocks() {
			if j := namespaceRow(tree.Rows, r); j > i && tree.Rows[j].blocks() {
				// It waits for its namespace, which a resource further
				// on makes, and that one is blocked in turn: nothing
				// orders the two (the RGD was admitted with a hint).
				i = j
			}
			return c.blockingDiagnosis(ctx, s, tree, i, where, instRef)
		}
	}
	if d := statusDiagnosis(s, instRef); d != nil {
		// Its resources are as they should be: what Ready reports is the
		// status the RGD declares, which cannot be computed from them.
		d.Events = c.recentEvents(ctx, inst)
		return d
	}
	if ready != nil && ready.Status == metav1.ConditionTrue {
		// Named in full, as the diagnosis of one that is not is headed:
		// several in a row (status -o name | xargs) are told apart.
		return &Diagnosis{Ready: true, Cause: instanceName(s.mapping.GroupVersionKind.Kind, inst) + " is Ready"}
	}
	if d := customConditionDiagnosis(s, instRef); d != nil {
		d.Events = c.recentEvents(ctx, inst)
		return d
	}
	d := &Diagnosis{Cause: instRef + " is not Ready"}
	for _, cond := range conds {
		if cond.Status != metav1.ConditionTrue {
			d.Details = append(d.Details, conditionLine(cond))
		}
	}
	d.Events = c.recentEvents(ctx, inst)
	d.Advice = "kubectl kro explain-conditions " + strings.ToLower(s.mapping.GroupVersionKind.Kind) + " " + inst.GetName() + namespaceFlag(inst.GetNamespace()) + " explains each condition"
	if immutableChange(inst) {
		d.Advice = immutableAdvice
	}
	return d
}

// deletionDiagnosis explains an instance being deleted: the finalizers of
// others that hold it once kro-agent let it go, or what kro-agent's
// deletion of its resources waits for.
func (c *cluster) deletionDiagnosis(ctx context.Context, s *subject, instRef string) *Diagnosis {
	inst := s.instance
	if others := v1alpha1.OtherFinalizers(inst); len(others) > 0 && !slices.Contains(inst.GetFinalizers(), v1alpha1.Finalizer) {
		// kro-agent is done with it; its status is what it wrote
		// last, while it still deleted.
		return &Diagnosis{
			Cause:  fmt.Sprintf("%s is being deleted and held by the finalizers %s, which are not kro-agent's: kro-agent has let it go (its finalizer %s is off)", instRef, strings.Join(others, ", "), v1alpha1.Finalizer),
			Events: c.recentEvents(ctx, inst),
			Advice: fmt.Sprintf("whoever owns the finalizers %s removes them once their work is done: look at that controller, and remove a finalizer only if nothing will; kubectl kro tree %s %s%s shows whether anything kro-agent managed is left", strings.Join(others, ", "), strings.ToLower(s.mapping.GroupVersionKind.Kind), inst.GetName(), namespaceFlag(inst.GetNamespace())),
		}
	}
	d := &Diagnosis{Cause: instRef + " is being deleted"}
	deleting := findCondition(inst, v1alpha1.ConditionResourcesReady)
	if deleting != nil {
		d.Details = append(d.Details, conditionLine(*deleting))
	}
	d.Events = c.recentEvents(ctx, inst)
	if d.Advice = unreachableDeletionAdvice(s); d.Advice != "" {
		// Nothing moves while the agent cannot reach the resources,
		// and nothing about them can be read.
		return d
	}
	d.Advice = fmt.Sprintf("kro-agent deletes its resources in reverse dependency order, then removes the finalizer %s; kubectl kro tree %s %s%s shows what is left",
		v1alpha1.Finalizer, strings.ToLower(s.mapping.GroupVersionKind.Kind), inst.GetName(), namespaceFlag(inst.GetNamespace()))
	switch r := c.heldInDeletion(ctx, s); {
	case r == nil:
	case isInstance(r.object):
		// Its own finalizer holds it while kro-agent deletes its
		// resources: what is stuck is further down.
		d.Resource = r
		d.Advice = fmt.Sprintf("resource %s is an instance of ResourceGraphDefinition %s in turn, deleting its own resources first: kubectl kro why-not-ready %s %s%s follows it",
			r.node(), r.object.GetLabels()[v1alpha1.LabelRGDName], strings.ToLower(r.Kind), r.Name, namespaceFlag(r.Namespace))
	case len(r.object.GetFinalizers()) > 0:
		d.Resource = r
		d.Advice = fmt.Sprintf("whoever owns the finalizers %s has not released %s %s: look at that controller, and remove a finalizer only if nothing will; kro-agent deletes the rest once it is gone",
			strings.Join(r.object.GetFinalizers(), ", "), r.Kind, cache.NewObjectName(r.Namespace, r.Name))
	}
	if slices.Contains(inst.GetFinalizers(), metav1.FinalizerOrphanDependents) || (deleting != nil && v1alpha1.QuotesOrphaning(deleting.Message)) {
		d.Resource = nil
		d.Advice = fmt.Sprintf("the deletion asked to leave its resources in place (propagationPolicy Orphan): kro-agent takes its labels off each, then removes the finalizer %s", v1alpha1.Finalizer)
		if deleting != nil && refusal.QuotesUnauthorized(deleting.Message) {
			d.Advice = grantAdvice("to leave the resources the condition above names", "goes on")
		}
	}
	if deleting != nil && v1alpha1.QuotesDeleteRefused(deleting.Message) {
		// Nothing else moves it on: the rest of the graph waits
		// for what cannot be deleted.
		d.Advice = "the API server refuses the deletion the condition above names: fix the cause it gives (an admission webhook or policy that refuses it); kro-agent tries again within seconds of a change to the cluster's admission webhooks and policies, and otherwise " + nextRetry
		if refusal.QuotesUnauthorized(deleting.Message) {
			d.Advice = grantAdvice("the deletion the condition above names", "goes on deleting")
		}
	}
	return d
}

// blockingDiagnosis explains the earliest resource that holds the
// instance up, tree.Rows[i], read in where (the cluster its resources are
// in): missing, not ready, being deleted or someone else's, with what its
// object and the instance's conditions say of it, and what to do.
func (c *cluster) blockingDiagnosis(ctx context.Context, s *subject, tree *Tree, i int, where *cluster, instRef string) *Diagnosis {
	inst, r := s.instance, &tree.Rows[i]
	verdict := strings.ToLower(r.Ready)
	switch r.Ready {
	case VerdictNotReady:
		verdict = "not ready"
	case VerdictDeleting:
		verdict = "being deleted"
	case VerdictConflict:
		verdict = "someone else's"
	case VerdictMissing:
		if r.refused {
			// Missing is what follows; the refusal is the cause.
			verdict = "not created: the API server refuses it"
		}
	}
	d := &Diagnosis{Resource: r, Cause: fmt.Sprintf("resource %s (%s) is %s", r.node(), strings.TrimSpace(r.Kind+" "+r.Name), verdict)}
	if r.Reason != "" && !r.refused {
		// A refusal is told whole by the condition that quotes it.
		d.Details = append(d.Details, r.Reason)
	}
	if r.object != nil {
		d.Events = where.recentEvents(ctx, r.object)
	}
	if s.placement != nil {
		d.Cause += " in cluster " + s.placement.Cluster
	}
	d.Advice = "look at the resource (kubectl describe " + strings.ToLower(r.Kind) + " " + r.Name + namespaceFlag(r.Namespace) + "); its dependents wait for it"
	if r.object != nil && isInstance(r.object) {
		d.Advice = fmt.Sprintf("it is an instance of ResourceGraphDefinition %s in turn: kubectl kro why-not-ready %s %s%s follows it; its dependents wait for it",
			r.object.GetLabels()[v1alpha1.LabelRGDName], strings.ToLower(r.Kind), r.Name, namespaceFlag(r.Namespace))
	}
	if r.Ready == VerdictNotReady && r.object != nil {
		// The object's own account of what it waits for: a
		// Deployment whose Pods a ResourceQuota refuses says so
		// only in its ReplicaFailure condition.
		admission := false
		for _, cond := range troubled(conditionsOf(r.object)) {
			d.Details = append(d.Details, conditionLine(cond))
			if advice := admissionAdvice(cond.Message, r, true); advice != "" && !isInstance(r.object) {
				d.Advice, admission = advice, true
			}
		}
		where.explainPods(ctx, d, r, admission)
		where.explainLoadBalancer(ctx, d, r)
	}
	if r.Ready == VerdictDeleting {
		d.Advice = "kro-agent creates it again once it is gone, and its dependents wait for that; if it stays, whoever owns its finalizers has not released them: look at that controller, and remove a finalizer only if nothing will"
	}
	if r.Ready == VerdictConflict {
		if cond, _ := creationBlocked(inst); cond != nil {
			d.Details = append(d.Details, conditionLine(*cond))
		}
		d.Advice = fmt.Sprintf("kro-agent does not take over an object it did not create for this instance: delete it if nothing needs it (kro-agent then creates its own within seconds), or have resource %s render another name", r.NodeID)
		if handable := handableConflicts(tree.Rows[i:], ownerIdentity(inst), where.name == ""); len(handable) > 0 && handable[0] == r.object {
			advice := "; to keep it, and what runs on it, hand it to this instance: "
			if len(handable) > 1 {
				// Found ahead of the agent: handed over together,
				// they do not hold the instance up one after another.
				advice = fmt.Sprintf("; to keep it and the %d further on that are someone else's, and what runs on them, hand them to this instance: ", len(handable)-1)
			}
			d.Advice += advice + handOverCommand(handable, ownerIdentity(inst))
		}
		if other, ok := ownership.Claimant(r.object.GetLabels(), ownerIdentity(inst)); ok {
			d.Advice = fmt.Sprintf("kro-agent does not take over an object it did not create for this instance, and %s, whose it is, makes it again while it exists: have resource %s render another name for this instance (the two render the same one), or delete the object once %s is gone", other, r.NodeID, other)
		}
	}
	if r.Ready == VerdictMissing {
		d.Advice = "kro-agent creates it once everything it depends on is ready; check the instance's conditions and the agent's logs"
		if resolve.WaitsForValue(r.pending) {
			d.Advice = "kro-agent creates it once the value its template reads is there: a status field a controller has not written yet, or an item of another resource's list"
			switch {
			case errors.Is(r.pending, resolve.ErrNeverComes):
				d.Advice = "the value its template reads never comes as the RGD reads it: change the RGD as said above, and kro-agent creates it"
			case errors.Is(r.pending, resolve.ErrExternalValue):
				d.Advice = "the value its template reads is missing from an object an externalRef reads, which is its owner's to supply: kro-agent creates it as soon as the value is there, or once the RGD reads it as optional, as said above"
			}
		}
		// The agent says on the instance why it could not create it.
		if cond, advice := creationBlocked(inst); cond != nil {
			d.Details = append(d.Details, conditionLine(*cond))
			d.Events = c.recentEvents(ctx, inst)
			d.Advice = advice
			if advice := admissionAdvice(cond.Message, r, false); advice != "" {
				d.Advice = advice
			}
		}
		if advice := where.namespaceUnavailable(ctx, r); advice != "" {
			d.Advice = advice
		}
	}
	return d
}

// changeRefused explains an instance whose change to an object that
// exists the API server refuses (the tree's row of it quotes the refusal):
// the object stays as it was, ready or not, while the instance asks for
// something else. Nil when no such change is refused.
func (c *cluster) changeRefused(ctx context.Context, tree *Tree, s *subject, instRef string) *Diagnosis {
	i := slices.IndexFunc(tree.Rows, func(r Row) bool { return r.refused && r.Ready != VerdictMissing })
	if i < 0 {
		return nil
	}
	r := &tree.Rows[i]
	d := &Diagnosis{Resource: r, Cause: fmt.Sprintf("resource %s (%s) is not updated to %s's values: the API server refuses kro-agent's change", r.node(), strings.TrimSpace(r.Kind+" "+r.Name), instRef)}
	if s.placement != nil {
		d.Cause += " in cluster " + s.placement.Cluster
	}
	cond, advice := creationBlocked(s.instance)
	if cond != nil {
		d.Details = append(d.Details, conditionLine(*cond))
	}
	d.Events = c.recentEvents(ctx, s.instance)
	d.Advice = advice
	if immutableChange(s.instance) {
		d.Advice = immutableAdvice
		if r.object != nil {
			d.Advice += orphanAdvice(r.object.GroupVersionKind().GroupKind(), r.Name, r.Namespace)
		}
	}
	return d
}

// orphanAdvice is, for a StatefulSet, how to delete it and keep what it
// runs, added to the advice to delete an object whose change is refused;
// "" for another kind (another group's StatefulSet too: kubectl delete
// statefulset names Kubernetes' own).
func orphanAdvice(gk schema.GroupKind, name, namespace string) string {
	if gk != (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
		return ""
	}
	return fmt.Sprintf("; kubectl delete statefulset %s%s --cascade=orphan deletes the StatefulSet alone: the one kro-agent makes again takes over its Pods and their claims (claims that exist keep their size: volumeClaimTemplates shape new claims only)",
		name, namespaceFlag(namespace))
}

// statusDiagnosis explains an instance whose status, as its RGD declares
// it, fails on what it reads, or is too large to store (GraphResolved False
// for either); nil when it is neither.
func statusDiagnosis(s *subject, instRef string) *Diagnosis {
	cond := findCondition(s.instance, v1alpha1.ConditionGraphResolved)
	if cond == nil || cond.Status != metav1.ConditionFalse {
		return nil
	}
	edit := fmt.Sprintf("kubectl edit %s %s%s", strings.ToLower(s.mapping.GroupVersionKind.Kind), s.instance.GetName(), namespaceFlag(s.instance.GetNamespace()))
	switch cond.Reason {
	case v1alpha1.ReasonStatusTooLarge:
		return &Diagnosis{
			Cause:   fmt.Sprintf("%s's status is too large to store: the fields ResourceGraphDefinition %s declares for it make the instance larger than the API server stores", instRef, s.rgd.Name),
			Details: []string{conditionLine(*cond)},
			Advice: fmt.Sprintf("its resources are applied, and its status is written without those fields; project less into the fields the message names: change their expressions in ResourceGraphDefinition %s (spec.schema.status), or the values they read (%s); kro-agent projects them again whenever what they read changes",
				s.rgd.Name, edit),
		}
	case v1alpha1.ReasonStatusFailed:
		return &Diagnosis{
			Cause:   fmt.Sprintf("%s's status cannot be computed: an expression ResourceGraphDefinition %s declares for it fails on the values it reads", instRef, s.rgd.Name),
			Details: []string{conditionLine(*cond)},
			Advice: fmt.Sprintf("its resources are applied; if the expression reads the instance, give it a value the expression takes (%s), otherwise change the expression in ResourceGraphDefinition %s (spec.schema.status); kro-agent evaluates it again whenever what it reads changes",
				edit, s.rgd.Name),
		}
	}
	return nil
}

// customConditionDiagnosis names the condition the instance's RGD
// declares, counting toward Ready, that holds Ready back: the first one
// whose status is bad for it (False, or True with negative polarity),
// otherwise the first its expression gives no status yet. It is nil when
// none does, or the RGD did not compile.
func customConditionDiagnosis(s *subject, instRef string) *Diagnosis {
	if s.graph == nil {
		return nil
	}
	var unknown *Diagnosis
	for _, decl := range s.graph.Conditions {
		cond := findCondition(s.instance, decl.Type)
		if !decl.CountsTowardReady || cond == nil {
			continue
		}
		good, bad := metav1.ConditionTrue, metav1.ConditionFalse
		polarity := ""
		if decl.Polarity == graph.PolarityNegative {
			good, bad = bad, good
			polarity = " with negative polarity (True is bad)"
		}
		if cond.Status == good {
			continue
		}
		d := &Diagnosis{
			Cause: fmt.Sprintf("%s's condition %s is %s: ResourceGraphDefinition %s declares it%s, counting toward Ready",
				instRef, decl.Type, cond.Status, s.rgd.Name, polarity),
			Details: []string{conditionLine(*cond)},
		}
		if decl.Status != nil {
			d.Details = append(d.Details, fmt.Sprintf("its status: ${%s}", decl.Status.Source))
		}
		if cond.Status == bad {
			d.Advice = fmt.Sprintf("the condition is the RGD's verdict on what its status expression reads%s: Ready follows once that makes it %s, which kro-agent sees as soon as it changes; if the condition should not hold Ready back, set countsTowardReady: false on it in ResourceGraphDefinition %s",
				readsPhrase(decl.Status), good, s.rgd.Name)
			return d
		}
		if unknown == nil {
			d.Advice = fmt.Sprintf("its status expression%s gives no value yet, and the message above says why (a value it reads that is not there yet, or one it fails on); kro-agent evaluates it again whenever what it reads changes",
				readsPhrase(decl.Status))
			unknown = d
		}
	}
	return unknown
}

// readsPhrase names what an expression reads, for advice: " (flags,
// schema)", or "" for none known.
func readsPhrase(e *graph.Expression) string {
	if e == nil || len(e.References) == 0 {
		return ""
	}
	return " (" + strings.Join(e.References, ", ") + ")"
}

// admissionAdvice says what lets the API server admit what message (an
// apply's refusal, or a condition quoting one) says it refused: resource r
// itself, or, made is set, what r's controller makes for it (a
// Deployment's Pods), which that controller makes again at its next try.
// It is empty for a refusal it does not know.
func admissionAdvice(message string, r *Row, made bool) string {
	what := strings.TrimSpace(r.Kind + " " + r.Name)
	refused, then := what, "kro-agent creates it within seconds of "
	if made {
		refused, then = "what "+what+" makes", "its controller makes it again at its next try after "
	}
	if call, ok := webhookcall.Failed(message); ok {
		return webhookAdvice(call, refused, then, made)
	}
	if r.Namespace == "" {
		return ""
	}
	if level, ok := podsecurity.RefusedAt(message); ok {
		return fmt.Sprintf("namespace %s enforces the %s Pod Security Standard (its label %s), which %s does not meet: set in resource %s's template what the message asks, or, if the namespace is meant to run such Pods, have its label name a level they meet; %seither change",
			r.Namespace, level, podsecurity.EnforceLabel, refused, r.NodeID, then)
	}
	if limitrange.Refused(message) {
		return fmt.Sprintf("a LimitRange of namespace %s does not allow what %s asks for (kubectl describe limitrange -n %s shows them): change the values in resource %s's template (or the instance's fields they come from), or the LimitRange; %seither change",
			r.Namespace, refused, r.Namespace, r.NodeID, then)
	}
	refusal, ok := quota.RefusedBy(message)
	if !ok {
		return ""
	}
	edit := fmt.Sprintf("kubectl edit resourcequota %s -n %s", refusal.Quota, r.Namespace)
	if refusal.Unspecified {
		return fmt.Sprintf("ResourceQuota %s in namespace %s limits what %s does not specify (above): set those requests and limits in resource %s's template, or take them out of the quota's hard limits (%s); %seither change",
			refusal.Quota, r.Namespace, refused, r.NodeID, edit, then)
	}
	return fmt.Sprintf("ResourceQuota %s in namespace %s has no room for %s: raise its limits (%s), or delete what it counts that nothing needs; %sthe quota's change",
		refusal.Quota, r.Namespace, refused, edit, then)
}

// webhookAdvice says what lets the API server admit what an admission
// webhook it could not call refused (refused; then says what follows a
// change, made whether r's controller rather than kro-agent makes it).
func webhookAdvice(call webhookcall.Failure, refused, then string, made bool) string {
	if call.Service != "" {
		return fmt.Sprintf("admission webhook %q, served by Service %s in namespace %s, did not answer the API server, and its failure policy refuses what it cannot check, %s among it: bring its pods back (kubectl get endpointslices -n %s -l %s=%s shows its endpoints), or, if nothing needs it, delete it from its webhook configuration; %seither change",
			call.Webhook, call.Service, call.Namespace, refused, call.Namespace, discoveryv1.LabelServiceName, call.Service, then)
	}
	// Configured with a URL: nothing in the cluster says when it answers.
	retry := "kro-agent tries again within seconds of a change of the webhook configuration, and with backoff until then"
	if made {
		retry = "its controller makes it again at its next try"
	}
	return fmt.Sprintf("admission webhook %q did not answer the API server at %s, and its failure policy refuses what it cannot check, %s among it: make it answer, or, if nothing needs it, delete it from its webhook configuration; %s",
		call.Webhook, call.URL, refused, retry)
}

// troubled picks the conditions that say what keeps an object from being
// ready, as kubectl describe would show them: those not True, and those
// True whose type names a failure (a Deployment's ReplicaFailure, a Job's
// Failed, kstatus's Stalled).
func troubled(conds []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range conds {
		failure := strings.Contains(c.Type, "Fail") || c.Type == "Stalled" || c.Type == "Degraded"
		if (c.Status != metav1.ConditionTrue) != failure {
			out = append(out, c)
		}
	}
	return out
}

// immutableAdvice is what to do about a change the API server refuses
// because it needs a field that cannot change once the object exists.
const immutableAdvice = "the change needs a field the API server lets no one change once the object exists (a Job's template, a Service's clusterIP, a selector, a StatefulSet's volumeClaimTemplates, a claim's storage class): undo it on the instance (or in its RGD, where the change came from there), or delete the objects the message names and kro-agent creates them again with the new values"

// immutableChange tells an apply refused because it changes an immutable
// field of an object that exists, which no retry will get past.
func immutableChange(inst *unstructured.Unstructured) bool {
	c := findCondition(inst, v1alpha1.ConditionResourcesReady)
	return c != nil && c.Reason == v1alpha1.ReasonApplyFailed && refusal.QuotesImmutableChange(c.Message)
}

// externalDiagnosis explains an instance waiting for an object an
// externalRef reads: someone else's, which kro-agent never creates or
// changes.
func externalDiagnosis(ctx context.Context, r *Row, s *subject, where *cluster) *Diagnosis {
	d := &Diagnosis{Resource: r, Cause: fmt.Sprintf("external resource %s (%s) %s", r.node(), strings.TrimSpace(r.Kind+" "+cache.NewObjectName(r.Namespace, r.Name).String()), r.blocking)}
	if s.placement != nil {
		d.Cause += " in cluster " + s.placement.Cluster
	}
	d.Details = append(d.Details, strings.TrimPrefix(r.Reason, "external; "))
	if r.object != nil {
		d.Events = where.recentEvents(ctx, r.object)
	}
	switch r.blocking {
	case "does not exist":
		d.Advice = "kro-agent reads it and never creates it: whoever owns it must, or the instance must name one that exists; kro-agent watches for it and goes on as soon as it is there"
	case "is not ready":
		d.Advice = "kro-agent reads it and never changes it: whoever owns it must bring it to what its readyWhen above asks; kro-agent watches it and goes on as soon as it is"
	default:
		d.Advice = "kro-agent's role needs get, list and watch on its kind (see the README); the error above is what the API server answered"
	}
	return d
}

// unrendered returns the node the instance's GraphResolved condition
// says its values do not render (a v1alpha1.ResourceError), with the
// condition; "" when the condition names none.
func unrendered(inst *unstructured.Unstructured) (string, *metav1.Condition) {
	cond := findCondition(inst, v1alpha1.ConditionGraphResolved)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonResolveFailed {
		return "", nil
	}
	id, ok := v1alpha1.ResourceNamed(cond.Message)
	if !ok {
		return "", nil
	}
	return id, cond
}

// failsToRender returns the row of the resource the instance's values do
// not render, with the condition that says so; nil when there is none.
func failsToRender(inst *unstructured.Unstructured, tree *Tree) (*Row, *metav1.Condition) {
	id, cond := unrendered(inst)
	if id == "" || tree == nil {
		return nil, nil
	}
	for i := range tree.Rows {
		if tree.Rows[i].NodeID == id {
			return &tree.Rows[i], cond
		}
	}
	return nil, nil
}

// creationBlocked returns the instance's condition that says why kro-agent
// could not create a resource, and what to do about it: its apply refused
// by the API server, or its values that do not make valid resources.
func creationBlocked(inst *unstructured.Unstructured) (*metav1.Condition, string) {
	if c := findCondition(inst, v1alpha1.ConditionResourcesReady); c != nil && c.Reason == v1alpha1.ReasonApplyFailed {
		if refusal.QuotesUnauthorized(c.Message) || refusal.QuotesEscalation(c.Message) {
			return c, grantAdvice("this write", "tries again")
		}
		if strings.Contains(c.Message, selectorMismatch) {
			return c, "the RGD's template selects pods by labels its pod template does not give them: make spec.template.metadata.labels hold every label of spec.selector.matchLabels, with the same value, in the RGD (kubectl kro validate -f on it names the label); kro-agent applies it again once the RGD changes"
		}
		return c, "the API server refuses kro-agent's apply; fix the cause above: kro-agent tries again within seconds of a change to the instance or to the cluster's admission webhooks and policies, and otherwise " + nextRetry
	}
	if c := findCondition(inst, v1alpha1.ConditionGraphResolved); c != nil && c.Status == metav1.ConditionFalse {
		return c, "the instance's values do not make valid resources (the condition above says why: a template that fails on them, or two resources given one name); fix the instance's spec or the RGD"
	}
	return nil, ""
}

// selectorMismatch is how the API server refuses a workload whose
// selector its pod template's labels do not match.
const selectorMismatch = "`selector` does not match template `labels`"

// grantAdvice says what to do about a write of kro-agent's the API
// server's authorizer denied (what: which), the condition above quoting
// it with what to grant; then says what kro-agent does once it may.
func grantAdvice(what, then string) string {
	return fmt.Sprintf("kro-agent's roles do not allow it %s: grant it what the message above names, where it says; in its own cluster kro-agent %s as soon as the grant is aggregated into its role, in a workload cluster %s", what, then, nextRetry)
}

// namespaceRow is the index of the row of the Namespace r's object is in,
// when a resource of the tree makes it; -1 otherwise.
func namespaceRow(rows []Row, r *Row) int {
	if r.Namespace == "" {
		return -1
	}
	return slices.IndexFunc(rows, func(o Row) bool { return o.Kind == "Namespace" && o.Name == r.Namespace && o.NodeID != "" })
}

// namespaceUnavailable says what to do about a missing object whose
// namespace does not exist or is being deleted: nothing can be created in
// it until it is there.
func (c *cluster) namespaceUnavailable(ctx context.Context, r *Row) string {
	if r.Namespace == "" {
		return ""
	}
	ns, err := c.dyn.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Get(ctx, r.Namespace, metav1.GetOptions{})
	what := strings.TrimSpace(r.Kind + " " + r.Name)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("namespace %s does not exist: create it (kubectl create namespace %s), or have the instance name one that does; kro-agent creates %s within seconds of the namespace's creation",
			r.Namespace, r.Namespace, what)
	case err == nil && ns.GetDeletionTimestamp() != nil:
		return fmt.Sprintf("namespace %s is being deleted, and nothing can be created in it: kro-agent creates %s again once the namespace is gone and created again, or have the instance name another namespace",
			r.Namespace, what)
	}
	return ""
}

// recentEvents returns the last few Events about an object.
func (c *cluster) recentEvents(ctx context.Context, u *unstructured.Unstructured) []string {
	return c.recentEventsAbout(ctx, u.GetKind(), u.GetNamespace(), u.GetName(), u.GetUID())
}

// recentEventsAbout returns the last few Events about the object kind
// namespace/name of uid; those about a cluster-scoped object (namespace
// "") are looked for in every namespace, as they are recorded in default.
func (c *cluster) recentEventsAbout(ctx context.Context, kind, namespace, name string, uid types.UID) []string {
	return eventLines(c.eventsAbout(ctx, kind, namespace, name, uid), "", func(corev1.Event) bool { return true })
}

// eventsAbout lists the Events about the object kind namespace/name, the
// oldest first: of uid, as kubectl describe lists them, when it is given,
// so that an object deleted and made again under the name is not told
// what happened to the one before.
func (c *cluster) eventsAbout(ctx context.Context, kind, namespace, name string, uid types.UID) []corev1.Event {
	sel := fields.Set{"involvedObject.name": name, "involvedObject.kind": kind}
	if uid != "" {
		sel["involvedObject.uid"] = string(uid)
	}
	events, err := listTyped[corev1.Event](ctx, c, corev1.SchemeGroupVersion.WithResource("events"), namespace,
		metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil
	}
	sort.Slice(events, func(i, j int) bool { return eventTime(events[i]).Time.Before(eventTime(events[j]).Time) })
	return events
}

// eventLines are the last few of events that keep tells, a line each,
// with about (which object they are about) after their reason.
func eventLines(events []corev1.Event, about string, keep func(corev1.Event) bool) []string {
	// The same event recorded again (another retry, another series) is
	// one line: the latest.
	var out []string
	for i := len(events) - 1; i >= 0 && len(out) < 5; i-- {
		e := events[i]
		if !keep(e) {
			continue
		}
		if line := fmt.Sprintf("%s %s%s: %s", e.Type, e.Reason, about, oneLine(e.Message)); !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	slices.Reverse(out)
	return out
}

func eventTime(e corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.NewTime(e.EventTime.Time)
	}
	return e.CreationTimestamp
}

func printDiagnosis(w io.Writer, d *Diagnosis, p palette) {
	if d.Ready {
		fmt.Fprintf(w, "%s\n", p.verdict(VerdictReady)+": "+d.Cause)
		return
	}
	if d.Instance != "" {
		// Named first: several diagnoses in a row (status --not-ready
		// -o name | xargs) tell whose each is.
		fmt.Fprintf(w, "%s %s\n", p.bold("Not ready:"), d.Instance)
	}
	fmt.Fprintf(w, "%s %s\n", p.bold("Root cause:"), d.Cause)
	for _, line := range d.Details {
		fmt.Fprintf(w, "  %s\n", indented(line, "    "))
	}
	if r := d.Resource; r != nil && r.Health != "" {
		fmt.Fprintf(w, "  health (kstatus): %s\n", r.Health)
	}
	for _, t := range d.Pods {
		fmt.Fprintf(w, "  %s\n", t)
	}
	if len(d.Events) > 0 {
		fmt.Fprintln(w, p.bold("Recent events:"))
		for _, e := range d.Events {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if d.Advice != "" {
		fmt.Fprintf(w, "%s %s\n", p.bold("What to do:"), d.Advice)
	}
}

// namespaceFlag is the -n flag naming ns, for a command to copy.
func namespaceFlag(ns string) string {
	if ns == "" {
		return ""
	}
	return " -n " + ns
}

// handableConflicts are the objects of rows, someone else's in the
// instance's way, that their owner can hand to inst (ownership.Adopts).
func handableConflicts(rows []Row, inst ownership.Instance, local bool) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, r := range rows {
		if r.Ready == VerdictConflict && r.object != nil && ownership.CanBeHandedTo(inst, r.object, ownership.AppliedByAgent(r.object.GetManagedFields()), local) {
			objs = append(objs, r.object)
		}
	}
	return objs
}

// handOverCommand is the kubectl command with which the owner of objs
// hands them to inst, one command for each namespace they are in.
func handOverCommand(objs []*unstructured.Unstructured, inst ownership.Instance) string {
	var namespaces []string
	names := map[string][]string{}
	for _, obj := range objs {
		ns := obj.GetNamespace()
		if _, seen := names[ns]; !seen {
			namespaces = append(namespaces, ns)
		}
		names[ns] = append(names[ns], objectName(obj.GroupVersionKind().GroupKind(), obj.GetName()))
	}
	var cmds []string
	for _, ns := range namespaces {
		cmd := "kubectl annotate " + strings.Join(names[ns], " ")
		if ns != "" {
			cmd += " -n " + ns
		}
		cmds = append(cmds, cmd+" "+v1alpha1.AnnotationAdoptBy+"="+ownership.AdoptByValue(inst))
	}
	return strings.Join(cmds, "; ")
}
