import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { snapshot as snapshotSchema } from '#contract';
import type { SnapshotStore } from '#gateway';
import { RedisSnapshotSource } from '#gateway';
import { SnapshotPublisher } from '#operator';
import type { SnapshotSink } from './config-source.ts';

export interface RedisMode {
  sink: SnapshotSink;
  source: RedisSnapshotSource;
}

export async function connectRedisMode(
  url: string,
  store: SnapshotStore,
  logger: Logger,
): Promise<RedisMode> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await client.connect();
  const publisher = new SnapshotPublisher(client);
  const source = new RedisSnapshotSource(store, { url, logger });
  await source.start();
  const sink: SnapshotSink = { install: (snapshot) => publisher.publish(snapshotSchema.parse(snapshot)) };
  return { sink, source };
}
