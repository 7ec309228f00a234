import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { connectStateRedis, type StateRedisConfig } from './connect.ts';
import { MemoryRuntimeState } from './memory/memory-state.ts';
import { RedisRuntimeState } from './redis/redis-state.ts';
import type { RuntimeState } from './types.ts';

export { redisOptionsFromEnv, type StateRedisConfig } from './connect.ts';
export * from './failure-policy.ts';
export { MemoryRuntimeState } from './memory/memory-state.ts';
export { RedisRuntimeState } from './redis/redis-state.ts';
export * from './types.ts';

export interface RuntimeStateOptions {
  /** Redis or Redis Cluster (see redisOptionsFromEnv); in-process memory when absent. */
  redis?: StateRedisConfig;
  registry: Registry;
  logger: Logger;
  /** Settlements buffered while Redis is away (default 10,000). */
  maxBuffered?: number;
  /** How long settlements wait to go out together (default DEFAULT_FLUSH_MS). */
  flushMs?: number;
}

/**
 * The runtime state for this process. With Redis it starts connecting at once and never waits for
 * it: settlements made before the connection is up are buffered, reads fail with
 * StateUnavailableError until it is.
 */
export function createRuntimeState(opts: RuntimeStateOptions): RuntimeState {
  if (!opts.redis) return new MemoryRuntimeState({ logger: opts.logger });
  const client = connectStateRedis(opts.redis);
  const answerClient = connectStateRedis(opts.redis, { connectionName: 'switchyard-answers' });
  for (const c of [client, answerClient])
    c.on('error', (err: Error) =>
      opts.logger.warn({ msg: 'state: redis connection problem', err: err.message }),
    );
  return new RedisRuntimeState({
    client,
    answerClient,
    registry: opts.registry,
    logger: opts.logger,
    ownsClient: true,
    ...(opts.maxBuffered === undefined ? {} : { maxBuffered: opts.maxBuffered }),
    ...(opts.flushMs === undefined ? {} : { flushMs: opts.flushMs }),
  });
}
