import pino from 'pino';
import { parseSealKey, releaseStartupMemory } from '#contract';
import { ConfigError, readGatewayEnv } from './config/env.ts';
import { kubernetesConsole, kubernetesIdentities, readConsoleEnv } from './console/env.ts';
import { consoleWebFromEnv } from './console-web/index.ts';
import { createGateway } from './gateway.ts';
import { bufferedStdout } from './observability/log-destination.ts';
import { RedisSnapshotSource } from './snapshot/redis-source.ts';
import { SnapshotStore } from './snapshot/store.ts';
import { createRuntimeState, redisOptionsFromEnv, type StateRedisConfig } from './state/index.ts';
import { startTracing } from './tracing/index.ts';

// A gateway pod: serves the snapshot the operator publishes to Redis. Thin on purpose; the logic
// lives in createGateway and RedisSnapshotSource.
let env: ReturnType<typeof readGatewayEnv>;
let stateRedis: StateRedisConfig;
let consoleEnv: ReturnType<typeof readConsoleEnv>;
try {
  env = readGatewayEnv();
  consoleEnv = readConsoleEnv();
  // Snapshot channel and runtime state both on Redis Cluster when REDIS_CLUSTER_NODES is set (REDIS_URL
  // then only lends credentials and TLS), else on REDIS_URL.
  const redis = redisOptionsFromEnv();
  if (!redis)
    throw new ConfigError(
      'REDIS_URL or REDIS_CLUSTER_NODES is required (use `make run` for embedded mode without Redis)',
    );
  stateRedis = redis;
  if (!env.SWITCHYARD_SEAL_KEY)
    throw new ConfigError('SWITCHYARD_SEAL_KEY is required: the key the operator seals credentials with');
} catch (err) {
  process.stderr.write(`switchyard-gateway: ${(err as Error).message}\n`);
  process.exit(2);
}
const logOut = bufferedStdout();
const logger = pino({ level: env.LOG_LEVEL, base: { service: 'switchyard-gateway' } }, logOut.stream);
// OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (the SDK is loaded only then).
const tracing = await startTracing(process.env, logger).catch((err: unknown) => {
  process.stderr.write(`switchyard-gateway: ${(err as Error).message}\n`);
  process.exit(2);
});
const store = new SnapshotStore(parseSealKey(env.SWITCHYARD_SEAL_KEY!));
const source = new RedisSnapshotSource(store, { ...stateRedis!, logger });
const gateway = createGateway(store, {
  logger,
  tracing,
  // The console API writes Workflow CRs only with SWITCHYARD_CONSOLE=kubernetes (off otherwise).
  console: await kubernetesConsole(consoleEnv!, logger),
  // The web console goes with the console API (the chart's console.enabled), when its bundle is built.
  ...(consoleEnv!.SWITCHYARD_CONSOLE === 'kubernetes'
    ? { consoleWeb: { ...consoleWebFromEnv(), identities: await kubernetesIdentities(consoleEnv!) } }
    : {}),
  state: (metrics, log) =>
    createRuntimeState({
      redis: stateRedis!,
      registry: metrics.registry,
      logger: log,
      flushMs: env.SWITCHYARD_STATE_FLUSH_MS,
    }),
});
await source.start();
// Before listening, so no request waits for the collection.
releaseStartupMemory();
const { url, metricsUrl } = await gateway.listen(
  env.SWITCHYARD_HOST,
  env.SWITCHYARD_PORT,
  env.SWITCHYARD_METRICS_PORT,
);
logger.info({ msg: 'gateway ready', url, metricsUrl, snapshot: store.current?.version ?? null });
// Whoever waits for the pod (a supervisor, a test) reads this line now, not at the next flush.
logOut.flush();

/**
 * The stop is bounded step by step (shutdown.ts); this is the backstop should anything still hold
 * the process after its grace period. Without it the kubelet's SIGKILL ends it, saying nothing.
 */
function exitAnywayAfter(graceMs: number): void {
  setTimeout(() => {
    logger.error({ msg: 'shutdown: grace period over with work unfinished; exiting' });
    process.exit(1);
  }, graceMs + 2000).unref();
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: `${signal}: draining` });
    exitAnywayAfter(env.SWITCHYARD_SHUTDOWN_GRACE_MS);
    gateway
      .close(env.SWITCHYARD_SHUTDOWN_GRACE_MS)
      .then(() => source.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
}
