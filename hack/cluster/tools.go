//go:build tools

// Package tools pins the kwok binaries, which are built from their own
// module's main packages.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
