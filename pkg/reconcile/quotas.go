package reconcile

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/kro-agent/kro-agent/pkg/quota"
)

// quotaRefusal is a write a ResourceQuota has no room for, cannot admit
// before the quota controller has counted its usage, or refuses for what
// the object does not specify.
type quotaRefusal struct {
	quota objectRef
	err   error
}

func (e *quotaRefusal) Error() string {
	return fmt.Sprintf("%v; it is applied as soon as ResourceQuota %s allows it", e.err, cache.NewObjectName(e.quota.Namespace, e.quota.Name))
}

func (e *quotaRefusal) Unwrap() error { return e.err }

// asQuotaRefusal tells a write of an object in namespace of cluster that a
// ResourceQuota refused, and names the quota.
func asQuotaRefusal(err error, cluster, namespace string) (*quotaRefusal, bool) {
	if namespace == "" || !apierrors.IsForbidden(err) {
		return nil, false
	}
	refusal, ok := quota.RefusedBy(err.Error())
	if !ok {
		return nil, false
	}
	ref := objectRef{Cluster: cluster, GVR: corev1.SchemeGroupVersion.WithResource("resourcequotas"), Namespace: namespace, Name: refusal.Quota}
	return &quotaRefusal{quota: ref, err: err}, true
}
