#!/usr/bin/env bash
# Stops the local cluster's processes and keeps the cluster: up.sh starts it
# again with what it held. For a test of what the agent does when a cluster
# stops answering.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
bin=$("$here/build.sh")
"$bin/kwokctl" stop cluster --name "$cluster_name" >&2
