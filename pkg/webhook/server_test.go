package webhook

import (
	"log"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// What the HTTP server reports goes to the agent's structured log: a
// failed TLS handshake (a TCP probe, a client that gave up) at debug
// level, anything else as an error.
func TestServerMessagesAreLogged(t *testing.T) {
	var lines []string
	logger := funcr.NewJSON(func(obj string) { lines = append(lines, obj) }, funcr.Options{Verbosity: 1})
	std := log.New(serverLog{logger}, "", 0)
	std.Printf("http: TLS handshake error from 127.0.0.1:49890: EOF")
	std.Printf("http: Accept error: too many open files; retrying in 5ms")
	if len(lines) != 2 {
		t.Fatalf("logged %q, want two lines", lines)
	}
	if !strings.Contains(lines[0], `"level":1`) || !strings.Contains(lines[0], `"msg":"http: TLS handshake error from 127.0.0.1:49890: EOF"`) {
		t.Errorf("handshake error logged as %s, want it at debug level", lines[0])
	}
	if !strings.Contains(lines[1], `"error":null`) || !strings.Contains(lines[1], "Accept error") {
		t.Errorf("accept error logged as %s, want it as an error", lines[1])
	}
}
