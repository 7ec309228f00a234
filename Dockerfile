# syntax=docker/dockerfile:1
# The Switchyard image: compiled JavaScript (dist/) for the gateway and the operator, on Node 24.
#
#   docker build -t <registry>/switchyard:0.1.0 .
#   gateway:  docker run <image>                               (CMD dist/gateway/pod/main.js)
#   operator: docker run <image> dist/operator/pod/main.js
#
# The runtime runs as uid 10001 and needs no writable path but /tmp (Node's compile cache), so it
# works with readOnlyRootFilesystem and a /tmp emptyDir, as charts/switchyard mounts it.
# Without a Docker daemon, `make image` builds this file with buildah; without a registry, it first
# assembles NODE_IMAGE from Debian's and npm's packages (docs/operations.md#build-the-image). CI
# builds it that way and runs it on a real node (test/e2e).

ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: all dependencies, type-check and compile (what `make build` does) ---
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/dist-package.ts scripts/bundle-pods.ts scripts/pod-bundle.ts scripts/
COPY contract contract
COPY gateway/src gateway/src
COPY operator/src operator/src
COPY embedded embedded
COPY console console
# The web console's static files go to dist/console, where the gateway serves them from (with
# SWITCHYARD_CONSOLE=kubernetes, the chart's console.enabled).
RUN ./node_modules/.bin/tsc -p tsconfig.build.json \
 && node --disable-warning=ExperimentalWarning scripts/dist-package.ts \
 && node --disable-warning=ExperimentalWarning scripts/bundle-pods.ts \
 && ./node_modules/.bin/vite build -c console/vite.config.ts

# --- production dependencies only, installed from the same lock ---
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime ---
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="switchyard" \
      org.opencontainers.image.description="Kubernetes-native AI gateway: gateway and operator" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache
WORKDIR /app
# jemalloc, the allocator the chart preloads into the gateway (gateway.allocator): it returns freed
# memory where glibc's keeps it (docs/benchmarks-log.md, "jemalloc in a pod"). ~0.8 MB installed.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libjemalloc2 >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./package.json
# dist/package.json maps the #contract, #gateway/* and #operator/* imports to the compiled files.
COPY --from=build /src/dist ./dist
USER 10001:10001
# gateway API, gateway metrics/probes, operator metrics/probes
EXPOSE 8080 9090 9091
ENTRYPOINT ["node"]
CMD ["dist/gateway/pod/main.js"]
