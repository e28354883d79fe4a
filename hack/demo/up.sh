#!/usr/bin/env bash
# make demo: start the local cluster, run kro-agent in the background, apply
# the webapp example and wait until its instance is ACTIVE. Leaves the
# cluster and the agent running; `make demo-down` stops both.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/cluster/env.sh
state="$cache_root/demo/$cluster_name"
mkdir -p "$state"

kubeconfig=$(hack/cluster/up.sh)
cluster_bin=$(hack/cluster/build.sh)
export PATH="$root/bin:$cluster_bin:$PATH" KUBECONFIG="$kubeconfig"

step() { printf '\n==> %s\n' "$*"; }

step "installing the ResourceGraphDefinition CRD"
kubectl apply --server-side --field-manager=kro-demo -f manifests/crds/
kubectl wait --for=condition=Established crd/resourcegraphdefinitions.kro.run crd/clusters.agent.kro.run --timeout=60s

step "installing kro-agent's ServiceAccount and roles (manifests/agent/rbac.yaml)"
kubectl apply --server-side --field-manager=kro-demo -f manifests/agent/namespace.yaml -f manifests/agent/rbac.yaml
# The agent runs as that ServiceAccount, with the shipped roles and nothing
# more, as it would in a cluster: a kind they do not grant shows on the RGD,
# and the guard policies tell the agent from you (the cluster admin).
agent_kubeconfig="$state/agent.kubeconfig"
server=$(kubectl config view --raw --minify --flatten -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --raw --minify --flatten -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
token=$(kubectl -n kro-system create token kro-agent --duration=8760h)
(umask 077 && cat >"$agent_kubeconfig" <<EOK
apiVersion: v1
kind: Config
clusters:
- name: $cluster_name
  cluster: {server: "$server", certificate-authority-data: "$ca"}
users:
- name: kro-agent
  user: {token: "$token"}
contexts:
- name: kro-agent
  context: {cluster: $cluster_name, user: kro-agent}
current-context: kro-agent
EOK
)

step "starting kro-agent as system:serviceaccount:kro-system:kro-agent (log: $state/agent.log)"
if [[ -f "$state/agent.pid" ]] && kill -0 "$(cat "$state/agent.pid")" 2>/dev/null; then
  kill "$(cat "$state/agent.pid")"
  while kill -0 "$(cat "$state/agent.pid")" 2>/dev/null; do sleep 0.2; done
fi
# Readiness is asked of its health port: anything already answering there
# (an agent started by hand) would pass for it.
if curl -s -o /dev/null http://127.0.0.1:18081/readyz 2>/dev/null; then
  echo "another process serves 127.0.0.1:18081, the demo agent's health port (a kro-agent started by hand?); stop it and run make demo again" >&2
  exit 1
fi
nohup setsid bin/kro-agent --kubeconfig "$agent_kubeconfig" \
  --metrics-bind-address=127.0.0.1:18080 --health-probe-bind-address=127.0.0.1:18081 \
  --webhook-bind-address=127.0.0.1:19443 --webhook-url=https://127.0.0.1:19443 \
  >"$state/agent.log" 2>&1 </dev/null &
echo $! >"$state/agent.pid"
# Ready means its webhook server answers: the webhook configurations of an
# earlier run already send the RGD below to it.
ready=false
for _ in $(seq 300); do
  if curl -sf http://127.0.0.1:18081/readyz >/dev/null 2>&1; then ready=true; break; fi
  kill -0 "$(cat "$state/agent.pid")" 2>/dev/null || { echo "kro-agent exited; see $state/agent.log" >&2; tail -20 "$state/agent.log" >&2; exit 1; }
  sleep 0.2
done
$ready || { echo "kro-agent did not become ready within a minute; see $state/agent.log" >&2; tail -20 "$state/agent.log" >&2; exit 1; }

# The demo's example takes back the fields someone changed since the last
# make demo (kubectl edit, patch or a client-side apply), rather than
# stopping at the conflict: running it again shows the example as shipped.
step "applying examples/webapp/rgd.yaml"
kubectl apply --server-side --force-conflicts --field-manager=kro-demo -f examples/webapp/rgd.yaml
kubectl wait --for=jsonpath='{.status.state}'=Active rgd/webapp --timeout=60s
kubectl get rgd webapp

step "applying examples/webapp/instance.yaml"
kubectl apply --server-side --force-conflicts --field-manager=kro-demo -f examples/webapp/instance.yaml
kubectl wait --for=jsonpath='{.status.state}'=ACTIVE webapp/demo --timeout=120s
kubectl get webapp demo

step "what the instance manages"
if [[ -x bin/kubectl-kro ]] && bin/kubectl-kro tree --help >/dev/null 2>&1; then
  kubectl kro tree webapp demo
else
  kubectl get configmaps,deployments,services,ingresses -l kro.run/instance-name=demo -L kro.run/node-id
fi

cat <<EOM

kro-agent is running in the background against the local cluster.
  export KUBECONFIG=$kubeconfig
  export PATH=$root/bin:$cluster_bin:\$PATH     # kubectl-kro, and kubectl
  kubectl get webapp demo -o yaml
  kubectl kro tree webapp demo --watch   # drawn again as it changes: kubectl edit webapp demo elsewhere
  kubectl kro why-not-ready webapp demo
  tail -f $state/agent.log
make demo-down stops the agent and deletes the cluster.
EOM
