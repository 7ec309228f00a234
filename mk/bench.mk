# make bench: the gateway against the simulator (floor), a bare Fastify + undici pass-through (limit) and
# Portkey (peer), on loopback, in one run of under 10 minutes. Needs redis-server (apt-get install -y
# redis-server). Not part of make test. BENCH_ARGS e.g. "--quick" or "--targets gateway --delays 0".
# The gateway rows run the compiled production entry point, so each target builds dist/ first.
BENCH_ARGS ?=

.PHONY: bench bench-profile bench-pod

bench: build
	node $(NODE_FLAGS) bench/run.ts $(BENCH_ARGS)

# CPU profile of the gateway under load, aggregated by self time (see docs/benchmarks.md).
bench-profile: build
	node $(NODE_FLAGS) bench/profile.ts $(BENCH_ARGS)

# Memory and start time of a production gateway pod, stateful and stateless (docs/benchmarks.md).
bench-pod: build
	node $(NODE_FLAGS) bench/pod.ts $(BENCH_ARGS)
