# Sourced by the cluster scripts: names and paths of the local cluster, all
# outside the repository so that clones and CI runs share one build cache.
cache_root=${KRO_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kro-agent}
cluster_name=${KRO_AGENT_CLUSTER:-kro-agent}
export KWOK_WORKDIR=${KWOK_WORKDIR:-$cache_root/kwok}
kubeconfig_path="$KWOK_WORKDIR/clusters/$cluster_name/kubeconfig.yaml"
