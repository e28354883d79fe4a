// Package ownership computes the labels and annotations that mark what
// kro-agent manages, exactly as upstream kro names them: the instance's own
// (ownership and ApplySet parent), and those of every resource an instance
// manages (the instance's, plus which instance and graph node it belongs to).
// The agent and the admission webhook both use it, so they agree to the byte.
package ownership

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/apis/kro/v1alpha1"
	"github.com/kro-agent/kro-agent/pkg/version"
)

// FieldManager is the server-side apply field manager of every write the
// agent makes, and of the dry runs that predict them, so that they merge
// with what the agent already owns.
const FieldManager = "kro-agent"

// Applied tells whether a managedFields entry, of manager by operation, is
// kro-agent's own server-side apply. It is what tells an object kro-agent
// applied from one that only carries its labels (copied onto it by a
// controller that copies its parent's labels, or written by someone), which
// kro-agent neither prunes nor deletes.
func Applied(manager, operation string) bool {
	return manager == FieldManager && operation == string(metav1.ManagedFieldsOperationApply)
}

// AppliedByAgent tells whether an object's managedFields hold kro-agent's
// own server-side apply (Applied).
func AppliedByAgent(entries []metav1.ManagedFieldsEntry) bool {
	return slices.ContainsFunc(entries, func(e metav1.ManagedFieldsEntry) bool { return Applied(e.Manager, string(e.Operation)) })
}

// Instance identifies an instance for labelling.
type Instance struct {
	GVK       schema.GroupVersionKind
	Name      string
	Namespace string
	UID       string
	// RGDName names the instance's ResourceGraphDefinition, when known:
	// another instance's object is named with its RGD when that is not
	// this one's, and, where the kind is not known, an object of another
	// RGD's instance named as this one is, is not this one's before it was
	// created again.
	RGDName string
	// Labels are the instance's own labels, set by its author.
	Labels map[string]string
}

// RGD identifies the ResourceGraphDefinition of an instance.
type RGD struct {
	Name string
	UID  string
}

// ApplySetID is the ApplySet parent id of an instance, as the ApplySet
// specification (KEP 3659) defines it: applyset-<base64url(sha256(name.namespace.kind.group))>-v1.
func ApplySetID(inst Instance) string {
	sum := sha256.Sum256([]byte(inst.Name + "." + inst.Namespace + "." + inst.GVK.Kind + "." + inst.GVK.Group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// InstanceLabels are the labels kro-agent sets on an instance.
func InstanceLabels(rgd RGD, inst Instance) map[string]string {
	return map[string]string{
		v1alpha1.LabelOwned:      "true",
		v1alpha1.LabelKroVersion: version.Version,
		v1alpha1.LabelRGDID:      rgd.UID,
		v1alpha1.LabelRGDName:    rgd.Name,
		v1alpha1.LabelManagedBy:  v1alpha1.ManagedByValue,
		v1alpha1.LabelApplySetID: ApplySetID(inst),
	}
}

// InstanceLabelsOver are the labels kro-agent sets on an instance that has
// the labels have: InstanceLabels, less app.kubernetes.io/managed-by when
// the instance's author set it. That recommended label names the tool that
// writes an object, and an instance is written by its author's (a Helm
// chart labels everything it renders "Helm"): were kro-agent to overwrite
// it, the two would find each other's value at every sync, and GitOps tools
// would report the instance forever out of sync. kro-agent tells its
// instances by kro.run/owned; the resources it manages are labelled "kro".
func InstanceLabelsOver(rgd RGD, inst Instance, have map[string]string) map[string]string {
	labels := InstanceLabels(rgd, inst)
	if _, ok := have[v1alpha1.LabelManagedBy]; ok {
		delete(labels, v1alpha1.LabelManagedBy)
	}
	return labels
}

// Tooling is the value of the ApplySet tooling annotation.
func Tooling() string { return "kro/" + version.Version }

// ApplySetAnnotations are the ApplySet parent annotations of an instance:
// the group-kinds its graph manages and the namespaces, other than its own,
// that hold them.
func ApplySetAnnotations(inst Instance, groupKinds []schema.GroupKind, namespaces []string) map[string]string {
	gks := make([]string, 0, len(groupKinds))
	for _, gk := range groupKinds {
		gks = append(gks, gk.String()) // "Kind.group", the core group's as "Kind", as kubectl writes them
	}
	slices.Sort(gks)
	gks = slices.Compact(gks)
	return map[string]string{
		v1alpha1.AnnotationApplySetTooling:    Tooling(),
		v1alpha1.AnnotationApplySetGroupKinds: strings.Join(gks, ","),
		v1alpha1.AnnotationApplySetNamespaces: AdditionalNamespaces(inst, namespaces),
	}
}

// AdditionalNamespaces is the value of the ApplySet additional-namespaces
// annotation: the namespaces given, other than the instance's own, sorted.
func AdditionalNamespaces(inst Instance, namespaces []string) string {
	var others []string
	for _, ns := range namespaces {
		if ns != "" && ns != inst.Namespace {
			others = append(others, ns)
		}
	}
	slices.Sort(others)
	return strings.Join(slices.Compact(others), ",")
}

// RecordedKinds are the kinds an instance's ApplySet annotation lists: what
// kro-agent has applied for it, whatever its RGD now says.
func RecordedKinds(inst metav1.Object) []schema.GroupKind {
	var out []schema.GroupKind
	for _, s := range strings.Split(inst.GetAnnotations()[v1alpha1.AnnotationApplySetGroupKinds], ",") {
		if gk := schema.ParseGroupKind(strings.TrimSpace(s)); gk.Kind != "" {
			out = append(out, gk)
		}
	}
	return out
}

// RecordedNamespaces are the namespaces, other than the instance's own,
// that its ApplySet annotation says hold its resources.
func RecordedNamespaces(inst metav1.Object) []string {
	var out []string
	for _, ns := range strings.Split(inst.GetAnnotations()[v1alpha1.AnnotationApplySetNamespaces], ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// TemplateGroupKinds are the kinds an RGD's templates create, read from
// their apiVersion and kind as written, for the ApplySet contains-group-kinds
// annotation: the same list the compiled graph gives, without compiling.
func TemplateGroupKinds(rgd *v1alpha1.ResourceGraphDefinition) []schema.GroupKind {
	var out []schema.GroupKind
	for _, r := range rgd.Spec.Resources {
		if r == nil || r.ExternalRef != nil {
			continue
		}
		if gvk, ok := r.GroupVersionKind(); ok {
			out = append(out, gvk.GroupKind())
		}
	}
	return out
}

// Item places a managed object in its graph: its node, and its position in
// a collection (Size 0 for a single resource).
type Item struct {
	NodeID string
	Index  int
	Size   int
}

// ManagedLabels are the labels of a resource an instance manages: the
// author's instance labels (propagated), the instance labels, and the
// resource's place in the graph. kro's own labels win over the author's.
func ManagedLabels(rgd RGD, inst Instance, item Item) map[string]string {
	out := map[string]string{}
	for k, v := range inst.Labels {
		if !IsOwnershipKey(k) {
			out[k] = v
		}
	}
	for k, v := range InstanceLabels(rgd, inst) {
		out[k] = v
	}
	delete(out, v1alpha1.LabelApplySetID)
	out[v1alpha1.LabelApplySetPartOf] = ApplySetID(inst)
	out[v1alpha1.LabelInstanceID] = inst.UID
	out[v1alpha1.LabelInstanceName] = inst.Name
	out[v1alpha1.LabelInstanceNamespace] = inst.Namespace
	out[v1alpha1.LabelNodeID] = item.NodeID
	if item.Size > 0 {
		out[v1alpha1.LabelCollectionIndex] = strconv.Itoa(item.Index)
		out[v1alpha1.LabelCollectionSize] = strconv.Itoa(item.Size)
	}
	return out
}

// AddManagedLabels merges the managed labels into obj's own, which its
// template may have set. A label the template sets keeps its value over the
// instance's label of the same key: the RGD's author wrote it for this
// object, and may select on it (a Service on a Pod's app label), while the
// instance's author labelled the instance as a whole. kro's own labels win
// over both.
func AddManagedLabels(obj metav1.Object, rgd RGD, inst Instance, item Item) {
	labels := ManagedLabels(rgd, inst, item)
	for k, v := range obj.GetLabels() {
		if !IsOwnershipKey(k) {
			labels[k] = v
		}
	}
	obj.SetLabels(labels)
}

// managedLabelKeys are every label ManagedLabels sets, bar the author's.
var managedLabelKeys = []string{
	v1alpha1.LabelOwned, v1alpha1.LabelKroVersion, v1alpha1.LabelRGDID, v1alpha1.LabelRGDName, v1alpha1.LabelManagedBy,
	v1alpha1.LabelApplySetPartOf, v1alpha1.LabelInstanceID, v1alpha1.LabelInstanceName, v1alpha1.LabelInstanceNamespace,
	v1alpha1.LabelNodeID, v1alpha1.LabelCollectionIndex, v1alpha1.LabelCollectionSize,
}

// ReleasePatch is the JSON merge patch that takes the managed labels off
// the object of uid, leaving it an object like any other, as the garbage
// collector takes an orphan's ownerReferences off, and hands it to the
// next instance of inst's name (HandedTo), which adopts it as a new
// Deployment adopts the ReplicaSets an orphaning deletion left. It names
// the UID, so the API server refuses it for another object of the name (a
// UID never changes). An object that is an instance itself keeps its own
// labels: the instance webhook puts them back.
func ReleasePatch(uid string, inst Instance) []byte {
	labels := make(map[string]any, len(managedLabelKeys))
	for _, k := range managedLabelKeys {
		labels[k] = nil
	}
	annotations := map[string]any{v1alpha1.AnnotationAdoptBy: AdoptByValue(inst)}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid, "labels": labels, "annotations": annotations}})
	return patch
}

// IsOwnershipKey reports whether a label key is one only kro-agent may set.
func IsOwnershipKey(key string) bool {
	return strings.HasPrefix(key, "kro.run/") || strings.HasPrefix(key, "applyset.kubernetes.io/") || key == v1alpha1.LabelManagedBy
}

// CRDConflict says why the RGD named rgd may not write the existing
// CustomResourceDefinition crd, whose labels are given, or nil if it may:
// one it generated, or one generated for an RGD that no longer exists (an
// RGD created again for the kind adopts it, and with it the instances).
// A CRD that no RGD generated is someone else's API and stored objects;
// one that another RGD generates is that RGD's. rgdExists tells whether an
// RGD of the name exists.
func CRDConflict(crd string, labels map[string]string, rgd string, rgdExists func(name string) bool) error {
	owner := labels[v1alpha1.LabelRGDName]
	switch {
	case labels[v1alpha1.LabelOwned] != "true" || owner == "":
		return fmt.Errorf("CustomResourceDefinition %s exists and was not generated from a ResourceGraphDefinition (it has no %s label); kro-agent does not replace it: give the RGD another kind, or delete the CRD", crd, v1alpha1.LabelRGDName)
	case owner != rgd && rgdExists(owner):
		return fmt.Errorf("CustomResourceDefinition %s is generated by ResourceGraphDefinition %s; a kind is defined by one RGD", crd, owner)
	}
	return nil
}

// Claimant is the other instance an object's labels say it belongs to,
// when they name one that is not inst, and its RGD when that is not
// inst's: deleting the object frees its name only once that instance is
// gone, as it makes the object again while it exists.
func Claimant(labels map[string]string, inst Instance) (string, bool) {
	id := labels[v1alpha1.LabelInstanceID]
	name, namespace := labels[v1alpha1.LabelInstanceName], labels[v1alpha1.LabelInstanceNamespace]
	if id == "" || id == inst.UID || name == "" || earlierInstance(labels, inst) {
		return "", false
	}
	other := cache.NewObjectName(namespace, name).String()
	if rgd := labels[v1alpha1.LabelRGDName]; rgd != "" && inst.RGDName != "" && rgd != inst.RGDName {
		other += " of ResourceGraphDefinition " + rgd
	}
	return other, true
}

// earlierInstance tells whether labels name an instance of inst's name,
// namespace and kind: one deleted since, whose UID was another, maybe of
// an RGD since renamed. The ApplySet the labels place the object in says
// so where both it and inst's kind are known (its ID is made of the four);
// otherwise the name and namespace do, and the RGD where both say which.
func earlierInstance(labels map[string]string, inst Instance) bool {
	if set := labels[v1alpha1.LabelApplySetPartOf]; set != "" && inst.GVK.Kind != "" {
		return set == ApplySetID(inst)
	}
	rgd := labels[v1alpha1.LabelRGDName]
	return labels[v1alpha1.LabelInstanceName] == inst.Name && labels[v1alpha1.LabelInstanceNamespace] == inst.Namespace &&
		(rgd == "" || inst.RGDName == "" || rgd == inst.RGDName)
}

// Adopts tells whether inst takes over obj, an existing object that is not
// its own. Two kinds of object are:
//   - one kro-agent applied (appliedByAgent, read from its managedFields:
//     labels alone can be copied) for an earlier instance of inst's name,
//     namespace and kind, deleted without it (released when its RGD was
//     deleted, or its finalizer taken off by hand). Its labels place it in
//     inst's ApplySet, whose ID is made of those four, under another UID.
//     In the cluster that holds inst (local) that instance is gone for
//     certain, as two instances of one name and kind do not exist at once,
//     and the object is what inst's graph makes: deleting it first would
//     take a running workload down for nothing. In a workload cluster an
//     instance of the same name on another hub placing there may hold it,
//     so it is left alone there unless its owner hands it over;
//   - one its owner hands to inst with the annotation kro.run/adopt-by
//     (HandedTo): made by someone else (no kro.run/instance-id label: kubectl,
//     Helm, an instance deleted with propagationPolicy Orphan), or left by
//     an earlier instance as above. One another instance holds is not
//     adopted whatever it says: that instance would make it its own again.
func Adopts(inst Instance, obj metav1.Object, appliedByAgent, local bool) bool {
	return adopts(inst, obj.GetLabels(), HandedTo(obj, inst), appliedByAgent, local)
}

// adopts is Adopts of an object with these labels, handed to inst or not.
func adopts(inst Instance, labels map[string]string, handed, appliedByAgent, local bool) bool {
	id := labels[v1alpha1.LabelInstanceID]
	if id == "" {
		return handed
	}
	return appliedByAgent && (local || handed) && id != inst.UID && inst.GVK.Kind != "" &&
		labels[v1alpha1.LabelApplySetPartOf] == ApplySetID(inst)
}

// CanBeHandedTo tells whether inst would adopt obj if its owner handed it
// over (Adopts): not when another instance holds it.
func CanBeHandedTo(inst Instance, obj metav1.Object, appliedByAgent, local bool) bool {
	return adopts(inst, obj.GetLabels(), true, appliedByAgent, local)
}

// HandedTo tells whether obj's annotation kro.run/adopt-by names inst.
func HandedTo(obj metav1.Object, inst Instance) bool {
	return obj.GetAnnotations()[v1alpha1.AnnotationAdoptBy] == AdoptByValue(inst)
}

// AdoptByValue is the value of the annotation kro.run/adopt-by that hands an
// object to inst: "namespace/name", or "name" for a cluster-scoped instance.
func AdoptByValue(inst Instance) string {
	return cache.NewObjectName(inst.Namespace, inst.Name).String()
}

// notAdoptedRemotely says why an object in a workload cluster that Adopts
// would take over in inst's own cluster is left alone there.
const notAdoptedRemotely = "kro-agent adopts what an earlier instance of this name left only in the instance's own cluster, unless its owner hands it over: in a workload cluster, an instance of this name placed there from another cluster may still hold it"

// WhyAdopted says, for an Event or a plan, why inst takes over obj, which
// it Adopts.
func WhyAdopted(obj metav1.Object, inst Instance) string {
	if HandedTo(obj, inst) {
		return fmt.Sprintf("handed to this instance by its annotation %s", v1alpha1.AnnotationAdoptBy)
	}
	return fmt.Sprintf("left by an earlier instance of this name (%s %s), deleted since", v1alpha1.LabelInstanceID, obj.GetLabels()[v1alpha1.LabelInstanceID])
}

// OtherWriters are the field managers but kro-agent that hold fields of
// obj beyond its metadata (its spec, its data) through the object itself,
// not a subresource such as status or scale. After kro-agent's apply of an
// object it adopted, what they set and its template does not stays as
// they set it: server-side apply removes only what its applier applied
// before.
func OtherWriters(obj metav1.Object) []string {
	var writers []string
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldManager || e.Subresource != "" || e.FieldsV1 == nil || slices.Contains(writers, e.Manager) {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for k := range fields {
			if k != "f:metadata" {
				writers = append(writers, e.Manager)
				break
			}
		}
	}
	slices.Sort(writers)
	return writers
}

// Whose says whose an existing object is, by its labels, to an instance
// that expected to manage it, or "" when it is the instance's: kro-agent
// never writes over such an object (it would take it over).
func Whose(labels map[string]string, inst Instance) string {
	id := labels[v1alpha1.LabelInstanceID]
	switch {
	case id == inst.UID:
		return ""
	case id == "":
		return fmt.Sprintf("was not created by kro-agent (it has no %s label)", v1alpha1.LabelInstanceID)
	case earlierInstance(labels, inst):
		return fmt.Sprintf("was created for an earlier instance of this name (%s %s; this one's is %s)", v1alpha1.LabelInstanceID, id, inst.UID)
	}
	if other, ok := Claimant(labels, inst); ok {
		return fmt.Sprintf("belongs to another instance, %s (%s %s)", other, v1alpha1.LabelInstanceID, id)
	}
	return fmt.Sprintf("belongs to another instance (%s %s)", v1alpha1.LabelInstanceID, id)
}

// LeftAlone says why kro-agent does not apply what resource nodeID renders
// over obj, an existing object that is not inst's (Whose says whose) and
// which it does not adopt (appliedByAgent and local as Adopts takes them),
// and what the user can do: an object another instance makes is made again
// while that instance exists, so deleting it is no remedy until then; one
// no instance holds can be handed over instead (Adopts).
func LeftAlone(obj metav1.Object, inst Instance, nodeID string, appliedByAgent, local bool) string {
	labels := obj.GetLabels()
	remedy := fmt.Sprintf("delete it, or have resource %s render another name", nodeID)
	if other, ok := Claimant(labels, inst); ok {
		remedy = fmt.Sprintf("have resource %s render another name for this instance, or delete it once %s is gone (while it exists, it makes the object again)", nodeID, other)
	}
	why := Whose(labels, inst) + ": kro-agent leaves it as it is; " + remedy
	if CanBeHandedTo(inst, obj, appliedByAgent, local) {
		why += fmt.Sprintf("; or, to keep it, hand it to this instance with the annotation %s=%s", v1alpha1.AnnotationAdoptBy, AdoptByValue(inst))
		if given, ok := obj.GetAnnotations()[v1alpha1.AnnotationAdoptBy]; ok {
			why += fmt.Sprintf(" (its annotation says %q)", given)
		}
	}
	if !local && Adopts(inst, obj, appliedByAgent, true) {
		why += "; " + notAdoptedRemotely
	}
	return why
}
