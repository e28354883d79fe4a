#!/usr/bin/env bash
# make demo-down: stop the demo's kro-agent and delete the local cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/cluster/env.sh
state="$cache_root/demo/$cluster_name"
if [[ -f "$state/agent.pid" ]]; then
  pid=$(cat "$state/agent.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  rm -f "$state/agent.pid"
fi
hack/cluster/down.sh
