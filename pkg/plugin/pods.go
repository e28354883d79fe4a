package plugin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PodTrouble is one reason some of a workload's Pods are not ready, told
// once for every Pod it holds: a Deployment that is not available says
// only that; what keeps it so (a Pod no node can take, an image that
// cannot be pulled, a container that keeps exiting) is in its Pods.
type PodTrouble struct {
	// Names are the first few Pods it holds; Count is how many it holds.
	Names []string `json:"names"`
	Count int      `json:"count"`
	// Of is how many Pods the workload has.
	Of    int    `json:"of"`
	Phase string `json:"phase"`
	// Container is the container the reason is about, if any.
	Container string `json:"container,omitempty"`
	Reason    string `json:"reason"`
	Message   string `json:"message,omitempty"`
}

// podsNamed is how many of a trouble's Pods are named.
const podsNamed = 2

// podTroublesShown is how many different troubles are told.
const podTroublesShown = 3

// String is the trouble as why-not-ready prints it.
func (t PodTrouble) String() string {
	who, are := "Pod "+strings.Join(t.Names, ", "), "is"
	if t.Count > 1 {
		who, are = "Pods "+strings.Join(t.Names, ", "), "are"
	}
	if more := t.Count - len(t.Names); more > 0 {
		who += fmt.Sprintf(" and %d more", more)
	}
	where := t.Phase
	if t.Container != "" {
		where += ", container " + t.Container
	}
	line := fmt.Sprintf("%s (%d of %d) %s not ready: %s, %s", who, t.Count, t.Of, are, where, t.Reason)
	if t.Message != "" {
		line += ": " + oneLine(t.Message)
	}
	return line
}

// explainPods adds to d what keeps the Pods of r, the workload that
// blocks, from being ready, the warnings about the Pod most of them are
// like among its events, and, unless advised already, what to do about it.
func (c *cluster) explainPods(ctx context.Context, d *Diagnosis, r *Row, advised bool) {
	if isInstance(r.object) {
		return
	}
	pods, err := c.podsOf(ctx, r.object)
	switch {
	case apierrors.IsForbidden(err):
		return // what the user may not read, the diagnosis does without
	case err != nil:
		d.Details = append(d.Details, fmt.Sprintf("its Pods cannot be read: %v", err))
		return
	}
	troubles := podTroubles(pods)
	if len(troubles) == 0 {
		return
	}
	first := troubles[0]
	if advice := podAdvice(first, r); advice != "" && !advised {
		d.Advice = advice
	}
	if isPod(r.object) {
		// Its own conditions and events are told already; what is not
		// is a container's state.
		d.Pods = slices.DeleteFunc(troubles, func(t PodTrouble) bool { return t.Container == "" })
	} else {
		d.Pods = troubles
		told := oneLine(first.Message)
		d.Events = append(d.Events, eventLines(c.eventsAbout(ctx, "Pod", r.Namespace, first.Names[0], ""), " (Pod "+first.Names[0]+")", func(e corev1.Event) bool {
			return e.Type == corev1.EventTypeWarning && oneLine(e.Message) != told
		})...)
	}
	if waitsForClaims(first) {
		// Why a claim is not bound is told only about the claim.
		i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == first.Names[0] })
		for _, claim := range claimsOf(&pods[i]) {
			d.Events = append(d.Events, eventLines(c.eventsAbout(ctx, "PersistentVolumeClaim", r.Namespace, claim, ""), " (PersistentVolumeClaim "+claim+")", func(corev1.Event) bool { return true })...)
		}
	}
}

// waitsForClaims tells Pods the scheduler holds back until their
// PersistentVolumeClaims are bound: no node lacks anything, a volume does.
func waitsForClaims(t PodTrouble) bool {
	return t.Reason == "Unschedulable" && strings.Contains(t.Message, "unbound") && strings.Contains(t.Message, "PersistentVolumeClaim")
}

// claimsOf names the PersistentVolumeClaims p mounts, at most a few.
func claimsOf(p *corev1.Pod) []string {
	var claims []string
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && len(claims) < podsNamed {
			claims = append(claims, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return claims
}

func isPod(u *unstructured.Unstructured) bool {
	return u != nil && u.GroupVersionKind().GroupKind() == schema.GroupKind{Kind: "Pod"}
}

// workloadsWithPods are the kinds whose Pods why-not-ready looks at:
// those that control Pods themselves, and Deployments, through their
// ReplicaSets. Each selects its Pods with spec.selector.
var workloadsWithPods = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "batch", Kind: "Job"}:        true,
}

// podsOf lists the Pods the workload u controls: those whose controller is
// u, or, for a Deployment, one of its ReplicaSets; a Pod is its own. It is
// nil for a kind that controls no Pods, or one whose selector cannot be
// read.
func (c *cluster) podsOf(ctx context.Context, u *unstructured.Unstructured) ([]corev1.Pod, error) {
	gk := u.GroupVersionKind().GroupKind()
	if isPod(u) {
		// A graph may make a Pod itself.
		p := corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
			return nil, fmt.Errorf("reading Pod %s: %w", u.GetName(), err)
		}
		return []corev1.Pod{p}, nil
	}
	if !workloadsWithPods[gk] {
		return nil, nil
	}
	selector, ok := workloadSelector(u)
	if !ok {
		return nil, nil
	}
	controllers := map[types.UID]bool{u.GetUID(): true}
	if gk.Kind == "Deployment" {
		sets, err := listTyped[appsv1.ReplicaSet](ctx, c, appsv1.SchemeGroupVersion.WithResource("replicasets"), u.GetNamespace(), metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return nil, err
		}
		controllers = map[types.UID]bool{}
		for i := range sets {
			if controlledBy(&sets[i], u.GetUID()) {
				controllers[sets[i].UID] = true
			}
		}
	}
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	pods, err := listTyped[corev1.Pod](ctx, c, gvr, u.GetNamespace(), metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	// A Pod that comes, goes or changes changes the diagnosis.
	c.noteList(watchedList{gvr: gvr, namespace: u.GetNamespace(), selector: selector.String(), seen: seenOf(pods)})
	return slices.DeleteFunc(pods, func(p corev1.Pod) bool {
		owner := metav1.GetControllerOf(&p)
		return owner == nil || !controllers[owner.UID]
	}), nil
}

// workloadSelector is u's spec.selector as a label query; a selector that
// selects everything is no answer, as the API server lets no workload have
// one.
func workloadSelector(u *unstructured.Unstructured) (labels.Selector, bool) {
	raw, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return nil, false
	}
	ls := metav1.LabelSelector{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls) != nil {
		return nil, false
	}
	selector, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || selector.Empty() {
		return nil, false
	}
	return selector, true
}

func controlledBy(o metav1.Object, uid types.UID) bool {
	owner := metav1.GetControllerOf(o)
	return owner != nil && owner.UID == uid
}

// podTroubles groups the workload's Pods that are not ready by what keeps
// them so, the most common first.
func podTroubles(pods []corev1.Pod) []PodTrouble {
	var out []PodTrouble
	for i := range pods {
		t, ok := podTrouble(&pods[i])
		if !ok {
			continue
		}
		// Messages name the Pod (a back-off's does); the first is shown.
		j := slices.IndexFunc(out, func(o PodTrouble) bool {
			return o.Phase == t.Phase && o.Container == t.Container && o.Reason == t.Reason
		})
		if j < 0 {
			out = append(out, t)
			j = len(out) - 1
		}
		out[j].Count++
		if len(out[j].Names) < podsNamed {
			out[j].Names = append(out[j].Names, pods[i].Name)
		}
	}
	for i := range out {
		out[i].Of = len(pods)
	}
	slices.SortStableFunc(out, func(a, b PodTrouble) int { return cmp.Compare(b.Count, a.Count) })
	return out[:min(len(out), podTroublesShown)]
}

// waitingAsUsual are the reasons a container waits while all goes well.
var waitingAsUsual = map[string]bool{"ContainerCreating": true, "PodInitializing": true}

// podTrouble says why p is not ready: where it is stuck (not scheduled, an
// init container, a container) and the reason and message the scheduler or
// the kubelet gives. A Pod that is ready, done or going away has none.
func podTrouble(p *corev1.Pod) (PodTrouble, bool) {
	t := PodTrouble{Phase: string(p.Status.Phase)}
	if t.Phase == "" {
		t.Phase = string(corev1.PodPending)
	}
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || podCondition(p, corev1.PodReady) == corev1.ConditionTrue {
		return t, false
	}
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
		// The kubelet ended it (Evicted, say); otherwise its
		// containers say how it failed.
		t.Reason, t.Message = p.Status.Reason, p.Status.Message
		return t, true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			t.Reason, t.Message = cmp.Or(c.Reason, "NotScheduled"), c.Message
			return t, true
		}
	}
	for _, group := range []struct {
		what     string
		statuses []corev1.ContainerStatus
	}{{"init container ", p.Status.InitContainerStatuses}, {"", p.Status.ContainerStatuses}} {
		for _, s := range group.statuses {
			if reason, message, ok := containerTrouble(s); ok {
				t.Container, t.Reason, t.Message = group.what+s.Name, reason, message
				return t, true
			}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
			t.Reason, t.Message = cmp.Or(c.Reason, "NotReady"), c.Message
			if c.Reason == "ContainersNotReady" && allRunning(p.Status.ContainerStatuses) {
				t.Message = "its containers run, but not all are ready: their readiness probe has not passed (the Pod's events say why)"
			}
			return t, true
		}
	}
	t.Reason = "NotReady"
	if p.Status.Phase == corev1.PodFailed {
		t.Reason, t.Message = "Failed", p.Status.Message
	}
	return t, true
}

// containerTrouble is what keeps one container from running or being ready,
// if anything does.
func containerTrouble(s corev1.ContainerStatus) (reason, message string, ok bool) {
	switch {
	case s.State.Waiting != nil && !waitingAsUsual[s.State.Waiting.Reason]:
		reason, message = cmp.Or(s.State.Waiting.Reason, "Waiting"), s.State.Waiting.Message
		if last := s.LastTerminationState.Terminated; last != nil {
			// A back-off's message says only that it backs off.
			message = exited(last)
		}
		return reason, message, true
	case s.State.Terminated != nil && s.State.Terminated.ExitCode != 0:
		return cmp.Or(s.State.Terminated.Reason, "Error"), exited(s.State.Terminated), true
	}
	return "", "", false
}

// exited tells how a container last ended.
func exited(t *corev1.ContainerStateTerminated) string {
	line := fmt.Sprintf("exited with code %d", t.ExitCode)
	if t.Reason != "" {
		line += " (" + t.Reason + ")"
	}
	if t.Message != "" {
		line += ": " + t.Message
	}
	return line
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func allRunning(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Running == nil {
			return false
		}
	}
	return len(statuses) > 0
}

// podAdvice is what to do about the trouble most of a workload's Pods
// share, "" where the message says it best.
func podAdvice(t PodTrouble, r *Row) string {
	// The workload's Pods, or a Pod of the graph itself.
	pods, its, their, plural := fmt.Sprintf("resource %s's Pods", r.NodeID), "its Pods", "their", ""
	if isPod(r.object) {
		pods, its, their, plural = "resource "+r.NodeID, "it", "its", "s"
	}
	if waitsForClaims(t) {
		return fmt.Sprintf("%s wait%s for %s PersistentVolumeClaims to be bound (the claims' events above say why they are not): give the claims a StorageClass that provisions volumes (their storageClassName, or a default StorageClass in the cluster), or create PersistentVolumes they can bind", pods, plural, their)
	}
	container := strings.TrimPrefix(t.Container, "init container ")
	switch t.Reason {
	case "Unschedulable":
		return fmt.Sprintf("no node can take %s, for the reason the scheduler gives above: add or free capacity on the nodes, or change what %s ask%s for (resource requests, node selector, affinity, tolerations)", its, pods, plural)
	case "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
		return fmt.Sprintf("%s cannot pull the image: check the image the instance gives resource %s, and that the nodes may pull it (imagePullSecrets)", pods, r.NodeID)
	case "OOMKilled":
		return fmt.Sprintf("a container of %s uses more memory than its limit: raise the limit in resource %s's template, or have it use less", pods, r.NodeID)
	case "CrashLoopBackOff":
		if strings.Contains(t.Message, "(OOMKilled)") {
			return podAdvice(PodTrouble{Reason: "OOMKilled"}, r)
		}
		// The container that exited is the one before the back-off.
		return fmt.Sprintf("a container of %s keeps exiting: kubectl logs %s -c %s --previous%s shows why", pods, t.Names[0], container, namespaceFlag(r.Namespace))
	case "Error":
		return fmt.Sprintf("a container of %s exited with an error: kubectl logs %s -c %s%s shows why", pods, t.Names[0], container, namespaceFlag(r.Namespace))
	case "CreateContainerConfigError":
		return fmt.Sprintf("%s refer%s to configuration that is not there (the message above names it): create it, or have resource %s's template name one that exists", pods, plural, r.NodeID)
	}
	return ""
}
