// Package version is the version of kro-agent, set at build time with
// -ldflags "-X github.com/kro-agent/kro-agent/pkg/version.Version=v1.2.3".
package version

// Version of this build. It appears in the kro.run/kro-version label, so it
// must be a valid label value.
var Version = "v0.1.0-dev"
