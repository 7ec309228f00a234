//go:build tools

// The e2e node's binaries are built from this module (build.sh OUT PKG, see mk/node.mk), so they
// share its go.mod, go.sum and Go build cache with the control plane. This file (never compiled)
// keeps `go mod tidy` from dropping what they need.
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
