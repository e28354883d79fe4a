package plugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// A table watched into a file or a pipe is written out again after a blank
// line each time it changes: the codes that redraw it in place on a
// terminal would be noise there.
func TestRedrawIntoAFileAppendsTables(t *testing.T) {
	views := []string{"NAME STATE\na IN_PROGRESS\n", "NAME STATE\na IN_PROGRESS\n", "NAME STATE\na ACTIVE\n"}
	var out bytes.Buffer
	w := newListWatch(nil, io.Discard)
	reads := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := redrawOnChange(ctx, w, &out, "", time.Millisecond, func() (*watchView, error) {
		v := views[reads]
		reads++
		// What the view was read from changed: the loop reads again.
		w.signal()
		return &watchView{key: v, draw: func() error { _, err := fmt.Fprint(&out, v); return err }, done: reads == len(views)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if reads != len(views) {
		t.Fatalf("read %d times, want %d", reads, len(views))
	}
	// The second read showed the same as the first: drawn once.
	want := "NAME STATE\na IN_PROGRESS\n\nNAME STATE\na ACTIVE\n"
	if got := out.String(); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Error("escape codes written to a file")
	}
}
