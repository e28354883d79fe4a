#!/usr/bin/env bash
# Builds the local cluster's binaries (etcd, kube-apiserver, kubectl,
# kube-controller-manager, kube-scheduler, kwok, kwokctl) from Go modules into
# a cache directory outside the repository. The directory name carries the
# versions and a digest of go.mod/go.sum and the mains, so a second run finds
# everything in place and builds nothing. Prints the bin directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

kube_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
kwok_version=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
digest=$(cat go.mod go.sum build.sh cmd/*/main.go | sha256sum | cut -c1-12)
cache_root=${KRO_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kro-agent}
bin="$cache_root/cluster/k8s-$kube_version-etcd-$etcd_version-kwok-$kwok_version-$digest/bin"

tools=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl)
missing=()
for t in "${tools[@]}"; do [[ -x "$bin/$t" ]] || missing+=("$t"); done
if [[ ${#missing[@]} -eq 0 ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$kube_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
kwok_ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v} \
 -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${kube_version#v}"

for t in "${missing[@]}"; do
  echo "building $t into $bin" >&2
  case "$t" in
    kwok|kwokctl) pkg="sigs.k8s.io/kwok/cmd/$t"; flags="$kwok_ldflags" ;;
    etcd) pkg="./cmd/etcd"; flags="-s -w" ;;
    *) pkg="./cmd/$t"; flags="$kube_ldflags" ;;
  esac
  # Build to a temporary name and rename, so an interrupted build never
  # leaves a half-written binary that a later run would trust.
  CGO_ENABLED=0 go build -trimpath -ldflags "$flags" -o "$bin/.$t.tmp" "$pkg"
  mv "$bin/.$t.tmp" "$bin/$t"
done
echo "$bin"
