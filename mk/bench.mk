# make bench: the gateway against the simulator (floor), a bare Fastify + undici pass-through (limit) and
# Portkey (peer), on loopback, in one run of about 20 minutes. Needs redis-server (apt-get install -y
# redis-server). Not part of make test. BENCH_ARGS e.g. "--quick" or "--targets gateway --delays 0".
# The gateway rows run the compiled production entry point, so each target builds dist/ first.
BENCH_ARGS ?=

.PHONY: bench bench-profile bench-pod

# After the run, the goals table of docs/benchmarks.md is rewritten from bench/results/latest.
bench: build
	node $(NODE_FLAGS) bench/run.ts $(BENCH_ARGS)
	node $(NODE_FLAGS) scripts/bench-goals.ts

# CPU profile of the gateway under load, aggregated by self time (docs/benchmarks.md, "Profiling").
bench-profile: build
	node $(NODE_FLAGS) bench/profile.ts $(BENCH_ARGS)

# Memory, idle wake-ups and start time of a production gateway pod, stateful and stateless
# (docs/benchmarks.md, "How to run").
bench-pod: build
	node $(NODE_FLAGS) bench/pod.ts $(BENCH_ARGS)

# make soak: 10 minutes at ~70 % of the measured maximum on two gateway processes and one Redis,
# with a Redis restart and a gateway SIGKILL in the middle (docs/operations.md, "Soak"). By hand,
# not part of make test. SOAK_ARGS e.g. "--minutes 2".
SOAK_ARGS ?=

.PHONY: soak

soak: deps
	node $(NODE_FLAGS) bench/soak.ts $(SOAK_ARGS)
