// Package binarypages hands back to the kernel the pages of the running
// binary that start-up touched. Go runs every linked package's init before
// main, and the kernel maps the 64 KB around each page a fault reads, so
// start-up leaves nearly all of a large binary's code and read-only data
// resident, though little of it runs again. Released pages are read again
// from the file when they are next used, as at start.
package binarypages

import (
	"context"
	"time"
)

// Release advises the kernel to reclaim the read-only pages the binary has
// mapped (its code and constant data; nothing it has written) and returns
// how many bytes of them left the resident set. Where the kernel does not
// (not Linux, older than 5.4, or a binary the process neither owns nor may
// write) it returns an error and the pages stay; nothing else changes.
func Release() (int64, error) {
	return release()
}

// idleShare is the share of one CPU under which the process counts as
// idle: an agent at rest renews a Lease and little else.
const idleShare = 50 // a fiftieth

// ReleaseWhenIdle releases (Release) once the process has been idle for
// quiet: it has used less than a fiftieth of a CPU over that long. Pages
// released while the process is busy are read back at once, which costs
// what it saves; once it is idle, what it reads back is only what it
// still runs. It returns without releasing when ctx ends first; a quiet
// of zero or less releases at once.
func ReleaseWhenIdle(ctx context.Context, quiet time.Duration) (int64, error) {
	if quiet <= 0 {
		return Release()
	}
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	var samples []sample
	// Five samples a window; a window of a few nanoseconds gets one.
	interval := quiet / 5
	if interval == 0 {
		interval = quiet
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		cpu, err := cpuTime()
		if err != nil {
			return 0, err
		}
		now := time.Now()
		samples = append(samples, sample{now, cpu})
		// The oldest sample at least quiet old starts the window.
		for len(samples) > 1 && now.Sub(samples[1].at) >= quiet {
			samples = samples[1:]
		}
		if first := samples[0]; now.Sub(first.at) >= quiet && cpu-first.cpu < now.Sub(first.at)/idleShare {
			return Release()
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}
