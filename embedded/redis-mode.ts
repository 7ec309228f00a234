import type { Logger } from 'pino';
import { connectRedis, type RedisConnection, snapshot as snapshotSchema } from '#contract';
import type { SnapshotStore } from '#gateway';
import { RedisSnapshotSource } from '#gateway';
import { SnapshotPublisher } from '#operator';
import type { SnapshotSink } from './config-source.ts';

export interface RedisMode {
  sink: SnapshotSink;
  source: RedisSnapshotSource;
}

/** Publishes and follows the snapshot on `redis`: a URL, or a connection (Redis Cluster included). */
export async function connectRedisMode(
  redis: string | RedisConnection,
  store: SnapshotStore,
  logger: Logger,
): Promise<RedisMode> {
  const conn: RedisConnection = typeof redis === 'string' ? { url: redis } : redis;
  const client = connectRedis(conn, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await client.connect();
  const publisher = new SnapshotPublisher(client);
  const source = new RedisSnapshotSource(store, { ...conn, logger });
  await source.start();
  const sink: SnapshotSink = { install: (snapshot) => publisher.publish(snapshotSchema.parse(snapshot)) };
  return { sink, source };
}
