import { Redis } from 'ioredis';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { MemoryGuardStore } from '#gateway/spend/memory-store';
import { RedisGuardStore } from '#gateway/spend/redis-store';
import type { StateClient } from '#gateway/state/connect';
import { connectStateRedis } from '#gateway/state/connect';
import { guardStoreContract } from './store-contract.ts';

const ready = (c: StateClient) =>
  c.status === 'ready' ? Promise.resolve() : new Promise<void>((ok) => c.once('ready', () => ok()));

guardStoreContract('memory', async () => {
  const store = new MemoryGuardStore(Date.now);
  return { store, spent: async (key) => store.spent(key), close: async () => {} };
});

guardStoreContract('redis', async () => {
  const redis = await startRedis();
  const client = connectStateRedis({ url: redis.url });
  const reader = new Redis(redis.url);
  await ready(client);
  return {
    store: new RedisGuardStore(client),
    spent: async (key) => Number((await reader.get(key)) ?? 0),
    close: async () => {
      client.disconnect();
      reader.disconnect();
      await redis.stop();
    },
  };
});

guardStoreContract('redis cluster (3 masters)', async () => {
  const cluster = await startRedisCluster();
  const client = connectStateRedis({ clusterNodes: cluster.nodes });
  const reader = connectStateRedis({ clusterNodes: cluster.nodes });
  await Promise.all([ready(client), ready(reader)]);
  return {
    store: new RedisGuardStore(client),
    spent: async (key) => Number((await reader.get(key)) ?? 0),
    close: async () => {
      client.disconnect();
      reader.disconnect();
      await cluster.stop();
    },
  };
});
