package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// controller is one implementation of the kro API under measurement.
type controller struct {
	Name string
	// UserAgent prefixes the controller's requests in the audit log.
	UserAgent string
	// CRDs to install before it starts.
	CRDs []string
	args func(c *benchCluster) []string
	bin  string
}

// process is a running controller.
type process struct {
	cmd *exec.Cmd
	log *os.File
}

func (ctl *controller) start(c *benchCluster, logDir string) (*process, error) {
	log, err := os.Create(filepath.Join(logDir, fmt.Sprintf("%s-%d.log", ctl.Name, time.Now().UnixNano())))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(ctl.bin, ctl.args(c)...)
	cmd.Stdout, cmd.Stderr = log, log
	// A benchmark interrupted leaves no controller behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	return &process{cmd: cmd, log: log}, nil
}

// touchedIn is how much of its memory the process touches over window: the
// kernel's referenced bits are cleared (/proc/PID/clear_refs), and those set
// again by the end are summed (smaps_rollup's Referenced). Nothing is taken
// from the process, which runs on as before.
func (p *process) touchedIn(ctx context.Context, window time.Duration) (float64, error) {
	pid := p.cmd.Process.Pid
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("1"), 0); err != nil {
		return 0, fmt.Errorf("clearing the referenced bits of %s: %w", p.cmd.Path, err)
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(window):
	}
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(rollup), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Referenced:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no Referenced line in /proc/%d/smaps_rollup", pid)
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

// usage is what the kernel says the process used so far. RSS is the sum of
// AnonMB, memory of its own (heap, stacks), and FileMB, pages of files it
// maps, above all of its binary: those stay counted once touched, at
// startup as much as since, though the kernel can drop them at any time.
type usage struct {
	RSSMB, PeakRSSMB, AnonMB, FileMB, CPUSeconds float64
}

func (p *process) usage() (usage, error) {
	pid := p.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return usage{}, err
	}
	var u usage
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			u.RSSMB = kb / 1024
		case "VmHWM:":
			u.PeakRSSMB = kb / 1024
		case "RssAnon:":
			u.AnonMB = kb / 1024
		case "RssFile:":
			u.FileMB = kb / 1024
		}
	}
	if u.CPUSeconds, err = cpuSeconds(pid); err != nil {
		return usage{}, err
	}
	return u, nil
}

// controllers returns kro-agent, and upstream kro with its shipped defaults
// and with as many workers as kro-agent.
func controllers(ctx context.Context, root, cacheDir, kroVersion string, workers int, agentArgs []string) ([]*controller, error) {
	agent := &controller{
		Name: "kro-agent", UserAgent: "kro-agent",
		bin:  filepath.Join(root, "bin", "kro-agent"),
		CRDs: []string{filepath.Join(root, "manifests", "crds", "kro.run_resourcegraphdefinitions.yaml"), filepath.Join(root, "manifests", "crds", "agent.kro.run_clusters.yaml")},
		args: func(c *benchCluster) []string {
			args := []string{"--kubeconfig", c.kubeconfig, "--workers", strconv.Itoa(workers),
				"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
				"--webhook-bind-address", "127.0.0.1:19643", "--webhook-url", "https://127.0.0.1:19643"}
			return append(args, agentArgs...)
		},
	}
	kroBin, kroCRDs, err := installKro(ctx, cacheDir, kroVersion)
	if err != nil {
		return nil, err
	}
	kroArgs := func(c *benchCluster) []string {
		return []string{"--kubeconfig", c.kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	}
	kro := &controller{Name: "kro", UserAgent: "kro/", bin: kroBin, CRDs: kroCRDs, args: kroArgs}
	kroWorkers := &controller{Name: fmt.Sprintf("kro-%dw", workers), UserAgent: "kro/", bin: kroBin, CRDs: kroCRDs,
		args: func(c *benchCluster) []string {
			return append(kroArgs(c), "--dynamic-controller-concurrent-reconciles", strconv.Itoa(workers))
		}}
	return []*controller{agent, kro, kroWorkers}, nil
}

// installKro builds upstream kro's controller with go install, once per
// version, and finds its CRDs in the module's helm/crds. It is built as kro's
// image is (ko: static, -trimpath, -s -w), and as `make build` builds
// kro-agent, so both map the same kind of binary.
func installKro(ctx context.Context, cacheDir, version string) (string, []string, error) {
	const module = "github.com/kubernetes-sigs/kro"
	gobin := filepath.Join(cacheDir, "kro-"+version+"-static")
	bin := filepath.Join(gobin, "controller")
	if _, err := os.Stat(bin); err != nil {
		cmd := exec.CommandContext(ctx, "go", "install", "-trimpath", "-ldflags=-s -w", module+"/cmd/controller@"+version)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("go install %s/cmd/controller@%s: %w\n%s", module, version, err, out)
		}
	}
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version).Output()
	if err != nil {
		return "", nil, fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var dl struct{ Dir string }
	if err := json.Unmarshal(out, &dl); err != nil {
		return "", nil, err
	}
	crds, err := filepath.Glob(filepath.Join(dl.Dir, "helm", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return "", nil, fmt.Errorf("no CRDs in %s/helm/crds", dl.Dir)
	}
	return bin, crds, nil
}
