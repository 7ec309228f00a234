# The operator from a laptop: watches the cluster KUBECONFIG points at and publishes to REDIS_URL.
# Needs SWITCHYARD_SEAL_KEY (the gateway's key) or SWITCHYARD_SEAL_KEY_SECRET=<ns>/<name>[:<key>].
# See docs/operator.md.
.PHONY: operator test-operator

operator: deps
	@test -n "$$REDIS_URL$$REDIS_CLUSTER_NODES" || { echo "REDIS_URL (or REDIS_CLUSTER_NODES) is required, e.g. REDIS_URL=redis://127.0.0.1:6379"; exit 2; }
	node $(NODE_FLAGS) operator/src/main.ts

# The operator's end-to-end and unit tests (real API server + real Redis).
test-operator: deps
	vitest run test/operator
