#!/bin/sh
# Builds a binary of this module's Kubernetes release to $1: the control-plane multi-call binary
# (used by `make cluster-build`), or, with $2, that package of k8s.io/kubernetes (the node's
# kubelet, kube-scheduler and kube-proxy, `make node-build`), so all share one go.mod, one go.sum
# and one Go build cache.
# Stamps the Kubernetes version from go.mod into the binary, as the upstream release build does,
# so /version, `kubectl version` and the node's kubeletVersion report it.
set -eu
out=$(realpath -m "$1")
pkg=${2:-.}
cd "$(dirname "$0")"
v=$(GOFLAGS=-mod=mod go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$v" | cut -d. -f2)
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$out.tmp.$$" "$pkg"
mv "$out.tmp.$$" "$out"
