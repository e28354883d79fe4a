#!/usr/bin/env bash
# Starts the local cluster (kwokctl, binary runtime, fake nodes) unless it is
# already running, and prints the path of its kubeconfig on stdout. Progress
# goes to stderr. Idempotent: a running cluster is left as it is, a stopped
# one (after a reboot) is started again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
bin=$("$here/build.sh")
export PATH="$bin:$PATH"
nodes=${KRO_AGENT_NODES:-3}
# Extra kwokctl create flags (the benchmark enables audit logging with them).
read -r -a extra_args <<<"${KRO_AGENT_KWOKCTL_ARGS:-}"

ready() { kubectl --kubeconfig "$kubeconfig_path" get --raw /readyz >/dev/null 2>&1; }

if kwokctl get clusters 2>/dev/null | grep -qx "$cluster_name"; then
  if ! ready; then
    echo "starting the stopped cluster $cluster_name" >&2
    kwokctl start cluster --name "$cluster_name" --wait 2m >&2
  fi
else
  echo "creating cluster $cluster_name (binaries from $bin)" >&2
  # The kubeconfig stays in the cluster's own directory: the user's
  # ~/.kube/config and current context are not touched. Without kube-proxy
  # on the host no ClusterIP is reachable: the API server calls the
  # Services of admission webhooks and aggregated APIs at their endpoints
  # (EndpointSlices) instead, as it does where kube-proxy is not on its
  # network. The controller manager and the scheduler run alone, so they
  # do not elect a leader: with leader election, a machine busy enough to
  # delay a renewal of their lease by ten seconds (tests beside a build)
  # made them exit, and nothing starts them again.
  kwokctl create cluster --name "$cluster_name" --runtime binary \
    --etcd-binary "$bin/etcd" \
    --kube-apiserver-binary "$bin/kube-apiserver" \
    --kube-controller-manager-binary "$bin/kube-controller-manager" \
    --kube-scheduler-binary "$bin/kube-scheduler" \
    --kwok-controller-binary "$bin/kwok" \
    --kubeconfig "$KWOK_WORKDIR/clusters/$cluster_name/merged-kubeconfig.yaml" \
    --extra-args kube-apiserver=enable-aggregator-routing=true \
    --extra-args kube-controller-manager=leader-elect=false \
    --extra-args kube-scheduler=leader-elect=false \
    ${extra_args[@]+"${extra_args[@]}"} \
    --wait 2m >&2
  kwokctl scale node --name "$cluster_name" --replicas "$nodes" >&2
fi
echo "$kubeconfig_path"
