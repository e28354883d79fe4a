#!/usr/bin/env bash
# Prints the names of the local clusters, one a line: the demo's, and those
# of e2e test binaries (kro-agent-e2e-PID).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
bin=$("$here/build.sh")
"$bin/kwokctl" get clusters
