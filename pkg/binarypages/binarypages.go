// Package binarypages hands back to the kernel the pages of the running
// binary that start-up touched. Go runs every linked package's init before
// main, and the kernel maps the 64 KB around each page a fault reads, so
// start-up leaves nearly all of a large binary's code and read-only data
// resident, though little of it runs again. Released pages are read again
// from the file when they are next used, as at start.
package binarypages

// Release advises the kernel to reclaim the read-only pages the binary has
// mapped (its code and constant data; nothing it has written) and returns
// how many bytes it asked about. Where the kernel cannot (not Linux, or
// older than 5.4) it returns an error and the pages stay; nothing else
// changes.
func Release() (int64, error) {
	return release()
}
