# make bench: the gateway against the simulator (floor), a bare Fastify + undici pass-through (limit) and
# Portkey (peer), on loopback, in one run of under 10 minutes. Needs redis-server (apt-get install -y
# redis-server). Not part of make test. BENCH_ARGS e.g. "--quick" or "--targets gateway --delays 0".
BENCH_ARGS ?=

.PHONY: bench bench-profile

bench: deps
	node $(NODE_FLAGS) bench/run.ts $(BENCH_ARGS)

# CPU profile of the gateway under load, aggregated by self time (see docs/benchmarks.md).
bench-profile: deps
	node $(NODE_FLAGS) bench/profile.ts $(BENCH_ARGS)
