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

// A view with nothing to show (the instance deleted, with -o yaml) prints
// nothing, not even a separator: the documents before and after it are
// one stream of documents.
func TestSilentViewPrintsNothing(t *testing.T) {
	views := []string{"doc: a\n", "", "doc: a\n"}
	var out bytes.Buffer
	w := newListWatch(nil, io.Discard)
	reads := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := redrawOnChange(ctx, w, &out, "yaml", time.Millisecond, func() (*watchView, error) {
		v := views[reads]
		reads++
		w.signal()
		return &watchView{key: fmt.Sprint(reads), silent: v == "", draw: func() error { _, err := fmt.Fprint(&out, v); return err }, done: reads == len(views)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "doc: a\n---\ndoc: a\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
