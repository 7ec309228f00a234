# The e2e node (docs/e2e.md): kubelet, kube-scheduler and kube-proxy of the control plane's
# Kubernetes release, built from test/cluster's go.mod (so they share its module versions and the
# Go build cache), and the pause binary of containerd's sandbox image. Each is built once per
# Kubernetes version into .cache/tools/kube-node-<version>/ and linked from .cache/bin/.
# containerd, runc, the CNI plugins, iptables and conntrack are Debian's.
K8S_VERSION = $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2; exit }' $(CLUSTER_SRC)/go.mod)
NODE_TOOLS  = $(TOOLS_DIR)/kube-node-$(K8S_VERSION)
NODE_CMDS  := kubelet kube-scheduler kube-proxy
NODE_BINS   = $(addprefix $(NODE_TOOLS)/,$(NODE_CMDS) pause)
NODE_LINKS := $(addprefix $(TOOLS_BIN)/,$(NODE_CMDS) sy-pause)

.PHONY: node-build node-install e2e

node-build: $(NODE_LINKS)

# flock: parallel callers build one at a time (and share the Go build cache).
$(TOOLS_DIR)/kube-node-%/pause: $(CLUSTER_SRC)/pause/main.go $(CLUSTER_SRC)/go.mod $(CLUSTER_SRC)/build.sh
	@mkdir -p $(@D)
	flock $(@D)/.build.lock $(CLUSTER_SRC)/build.sh $@ ./pause

$(TOOLS_DIR)/kube-node-%: $(CLUSTER_SRC)/go.mod $(CLUSTER_SRC)/go.sum $(CLUSTER_SRC)/build.sh
	@mkdir -p $(@D)
	@echo "building $(notdir $@) $(K8S_VERSION) from Go modules (test/cluster)"
	flock $(@D)/.build.lock $(CLUSTER_SRC)/build.sh $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(TOOLS_BIN)/sy-pause: $(NODE_TOOLS)/pause
	@mkdir -p $(@D)
	ln -sfn ../tools/kube-node-$(K8S_VERSION)/pause $@

$(TOOLS_BIN)/kube%: $(NODE_TOOLS)/kube%
	@mkdir -p $(@D)
	ln -sfn ../tools/kube-node-$(K8S_VERSION)/$(notdir $@) $@

# The node's runtime pieces from Debian (the e2e suite checks for them too).
node-install:
	@{ command -v containerd && command -v runc && command -v iptables && command -v conntrack && test -x /usr/lib/cni/bridge; } >/dev/null || \
	  { apt-get update && apt-get install -y --no-install-recommends containerd runc iptables conntrack containernetworking-plugins; }

# The end-to-end suite alone: the image, both charts and examples/ on a real node (test/e2e).
e2e: deps cluster-build chart-tools node-install node-build image-archive redis-install
	vitest run test/e2e

test-prereqs: node-install node-build image-archive
