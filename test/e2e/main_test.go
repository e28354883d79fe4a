//go:build e2e

// Package e2e runs kro-agent's end-to-end tests against a real local
// Kubernetes (see hack/cluster), created once for the test binary.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/kro-agent/kro-agent/test/localcluster"
)

var testenv env.Environment

func TestMain(m *testing.M) {
	// A name of its own, so a demo cluster left running is not touched.
	name := fmt.Sprintf("kro-agent-e2e-%d", os.Getpid())
	testenv = env.NewWithConfig(envconf.New())
	testenv.Setup(localcluster.Create(name))
	testenv.Finish(localcluster.Destroy(name))
	os.Exit(testenv.Run(m))
}
