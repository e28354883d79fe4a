// Package localcluster gives end-to-end tests a real local Kubernetes: the
// control plane built from Go modules by hack/cluster and started with
// kwokctl, one per test binary, deleted when the tests finish.
package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
)

// RepoRoot finds the module root from the test's working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "cluster", "up.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("hack/cluster/up.sh not found above the working directory")
		}
		dir = parent
	}
}

// BinDir returns the directory of the cluster binaries (kubectl among them),
// building them on first use.
func BinDir(ctx context.Context) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out, err := run(ctx, filepath.Join(root, "hack", "cluster", "build.sh"), nil)
	return strings.TrimSpace(out), err
}

// Start creates (or reuses, or starts again) the cluster called name and
// returns the path of its kubeconfig.
func Start(ctx context.Context, name string) (string, error) {
	out, err := clusterScript(ctx, "up.sh", name)
	return strings.TrimSpace(out), err
}

// Stop deletes the cluster called name.
func Stop(ctx context.Context, name string) error {
	_, err := clusterScript(ctx, "down.sh", name)
	return err
}

// Suspend stops the processes of the cluster called name and keeps the
// cluster: Start runs it again with what it held.
func Suspend(ctx context.Context, name string) error {
	_, err := clusterScript(ctx, "stop.sh", name)
	return err
}

// clusterScript runs one of hack/cluster's scripts for the cluster called
// name.
func clusterScript(ctx context.Context, script, name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return run(ctx, filepath.Join(root, "hack", "cluster", script), []string{"KRO_AGENT_CLUSTER=" + name})
}

// Create is an e2e-framework setup step that starts the cluster and points
// the test configuration at it.
func Create(name string) env.Func {
	return func(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
		kubeconfig, err := Start(ctx, name)
		if err != nil {
			return ctx, err
		}
		cfg.WithKubeconfigFile(kubeconfig)
		return ctx, nil
	}
}

// Destroy is an e2e-framework finish step that deletes the cluster, unless
// KRO_AGENT_KEEP_CLUSTER is set for debugging.
func Destroy(name string) env.Func {
	return func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
		if os.Getenv("KRO_AGENT_KEEP_CLUSTER") != "" {
			return ctx, nil
		}
		return ctx, Stop(ctx, name)
	}
}

// DeleteOrphans is an e2e-framework setup step that deletes the clusters
// named after a test binary that is gone (see orphans): one killed, or cut
// off by go test's timeout, before its finish steps ran leaves its control
// planes running, and the next run would share the machine's two cores
// with them.
func DeleteOrphans(prefix string) env.Func {
	return func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
		root, err := RepoRoot()
		if err != nil {
			return ctx, err
		}
		out, err := run(ctx, filepath.Join(root, "hack", "cluster", "list.sh"), nil)
		if err != nil {
			return ctx, fmt.Errorf("listing local clusters: %w", err)
		}
		for _, name := range orphans(strings.Fields(out), prefix, alive) {
			if err := Stop(ctx, name); err != nil {
				return ctx, fmt.Errorf("deleting cluster %s, left by a test binary that is gone: %w", name, err)
			}
		}
		return ctx, nil
	}
}

// orphans returns the clusters of names that are prefix followed by the
// pid of a process that is not alive, and maybe a suffix after a dash (a
// test's second cluster, kro-agent-e2e-PID-workload).
func orphans(names []string, prefix string, alive func(pid int) bool) []string {
	var out []string
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, prefix)
		digits, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || alive(pid) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// alive tells whether a process of that pid exists (signal 0 checks
// without sending anything; EPERM means it exists as another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func run(ctx context.Context, script string, extraEnv []string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", filepath.Base(script), err, stderr.String())
	}
	return stdout.String(), nil
}

// WaitEstablished waits until the named CRD serves its kind.
func WaitEstablished(ctx context.Context, cfg *rest.Config, name string) error {
	client, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
