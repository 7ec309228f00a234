# A real Kubernetes control plane for the tests, built from Go modules (see docs/cluster.md):
# etcd (embedded) + kube-apiserver + kube-controller-manager, and a matching kubectl,
# all in one binary built from test/cluster. No container runtime needed.

CLUSTER_DIR      := .cache/cluster
CLUSTER_BIN      := $(CLUSTER_DIR)/bin/controlplane
CLUSTER_SRC      := test/cluster
CLUSTER_SOURCES  := $(wildcard $(CLUSTER_SRC)/*.go) $(CLUSTER_SRC)/go.mod $(CLUSTER_SRC)/go.sum $(CLUSTER_SRC)/build.sh
CLUSTER_KUBECONFIG := $(CLUSTER_DIR)/kubeconfig

.PHONY: cluster-build cluster-up cluster-down cluster-status kind-up kind-down redis-install test-prereqs

# The binary is only rebuilt when the Go sources, go.mod or go.sum change.
cluster-build: $(CLUSTER_BIN) $(CLUSTER_DIR)/bin/kubectl

$(CLUSTER_BIN): $(CLUSTER_SOURCES)
	@mkdir -p $(@D)
	@# flock: parallel test workers calling `make cluster-build` build one at a time.
	@echo "building the control plane (first build takes a long while, see docs/cluster.md)"
	flock $(@D)/.build.lock $(CLUSTER_SRC)/build.sh $@

$(CLUSTER_DIR)/bin/kubectl: | $(CLUSTER_BIN)
	ln -sf controlplane $@

# Starts the control plane in the background; returns once /readyz is ok.
cluster-up: cluster-build
	@if [ -f $(CLUSTER_DIR)/pid ] && kill -0 $$(cat $(CLUSTER_DIR)/pid) 2>/dev/null; then \
	  echo "control plane already running (pid $$(cat $(CLUSTER_DIR)/pid)), KUBECONFIG=$(CURDIR)/$(CLUSTER_KUBECONFIG)"; exit 0; fi; \
	rm -rf $(CLUSTER_DIR)/run $(CLUSTER_DIR)/ready.json; mkdir -p $(CLUSTER_DIR)/run; \
	nohup $(CLUSTER_BIN) up --dir $(CLUSTER_DIR)/run --kubeconfig $(CLUSTER_KUBECONFIG) \
	  > $(CLUSTER_DIR)/ready.json 2> $(CLUSTER_DIR)/controlplane.log & echo $$! > $(CLUSTER_DIR)/pid; \
	for i in $$(seq 1 600); do \
	  if grep -q '"ready":true' $(CLUSTER_DIR)/ready.json 2>/dev/null; then break; fi; \
	  if ! kill -0 $$(cat $(CLUSTER_DIR)/pid) 2>/dev/null; then \
	    echo "control plane failed to start:"; tail -30 $(CLUSTER_DIR)/controlplane.log; \
	    tail -30 $(CLUSTER_DIR)/run/logs/kube-apiserver.log 2>/dev/null; rm -f $(CLUSTER_DIR)/pid; exit 1; fi; \
	  sleep 0.5; \
	done; \
	$(CLUSTER_DIR)/bin/kubectl --kubeconfig $(CLUSTER_KUBECONFIG) get --raw /readyz >/dev/null && \
	echo "control plane up (pid $$(cat $(CLUSTER_DIR)/pid)): export KUBECONFIG=$(CURDIR)/$(CLUSTER_KUBECONFIG); kubectl: $(CURDIR)/$(CLUSTER_DIR)/bin/kubectl"

# Stops it and removes its state (certs, etcd data, logs, kubeconfig); keeps the binary.
cluster-down:
	@if [ -f $(CLUSTER_DIR)/pid ]; then \
	  pid=$$(cat $(CLUSTER_DIR)/pid); kill -TERM $$pid 2>/dev/null; \
	  for i in $$(seq 1 60); do kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
	  kill -0 $$pid 2>/dev/null && kill -KILL $$pid; true; \
	fi
	rm -rf $(CLUSTER_DIR)/run $(CLUSTER_DIR)/pid $(CLUSTER_DIR)/ready.json $(CLUSTER_DIR)/controlplane.log $(CLUSTER_KUBECONFIG)

cluster-status:
	@$(CLUSTER_DIR)/bin/kubectl --kubeconfig $(CLUSTER_KUBECONFIG) get --raw '/readyz?verbose'

# For machines with Docker: a kind cluster with the project's CRDs installed.
# CI has no container runtime and uses the built control plane above instead.
KIND_CLUSTER ?= switchyard
kind-up:
	kind create cluster --name $(KIND_CLUSTER)
	kubectl --context kind-$(KIND_CLUSTER) apply --server-side -f crds/

kind-down:
	kind delete cluster --name $(KIND_CLUSTER)

# Debian's redis-server, used by test/harness/redis.ts.
redis-install:
	@command -v redis-server >/dev/null || { apt-get update && apt-get install -y redis-server; }

# Wire as a prerequisite of `test` so the first (slow) build happens before vitest runs.
test-prereqs: cluster-build redis-install
