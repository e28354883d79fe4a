#!/usr/bin/env bash
# Deletes the local cluster, if there is one. The binary cache stays.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
bin=$("$here/build.sh")
if "$bin/kwokctl" get clusters 2>/dev/null | grep -qx "$cluster_name"; then
  "$bin/kwokctl" delete cluster --name "$cluster_name" >&2
fi
