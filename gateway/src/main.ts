import pino from 'pino';
import { parseSealKey } from '#contract';
import { ConfigError, readGatewayEnv } from './config/env.ts';
import { createGateway } from './gateway.ts';
import { RedisSnapshotSource } from './snapshot/redis-source.ts';
import { SnapshotStore } from './snapshot/store.ts';
import { createRuntimeState, redisOptionsFromEnv, type StateRedisConfig } from './state/index.ts';

// A gateway pod: serves the snapshot the operator publishes to Redis. Thin on purpose; the logic
// lives in createGateway and RedisSnapshotSource.
let env: ReturnType<typeof readGatewayEnv>;
let stateRedis: StateRedisConfig;
try {
  env = readGatewayEnv();
  // Runtime state on Redis Cluster when REDIS_CLUSTER_NODES is set, else on REDIS_URL.
  stateRedis = redisOptionsFromEnv() ?? { url: env.REDIS_URL ?? '' };
  if (!env.REDIS_URL)
    throw new ConfigError('REDIS_URL is required (use `make run` for embedded mode without Redis)');
  if (!env.SWITCHYARD_SEAL_KEY)
    throw new ConfigError('SWITCHYARD_SEAL_KEY is required: the key the operator seals credentials with');
} catch (err) {
  process.stderr.write(`switchyard-gateway: ${(err as Error).message}\n`);
  process.exit(2);
}
const logger = pino({ level: env.LOG_LEVEL, base: { service: 'switchyard-gateway' } });
const store = new SnapshotStore(parseSealKey(env.SWITCHYARD_SEAL_KEY!));
const source = new RedisSnapshotSource(store, { url: env.REDIS_URL!, logger });
const gateway = createGateway(store, {
  logger,
  state: (metrics, log) =>
    createRuntimeState({ redis: stateRedis!, registry: metrics.registry, logger: log }),
});
await source.start();
const { url, metricsUrl } = await gateway.listen(
  env.SWITCHYARD_HOST,
  env.SWITCHYARD_PORT,
  env.SWITCHYARD_METRICS_PORT,
);
logger.info({ msg: 'gateway ready', url, metricsUrl, snapshot: store.current?.version ?? null });

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: `${signal}: draining` });
    gateway
      .close(env.SWITCHYARD_SHUTDOWN_GRACE_MS)
      .then(() => source.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
}
