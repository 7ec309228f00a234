import { Cluster, type RedisOptions } from 'ioredis';
import type { StateClient } from '../state/connect.ts';

/**
 * A connection of its own, on the same Redis or Cluster as runtime state, for what cannot share the
 * auto-pipelined state client: a pub/sub subscriber, BullMQ's blocking worker connections (which
 * need `maxRetriesPerRequest: null` and an offline queue, unlike the fail-fast state client).
 */
export function dedicatedConnection(redis: StateClient, name: string): StateClient {
  const opts: Partial<RedisOptions> = {
    connectionName: name,
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    commandTimeout: undefined,
    enableAutoPipelining: false,
  };
  if (redis instanceof Cluster)
    return redis.duplicate(undefined, {
      enableOfflineQueue: true,
      enableAutoPipelining: false,
      redisOptions: { ...redis.options.redisOptions, ...opts },
    });
  return redis.duplicate(opts);
}
