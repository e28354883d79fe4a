//go:build !linux

package binarypages

import (
	"errors"
	"runtime"
)

func release() (int64, error) {
	return 0, errors.New("releasing the binary's pages is not supported on " + runtime.GOOS)
}
