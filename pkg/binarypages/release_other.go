//go:build !linux

package binarypages

import (
	"errors"
	"runtime"
	"time"
)

var errUnsupported = errors.New("releasing the binary's pages is not supported on " + runtime.GOOS)

func release() (int64, error) { return 0, errUnsupported }

func cpuTime() (time.Duration, error) { return 0, errUnsupported }
