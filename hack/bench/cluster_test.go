package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCountRequestsReadsRotatedAuditLogs(t *testing.T) {
	dir := t.TempDir()
	line := func(verb, agent, resource string, at time.Time) string {
		return `{"verb":"` + verb + `","userAgent":"` + agent + `","requestReceivedTimestamp":"` + at.Format(time.RFC3339Nano) + `","objectRef":{"resource":"` + resource + `"}}`
	}
	from := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	write := func(name string, lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The API server rotated the log once during the run.
	write("audit-2026-11-21T11-00-30.000.log",
		line("patch", "kro/v0.9.4", "configmaps", from.Add(time.Second)),
		line("get", "kro/v0.9.4", "configmaps", from.Add(2*time.Second)),
		line("patch", "kro-agent", "configmaps", from.Add(2*time.Second)),
	)
	write("audit.log",
		line("patch", "kro/v0.9.4", "secrets", from.Add(40*time.Second)),
		line("create", "kro/v0.9.4", "events", from.Add(41*time.Second)),
		line("patch", "kro/v0.9.4", "secrets", to.Add(time.Second)), // after the window
	)
	write("kube-apiserver.log", line("patch", "kro/v0.9.4", "configmaps", from.Add(time.Second)))

	c := &benchCluster{auditLog: filepath.Join(dir, "audit.log")}
	r, err := c.countRequests("kro/", from, to)
	if err != nil {
		t.Fatal(err)
	}
	if r.Writes != 2 || r.Gets != 1 || r.Events != 1 {
		t.Errorf("writes %d, gets %d, events %d; want 2, 1, 1 (%v)", r.Writes, r.Gets, r.Events, r.ByVerb)
	}
}

// A cluster's logs are copied whole into a directory of their own, to be
// read after the cluster is deleted; a second copy does not overwrite the
// first.
func TestKeepLogsCopiesTheClustersLogs(t *testing.T) {
	logs, kept := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"audit.log": `{"verb":"create"}` + "\n", "kube-apiserver.log": "started\n"} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &benchCluster{name: "kro-bench", auditLog: filepath.Join(logs, "audit.log"), keepLogsIn: kept}
	first, err := c.keepLogs()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(first, "audit.log")); err != nil || string(got) != `{"verb":"create"}`+"\n" {
		t.Errorf("kept audit log: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(first, "kube-apiserver.log")); err != nil {
		t.Errorf("the API server's log was not kept: %v", err)
	}
	time.Sleep(2 * time.Millisecond)
	second, err := c.keepLogs()
	if err != nil || second == first {
		t.Errorf("a second copy went to %s (the first to %s): %v", second, first, err)
	}
}
