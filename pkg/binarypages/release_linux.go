package binarypages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func release() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var asked int64
	for _, m := range readOnlyMappings(maps, exe) {
		// MADV_PAGEOUT reclaims the clean file pages at once, whatever the
		// memory pressure: they are out of the resident set until a fault
		// reads them back.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT); errno != 0 {
			return asked, fmt.Errorf("madvise(MADV_PAGEOUT) of %s at %#x: %w", exe, m.start, errno)
		}
		asked += int64(m.end - m.start)
	}
	return asked, nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() (time.Duration, error) {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &u); err != nil {
		return 0, err
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), nil
}

// mapping is an address range of /proc/self/maps.
type mapping struct{ start, end uintptr }

// readOnlyMappings are the ranges of maps (the text of /proc/self/maps)
// that map the file path without write permission.
func readOnlyMappings(maps []byte, path string) []mapping {
	var out []mapping
	lines := bufio.NewScanner(bytes.NewReader(maps))
	for lines.Scan() {
		// address perms offset dev inode path: the path is the rest of
		// the line from its first slash, which no field before it holds.
		line := lines.Text()
		at := strings.IndexByte(line, '/')
		f := strings.Fields(line)
		if at < 0 || len(f) < 6 || len(f[1]) < 2 || f[1][1] == 'w' {
			continue
		}
		// A binary replaced on disk while it runs is still mapped, as deleted.
		if mapped := line[at:]; mapped != path && mapped != path+" (deleted)" {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
	}
	return out
}
