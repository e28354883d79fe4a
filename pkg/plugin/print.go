package plugin

import (
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// palette colors verdicts on a terminal. NO_COLOR (https://no-color.org)
// and --color=never turn it off; output that is not a terminal has none.
type palette struct{ on bool }

func newPalette(w io.Writer, mode string) palette {
	switch mode {
	case "always":
		return palette{on: true}
	case "never":
		return palette{}
	}
	if os.Getenv("NO_COLOR") != "" {
		return palette{}
	}
	return palette{on: isTerminal(w)}
}

// isTerminal tells whether w is a terminal, not a file or a pipe: only a
// terminal is given escape codes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p palette) verdict(v string) string {
	if !p.on {
		return v
	}
	code := "33" // yellow: in progress, unknown
	switch v {
	case VerdictReady, "True", "Current", "ACTIVE", "Active":
		code = "32"
	case VerdictNotReady, VerdictMissing, VerdictConflict, "False", "Failed", "FAILED", "ERROR", "Inactive":
		code = "31"
	case VerdictSkipped, VerdictExternal, VerdictDeleted:
		code = "36"
	}
	return "\x1b[" + code + "m" + v + "\x1b[0m"
}

func (p palette) bold(s string) string {
	if !p.on {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

// age renders a creation time the way kubectl does.
func age(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func addColorFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVar(target, "color", "auto", "color output: auto, always or never (NO_COLOR also turns it off)")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// indented is s with every line after its first indented by indent, and
// blank lines left out: a message of several lines (a refusal quoting a
// diff, the further refusals after it) kept readable under its heading.
func indented(s, indent string) string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line = strings.TrimRight(line, " \t"); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n"+indent)
}
