package plugin

import (
	"io"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubetesting "k8s.io/client-go/testing"
)

// diskCache stands for kubectl's discovery cache on disk: it answers what
// it last cached, stale (not Fresh) until invalidated, when it answers
// what the server serves now.
type diskCache struct {
	*fakediscovery.FakeDiscovery
	fresh        bool
	cached, live []*metav1.APIResourceList
	// reads counts the reads of a group version's resources, or of all.
	reads atomic.Int32
}

func newDiskCache(cached, live []*metav1.APIResourceList) *diskCache {
	d := &diskCache{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &kubetesting.Fake{}}, cached: cached, live: live}
	d.Resources = cached
	return d
}

func (d *diskCache) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.reads.Add(1)
	return d.FakeDiscovery.ServerResourcesForGroupVersion(gv)
}

func (d *diskCache) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	d.reads.Add(1)
	return d.FakeDiscovery.ServerGroupsAndResources()
}

func (d *diskCache) Fresh() bool { return d.fresh }

func (d *diskCache) Invalidate() {
	d.fresh = true
	d.Resources = d.live
}

var _ discovery.CachedDiscoveryInterface = &diskCache{}

func kroKinds(kinds ...string) []*metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: "kro.run/v1alpha1"}
	for _, k := range kinds {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: k + "s", Kind: k, Namespaced: true, Verbs: metav1.Verbs{"get", "list"}})
	}
	return []*metav1.APIResourceList{list}
}

// status maps every kind RGDs serve: the disk cache is read once for all
// of them, not once each.
func TestKindsAreMappedFromDiscoveryReadOnce(t *testing.T) {
	kinds := []string{"WebApp", "Queue", "Cache", "Bucket", "Topic"}
	disk := newDiskCache(kroKinds(kinds...), kroKinds(kinds...))
	disk.fresh = true
	c := &cluster{mapper: kubectlMapper(inMemory(disk), io.Discard)}
	for _, k := range kinds {
		if _, err := c.mapping(k); err != nil {
			t.Fatalf("mapping(%s): %v", k, err)
		}
	}
	if n := disk.reads.Load(); n != 1 {
		t.Errorf("mapping %d kinds read the disk cache %d times, want once", len(kinds), n)
	}
}

// A kind served since kubectl cached discovery (an RGD just created) is
// found: the cache kept in memory is no fresher than the disk's.
func TestAKindNewerThanTheDiskCacheIsFound(t *testing.T) {
	disk := newDiskCache(kroKinds("WebApp"), kroKinds("WebApp", "Queue"))
	c := &cluster{mapper: kubectlMapper(inMemory(disk), io.Discard)}
	m, err := c.mapping("queue")
	if err != nil || m.GroupVersionKind.Kind != "Queue" {
		t.Fatalf("mapping(queue) = %v, %v; want the kind the server serves now", m, err)
	}
}
