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
	before, err := residentFileBytes()
	if err != nil {
		return 0, err
	}
	for _, m := range readOnlyMappings(maps, exe) {
		// MADV_PAGEOUT reclaims the clean file pages at once, whatever the
		// memory pressure: they are out of the resident set until a fault
		// reads them back.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT); errno != 0 {
			return 0, fmt.Errorf("madvise(MADV_PAGEOUT) of %s at %#x: %w", exe, m.start, errno)
		}
	}
	after, err := residentFileBytes()
	if err != nil {
		return 0, err
	}
	if after >= before {
		// The kernel reclaims a file's pages only for a process that owns
		// the file or may write it, so that no process can evict another's;
		// the image's binary is owned by the user it runs as.
		return 0, fmt.Errorf("the kernel kept them (%d kB resident): it releases the pages of %s only to a process that owns it or may write it", after/1024, exe)
	}
	return before - after, nil
}

// residentFileBytes is how much of the process's resident memory is mapped
// from files (RssFile of /proc/self/status), nearly all of it the binary.
func residentFileBytes() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading RssFile of /proc/self/status: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no RssFile in /proc/self/status")
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
