import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { connectStateRedis } from '#gateway/state/connect';
import { STATE_KEYS } from '#gateway/state/keys';
import { MemoryRuntimeState } from '#gateway/state/memory/memory-state';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { CONTRACT_SCAN_LIMIT, type StateUnderTest, stateContract } from './contract-suite.ts';
import { projectId, silent } from './fixtures.ts';

const anyTwo = async (): Promise<[string, string]> => [projectId('a'), projectId('b')];

stateContract('memory', async () => ({
  state: new MemoryRuntimeState({ logger: silent, scanLimit: CONTRACT_SCAN_LIMIT }),
  projectsApart: anyTwo,
  close: async () => undefined,
}));

stateContract('redis', async () => {
  const redis = await startRedis();
  const client = connectStateRedis({ url: redis.url });
  const state = new RedisRuntimeState({
    client,
    registry: new Registry(),
    logger: silent,
    scanLimit: CONTRACT_SCAN_LIMIT,
    ownsClient: true,
  });
  await state.whenReady();
  return {
    state,
    projectsApart: anyTwo,
    close: async () => {
      await state.close();
      await redis.stop();
    },
  } satisfies StateUnderTest;
});

stateContract('redis cluster (3 masters)', async () => {
  const cluster = await startRedisCluster();
  const client = connectStateRedis({ clusterNodes: cluster.nodes });
  const state = new RedisRuntimeState({
    client,
    registry: new Registry(),
    logger: silent,
    scanLimit: CONTRACT_SCAN_LIMIT,
    ownsClient: true,
  });
  await state.whenReady();
  const direct = cluster.nodes.map((node) => {
    const [host, port] = node.split(':');
    return { node, client: new Redis({ host, port: Number(port), maxRetriesPerRequest: 0 }) };
  });
  const first = direct[0]?.client;
  if (!first) throw new Error('cluster without nodes');
  // CLUSTER SLOTS: [[start, end, [host, port, id, ...], ...replicas], ...]
  const ranges = (await first.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
  const ownerOf = async (key: string): Promise<string> => {
    const slot = Number(await first.call('CLUSTER', 'KEYSLOT', key));
    const range = ranges.find(([lo, hi]) => slot >= lo && slot <= hi);
    if (!range) throw new Error(`slot ${slot} is not served`);
    return `${range[2][0]}:${range[2][1]}`;
  };
  return {
    state,
    projectsApart: async () => {
      const a = projectId('a');
      const home = await ownerOf(STATE_KEYS.logs(a));
      for (let i = 0; i < 100; i++) {
        const b = projectId('b');
        if ((await ownerOf(STATE_KEYS.logs(b))) !== home) return [a, b];
      }
      throw new Error('no project found on another master');
    },
    nodeHolding: async (key) => {
      // A master answers MOVED for a key outside its slots: only the owner can say it holds the key.
      for (const d of direct) if ((await d.client.exists(key).catch(() => 0)) === 1) return d.node;
      return null;
    },
    close: async () => {
      for (const d of direct) d.client.disconnect();
      await state.close();
      await cluster.stop();
    },
  } satisfies StateUnderTest;
});
