package plugin

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func pod(name string, phase corev1.PodPhase, conds []corev1.PodCondition, containers ...corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.PodStatus{Phase: phase, Conditions: conds, ContainerStatuses: containers},
	}
}

var (
	ready      = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	notReady   = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [web]"}}
	noNode     = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	running    = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	backingOff = corev1.ContainerStatus{
		Name:                 "web",
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=web pod=a"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
	}
)

func TestPodTroubleSaysWhereAPodIsStuck(t *testing.T) {
	deleting := pod("old", corev1.PodRunning, notReady)
	deleting.DeletionTimestamp = &metav1.Time{}
	initStuck := pod("init", corev1.PodPending, notReady)
	initStuck.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}
	jobFailed := pod("job", corev1.PodFailed, nil, corev1.ContainerStatus{Name: "run", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}})
	evicted := pod("evicted", corev1.PodFailed, nil)
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "The node was low on resource: memory."

	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string // "" for no trouble
	}{
		{"ready", pod("a", corev1.PodRunning, ready, corev1.ContainerStatus{Name: "web", State: running, Ready: true}), ""},
		{"done", pod("a", corev1.PodSucceeded, nil), ""},
		{"going away", deleting, ""},
		{"no node takes it", pod("a", corev1.PodPending, noNode), "Pending/: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."},
		{"a back-off tells the last exit", pod("a", corev1.PodRunning, notReady, backingOff), "Running/web: CrashLoopBackOff: exited with code 1 (Error)"},
		{"an image that cannot be pulled", pod("a", corev1.PodPending, notReady, corev1.ContainerStatus{Name: "web", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "ngnix"`}}}),
			`Pending/web: ImagePullBackOff: Back-off pulling image "ngnix"`},
		{"a container still being created is no trouble of its own", pod("a", corev1.PodPending, notReady, corev1.ContainerStatus{Name: "web", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}),
			"Pending/: ContainersNotReady: containers with unready status: [web]"},
		{"an init container that failed", initStuck, "Pending/init container migrate: Error: exited with code 2"},
		{"evicted", evicted, "Failed/: Evicted: The node was low on resource: memory."},
		{"a Job's Pod that failed tells its container's exit", jobFailed, "Failed/run: Error: exited with code 3 (Error)"},
		{"failed, no container told", pod("a", corev1.PodFailed, nil), "Failed/: Failed: "},
		{"running, not ready: the readiness probe", pod("a", corev1.PodRunning, notReady, corev1.ContainerStatus{Name: "web", State: running}),
			"Running/: ContainersNotReady: its containers run, but not all are ready: their readiness probe has not passed (the Pod's events say why)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := podTrouble(&tc.pod)
			if !ok {
				if tc.want != "" {
					t.Fatalf("no trouble, want %q", tc.want)
				}
				return
			}
			if s := got.Phase + "/" + got.Container + ": " + got.Reason + ": " + got.Message; s != tc.want {
				t.Errorf("got %q\nwant %q", s, tc.want)
			}
		})
	}
}

func TestPodTroublesAreToldOnceForAllPodsTheyHold(t *testing.T) {
	pods := []corev1.Pod{
		pod("a-1", corev1.PodRunning, ready, corev1.ContainerStatus{Name: "web", State: running, Ready: true}),
		pod("a-2", corev1.PodPending, noNode),
		pod("a-3", corev1.PodRunning, notReady, backingOff),
		pod("a-4", corev1.PodPending, noNode),
		pod("a-5", corev1.PodPending, noNode),
	}
	got := podTroubles(pods)
	if len(got) != 2 {
		t.Fatalf("got %d troubles, want 2: %+v", len(got), got)
	}
	for i, want := range []string{
		"Pods a-2, a-4 and 1 more (3 of 5) are not ready: Pending, Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.",
		"Pod a-3 (1 of 5) is not ready: Running, container web, CrashLoopBackOff: exited with code 1 (Error)",
	} {
		if s := got[i].String(); s != want {
			t.Errorf("trouble %d:\n got %q\nwant %q", i, s, want)
		}
	}
	if got := podTroubles(pods[:1]); len(got) != 0 {
		t.Errorf("ready Pods have no trouble: %+v", got)
	}
}

func TestPodAdviceNamesWhatToLookAt(t *testing.T) {
	workload := &unstructured.Unstructured{}
	workload.SetAPIVersion("apps/v1")
	workload.SetKind("Deployment")
	r := &Row{NodeID: "deployment", Namespace: "apps", object: workload}
	crash := podTroubles([]corev1.Pod{pod("a-3", corev1.PodRunning, notReady, backingOff)})[0]
	if got := podAdvice(crash, r); !strings.Contains(got, "a container of resource deployment's Pods keeps exiting: kubectl logs a-3 -c web --previous -n apps") {
		t.Errorf("advice for a crashing container: %q", got)
	}
	unschedulable := podTroubles([]corev1.Pod{pod("a-2", corev1.PodPending, noNode)})[0]
	if got := podAdvice(unschedulable, r); !strings.Contains(got, "no node can take its Pods") || !strings.Contains(got, "what resource deployment's Pods ask for") {
		t.Errorf("advice for a Pod no node takes: %q", got)
	}
	failed := podTroubles([]corev1.Pod{pod("job-1", corev1.PodFailed, nil, corev1.ContainerStatus{Name: "run", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}})})[0]
	if got := podAdvice(failed, r); !strings.Contains(got, "kubectl logs job-1 -c run -n apps shows why") {
		t.Errorf("advice for a container that exited, not restarted: %q", got)
	}
	oom := backingOff
	oom.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
	if got := podAdvice(podTroubles([]corev1.Pod{pod("a-4", corev1.PodRunning, notReady, oom)})[0], r); !strings.Contains(got, "uses more memory than its limit: raise the limit in resource deployment's template") {
		t.Errorf("advice for a container killed for its memory: %q", got)
	}
	claim := pod("db-0", corev1.PodPending, []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"}})
	waiting := podTroubles([]corev1.Pod{claim})[0]
	if got := podAdvice(waiting, r); !strings.Contains(got, "resource deployment's Pods wait for their PersistentVolumeClaims to be bound") || strings.Contains(got, "no node") {
		t.Errorf("advice for a Pod whose claim is not bound: %q", got)
	}
	// A Pod the graph makes itself is "it".
	self := &unstructured.Unstructured{}
	self.SetAPIVersion("v1")
	self.SetKind("Pod")
	if got := podAdvice(unschedulable, &Row{NodeID: "pod", object: self}); !strings.Contains(got, "no node can take it") || !strings.Contains(got, "what resource pod asks for") {
		t.Errorf("advice for a Pod of the graph no node takes: %q", got)
	}
}

func TestClaimsOfAPod(t *testing.T) {
	p := corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}},
	}}}
	if got := claimsOf(&p); len(got) != 1 || got[0] != "data-db-0" {
		t.Errorf("claims = %v, want [data-db-0]", got)
	}
}

func TestWorkloadSelector(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector any
		want     string // "" for none
	}{
		{"labels", map[string]any{"matchLabels": map[string]any{"app": "web"}}, "app=web"},
		{"expressions", map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"a", "b"}}}}, "tier in (a,b)"},
		{"everything is no answer", map[string]any{}, ""},
		{"not a selector", map[string]any{"matchLabels": "app"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"selector": tc.selector}}}
			got, ok := workloadSelector(u)
			if !ok {
				if tc.want != "" {
					t.Fatalf("no selector, want %q", tc.want)
				}
				return
			}
			if got.String() != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
