package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kro-agent/kro-agent/pkg/guard"
	"github.com/kro-agent/kro-agent/pkg/webhook"
)

func TestFirstPassCompletesOnceEveryListedRGDIsReconciled(t *testing.T) {
	calls := 0
	p := &firstPass{complete: func() { calls++ }}
	p.reconciled("a") // before the list is read
	p.reconciled("gone")
	if calls != 0 {
		t.Fatal("complete before the RGDs were listed")
	}
	p.listed([]string{"a", "b", "c"})
	p.reconciled("b")
	if calls != 0 {
		t.Fatal("complete with c not reconciled yet")
	}
	p.reconciled("c")
	p.reconciled("a")
	p.listed([]string{"d"})
	if calls != 1 {
		t.Errorf("complete called %d times, want once", calls)
	}

	none := 0
	empty := &firstPass{complete: func() { none++ }}
	empty.listed(nil)
	if none != 1 {
		t.Errorf("with no RGDs, complete called %d times, want once at the list", none)
	}
}

// A change to what the agent registered wakes the check; one to anyone
// else's admission configuration does not.
func TestAdmissionChangesWakeTheCheckOfOwnRegistrationsOnly(t *testing.T) {
	hooks := &webhooks{registrar: &webhook.Registrar{}, check: make(chan struct{}, 1)}
	changed := hooks.admissionChanged()
	changed(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, "cert-manager-webhook")
	changed(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, "kro-agent")
	changed(schema.GroupResource{Group: "example.org", Resource: "mutatingwebhookconfigurations"}, webhook.ConfigName)
	if len(hooks.check) != 0 {
		t.Fatal("another's admission configuration woke the check")
	}
	changed(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, webhook.ConfigName)
	changed(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, guard.NoTakeoverPolicyName)
	if len(hooks.check) != 1 {
		t.Fatal("a change to the agent's own registration did not wake the check")
	}
	var none *webhooks // webhooks disabled
	if none.admissionChanged() != nil {
		t.Error("an agent without webhooks follows their registration")
	}
}

// Someone who keeps deleting the agent's webhook configuration the moment
// it is back (another controller with its own idea of it) is answered
// ever more slowly, not in a tight loop of writes: at once, then after
// 1 s, 2 s, ... up to the interval.
func TestRestoringRegistrationsBacksOffWhenUndoneAgainAndAgain(t *testing.T) {
	client := fake.NewClientset()
	var mu sync.Mutex
	creates := 0
	client.PrependReactor("create", "mutatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		creates++
		mu.Unlock()
		return false, nil, nil
	})
	registrar := &webhook.Registrar{Client: client, URL: "https://127.0.0.1:9443", AgentUser: "kro-agent"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := registrar.SetCABundle(ctx, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	logged := 0
	log := funcr.New(func(_, args string) {
		if strings.Contains(args, "were deleted or changed by someone else; registered them again") {
			mu.Lock()
			logged++
			mu.Unlock()
		}
	}, funcr.Options{})
	hooks := &webhooks{registrar: registrar, log: log, retry: make(chan struct{}, 1), check: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hooks.verifyRegistrations(ctx, 2*time.Second)
	}()
	changed := hooks.admissionChanged()
	mwcs := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	fight := time.After(3500 * time.Millisecond)
	for fighting := true; fighting; {
		select {
		case <-fight:
			fighting = false
		case <-time.After(5 * time.Millisecond):
			if err := mwcs.Delete(ctx, webhook.ConfigName, metav1.DeleteOptions{}); err == nil {
				changed(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, webhook.ConfigName)
			}
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// The first registration, then restorations at about 0, 1 and 3 s.
	if restorations := creates - 1; restorations < 2 || restorations > 4 {
		t.Errorf("restored %d times in 3.5 s of deletions, want 3 (at 0, 1 and 3 s)", restorations)
	}
	if logged != creates-1 {
		t.Errorf("logged %d restorations of %d", logged, creates-1)
	}
}
