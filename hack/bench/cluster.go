package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// auditPolicy records every request's metadata (who, which user agent,
// verb, resource), the only way to count one client's requests exactly by
// kind; Leases (leader election, node heartbeats) are left out.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    resources: [{group: coordination.k8s.io, resources: [leases]}]
  - level: None
    nonResourceURLs: ["*"]
  - level: Metadata
`

// benchCluster is a fresh local cluster for one measurement.
type benchCluster struct {
	name       string
	kubeconfig string
	auditLog   string
	cfg        *rest.Config
	dyn        dynamic.Interface
	// keepLogsIn, when set, is where delete copies the cluster's logs
	// first.
	keepLogsIn string
}

// freshCluster deletes any cluster of that name and creates a new one with
// the given number of fake nodes and audit logging.
func freshCluster(ctx context.Context, root, name string, nodes int) (*benchCluster, error) {
	_ = runScript(ctx, root, "down.sh", name, nil)
	policy := filepath.Join(os.TempDir(), "kro-bench-audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err := runScript(ctx, root, "up.sh", name, &out,
		fmt.Sprintf("KRO_AGENT_NODES=%d", nodes),
		"KRO_AGENT_KWOKCTL_ARGS=--kube-audit-policy "+policy+" --disable-qps-limits")
	if err != nil {
		return nil, err
	}
	kubeconfig := strings.TrimSpace(out.String())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// Certificates by content, not path: client-go caches transports by
	// their TLS configuration, and every fresh cluster reuses the paths.
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = 5000, 10000, "kro-bench"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &benchCluster{name: name, kubeconfig: kubeconfig, cfg: cfg, dyn: dyn,
		auditLog: filepath.Join(filepath.Dir(kubeconfig), "logs", "audit.log")}
	if _, err := os.Stat(c.auditLog); err != nil {
		return nil, fmt.Errorf("the cluster writes no audit log at %s: %w", c.auditLog, err)
	}
	return c, nil
}

func (c *benchCluster) delete(ctx context.Context, root string) {
	if c.keepLogsIn != "" {
		if dir, err := c.keepLogs(); err != nil {
			log.Printf("  keeping the cluster's logs: %v", err)
		} else {
			log.Printf("  the cluster's logs, its API server's audit log among them: %s", dir)
		}
	}
	_ = runScript(ctx, root, "down.sh", c.name, nil)
}

// keepLogs copies the cluster's logs (its components' and the API
// server's audit log) into a directory of their own under keepLogsIn, to
// be read request by request after the cluster is gone.
func (c *benchCluster) keepLogs() (string, error) {
	dir := filepath.Join(c.keepLogsIn, c.name+"-"+time.Now().Format("20060102-150405.000"))
	return dir, os.CopyFS(dir, os.DirFS(filepath.Dir(c.auditLog)))
}

func runScript(ctx context.Context, root, script, cluster string, stdout *bytes.Buffer, env ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "cluster", script))
	cmd.Env = append(append(os.Environ(), "KRO_AGENT_CLUSTER="+cluster), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	return nil
}

// requests counts one client's API requests in the audit log.
type requests struct {
	Writes int `json:"writes"` // create, update, patch, delete (events left out)
	Events int `json:"events"` // event writes
	Gets   int `json:"gets"`   // single-object reads
	Lists  int `json:"lists"`  // lists and watches
	// ByVerb counts writes by "verb resource", to tell what they were.
	ByVerb map[string]int `json:"byVerb,omitempty"`
}

// countRequests reads the audit log and counts the requests of the client
// whose user agent starts with agent, received within [from, to).
func (c *benchCluster) countRequests(agent string, from, to time.Time) (requests, error) {
	r := requests{ByVerb: map[string]int{}}
	files, err := auditFiles(c.auditLog)
	if err != nil {
		return r, err
	}
	for _, file := range files {
		if err := countIn(file, agent, from, to, &r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// auditFiles are the audit log and the backups it was rotated into: the
// API server rotates it at 100 MB (--audit-log-maxsize, 0 meaning the
// default), which runs at N=5000 reach, into audit-<time>.log beside it.
func auditFiles(log string) ([]string, error) {
	ext := filepath.Ext(log)
	backups, err := filepath.Glob(strings.TrimSuffix(log, ext) + "-*" + ext)
	if err != nil {
		return nil, err
	}
	return append(backups, log), nil
}

func countIn(file, agent string, from, to time.Time, r *requests) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string    `json:"verb"`
			UserAgent string    `json:"userAgent"`
			Received  time.Time `json:"requestReceivedTimestamp"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || !strings.HasPrefix(ev.UserAgent, agent) {
			continue
		}
		if ev.Received.Before(from) || !ev.Received.Before(to) {
			continue
		}
		switch ev.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
			r.ByVerb[ev.Verb+" "+ev.ObjectRef.Resource+"/"+ev.ObjectRef.Subresource]++
			if ev.ObjectRef.Resource == "events" {
				r.Events++
			} else {
				r.Writes++
			}
		case "get":
			r.Gets++
		case "list", "watch":
			r.Lists++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	return nil
}
