# helm and kubeconform for the chart tests (test/charts), built from Go modules like the control
# plane (no download of release binaries). Each is built once per pinned version into
# .cache/tools/<name>-<version>/ and linked from .cache/bin/, so bumping a version builds the new
# one and nothing is rebuilt otherwise.
HELM_VERSION        := v3.22.0
KUBECONFORM_VERSION := v0.8.0
# Stamped as helm's release Makefile does (from its k8s.io/client-go v0.37.x): the Kubernetes version
# `helm template` and `helm lint` assume without a cluster. Without it they assume 1.20.
HELM_K8S_MINOR      := 37
HELM_LDFLAGS := -s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
  $(foreach p,pkg/lint/rules pkg/chartutil,-X helm.sh/helm/v3/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/$(p).k8sVersionMinor=$(HELM_K8S_MINOR))

TOOLS_DIR := .cache/tools
TOOLS_BIN := .cache/bin
HELM_BIN        := $(TOOLS_DIR)/helm-$(HELM_VERSION)/helm
KUBECONFORM_BIN := $(TOOLS_DIR)/kubeconform-$(KUBECONFORM_VERSION)/kubeconform

.PHONY: chart-tools promtool-install test-prereqs

chart-tools: $(TOOLS_BIN)/helm $(TOOLS_BIN)/kubeconform

# flock: parallel callers (test workers, make -j) build one at a time; the second finds it built.
$(HELM_BIN):
	@mkdir -p $(@D) $(TOOLS_BIN)
	@echo "building helm $(HELM_VERSION) from Go modules (first build takes a few minutes)"
	flock $(TOOLS_BIN)/.helm.lock sh -c 'test -x $@ || CGO_ENABLED=0 GOBIN=$(CURDIR)/$(@D) GOFLAGS=-buildvcs=false go install -trimpath -ldflags "$(HELM_LDFLAGS)" helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)'

$(KUBECONFORM_BIN):
	@mkdir -p $(@D) $(TOOLS_BIN)
	@echo "building kubeconform $(KUBECONFORM_VERSION) from Go modules"
	flock $(TOOLS_BIN)/.kubeconform.lock sh -c 'test -x $@ || CGO_ENABLED=0 GOBIN=$(CURDIR)/$(@D) GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w" github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)'

$(TOOLS_BIN)/helm: $(HELM_BIN)
	ln -sfn ../tools/helm-$(HELM_VERSION)/helm $@

$(TOOLS_BIN)/kubeconform: $(KUBECONFORM_BIN)
	ln -sfn ../tools/kubeconform-$(KUBECONFORM_VERSION)/kubeconform $@

# promtool (test/charts/monitoring.test.ts) comes from Debian's prometheus package.
promtool-install:
	@command -v promtool >/dev/null || { apt-get update && apt-get install -y prometheus; }

test-prereqs: chart-tools promtool-install
