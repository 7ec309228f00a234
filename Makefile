# Every target runs Node 24 from the pinned `node` dev dependency, whatever node the machine has.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
NODE_FLAGS := --disable-warning=ExperimentalWarning
CONFIG ?= examples
PORT ?= 8080

.PHONY: all deps typecheck lint check test test-prereqs run gateway build start-gateway start-operator clean bench crds

all: check test

# npm writes node_modules/.package-lock.json on every install, so this reinstalls only when the lock
# changed. `npm ci` installs exactly the lock and fails if package.json and the lock disagree.
node_modules/.package-lock.json: package-lock.json package.json
	npm ci --no-audit --no-fund

deps: node_modules/.package-lock.json

typecheck: deps
	tsc -p tsconfig.json --noEmit

lint: deps
	biome check .

# Generated CRD YAML must match the zod source of truth.
crds: deps
	node $(NODE_FLAGS) operator/src/crd/generate.ts --write

check: typecheck lint
	node $(NODE_FLAGS) operator/src/crd/generate.ts --check

# Everything: static checks, then every suite (real Redis, real API server, real sockets).
test: deps check test-prereqs
	@mkdir -p .cache
	vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json

run: deps
	node $(NODE_FLAGS) embedded/main.ts --config $(CONFIG) --port $(PORT)

# One gateway process following the snapshot in Redis, as a pod does (REDIS_URL and SWITCHYARD_SEAL_KEY required).
gateway: deps
	SWITCHYARD_PORT=$(PORT) node $(NODE_FLAGS) gateway/src/main.ts

build: deps
	tsc -p tsconfig.build.json
	node $(NODE_FLAGS) scripts/dist-package.ts
	node $(NODE_FLAGS) scripts/bundle-pods.ts

# Production entry points: the compiled dist/ with Node's compile cache, as the image runs them
# (same variables as `make gateway` / `make operator`).
start-gateway: build
	NODE_COMPILE_CACHE=$(CURDIR)/.cache/node-compile-cache SWITCHYARD_PORT=$(PORT) node dist/gateway/pod/main.js

start-operator: build
	NODE_COMPILE_CACHE=$(CURDIR)/.cache/node-compile-cache node dist/operator/pod/main.js

clean:
	rm -rf dist .cache coverage

# Suites that need built helpers (the Go control plane) depend on this; mk/*.mk add to it.
test-prereqs:

-include mk/*.mk
