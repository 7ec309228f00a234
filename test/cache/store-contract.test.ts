import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { MemoryCacheStore } from '#gateway/cache/memory-store';
import { cacheRedisKey, RedisCacheStore } from '#gateway/cache/redis-store';
import type { CacheEntry, CacheStore } from '#gateway/cache/types';
import type { StateClient } from '#gateway/state/connect';
import { connectStateRedis } from '#gateway/state/connect';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { silent } from '../state/fixtures.ts';

/** The response-cache store contract, run against memory, a real Redis and a real three-master cluster. */

interface Backend {
  store: CacheStore;
  /** Another gateway's store on the same Redis (none in memory mode). */
  peer: CacheStore | undefined;
  clock: { now: number };
  client: StateClient | undefined;
  close(): Promise<void>;
}

const entry = (content: string, costMicros: number | null = 42): CacheEntry => ({
  result: {
    kind: 'chat',
    id: 'chatcmpl-1',
    content,
    finish_reason: 'stop',
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    model: 'm',
  },
  costMicros,
  provider: 'oai',
  model: 'm',
  storedAt: 1,
});

async function redisBackend(kind: 'single' | 'cluster'): Promise<Backend> {
  const server = kind === 'single' ? await startRedis() : await startRedisCluster();
  const client = connectStateRedis('url' in server ? { url: server.url } : { clusterNodes: server.nodes });
  const state = new RedisRuntimeState({ client, registry: new Registry(), logger: silent, ownsClient: true });
  await state.whenReady();
  return {
    store: new RedisCacheStore(client),
    peer: new RedisCacheStore(client),
    clock: { now: Date.now() },
    client,
    close: async () => {
      await state.close();
      await server.stop();
    },
  };
}

function contract(name: string, setup: () => Promise<Backend>): void {
  describe(`cache store contract: ${name}`, () => {
    let b: Backend;
    beforeAll(async () => {
      b = await setup();
    });
    afterAll(async () => {
      await b?.close();
    });

    it('returns what was stored, and undefined for a key never stored', async () => {
      await b.store.set('team.a', 'k1', entry('hello'), 60);
      expect(await b.store.get('team.a', 'k1')).toEqual(entry('hello'));
      await b.store.set('team.a', 'k-null', entry('unpriced', null), 60);
      expect((await b.store.get('team.a', 'k-null'))!.costMicros).toBeNull();
      expect(await b.store.get('team.a', 'k-missing')).toBeUndefined();
    });

    it('another gateway reads what one stored (through Redis), and keeps no copy of what is gone', async () => {
      if (!b.peer || !b.client) return;
      await b.store.set('team.a', 'k-peer', entry('shared answer'), 60);
      expect((await b.peer.get('team.a', 'k-peer'))!.result).toMatchObject({ content: 'shared answer' });
      expect(await b.peer.get('team.a', 'k-peer-never')).toBeUndefined();
      await b.client.set(
        cacheRedisKey('team.a', 'k-peer-never'),
        JSON.stringify(entry('late')),
        'PX',
        60_000,
      );
      // A miss is not remembered: the entry stored meanwhile is found.
      expect((await b.peer.get('team.a', 'k-peer-never'))!.result).toMatchObject({ content: 'late' });
    });

    it('the same key under another project is another entry', async () => {
      await b.store.set('team.a', 'shared', entry('A'), 60);
      expect(await b.store.get('team.b', 'shared')).toBeUndefined();
      await b.store.set('team.b', 'shared', entry('B'), 60);
      expect((await b.store.get('team.a', 'shared'))!.result).toMatchObject({ content: 'A' });
      expect((await b.store.get('team.b', 'shared'))!.result).toMatchObject({ content: 'B' });
    });

    it('a reader cannot change what the next reader gets', async () => {
      await b.store.set('team.a', 'k2', entry('original'), 60);
      const got = (await b.store.get('team.a', 'k2'))!;
      (got.result as { content: string }).content = 'changed';
      expect((await b.store.get('team.a', 'k2'))!.result).toMatchObject({ content: 'original' });
    });

    it('entries expire after their TTL', async () => {
      await b.store.set('team.a', 'k3', entry('short'), 30);
      if (!b.client) {
        b.clock.now += 29_000;
        expect(await b.store.get('team.a', 'k3')).toBeDefined();
        b.clock.now += 2_000;
        expect(await b.store.get('team.a', 'k3')).toBeUndefined();
        return;
      }
      const ttl = await b.client.pttl(cacheRedisKey('team.a', 'k3'));
      expect(ttl).toBeGreaterThan(29_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
    });

    it('answers over 1 MB are not stored; a corrupt entry reads as a miss', async () => {
      await b.store.set('team.a', 'big', entry('x'.repeat(1_100_000)), 60);
      expect(await b.store.get('team.a', 'big')).toBeUndefined();
      if (b.client) {
        await b.client.set(
          cacheRedisKey('team.a', 'corrupt'),
          JSON.stringify({ result: { kind: 'speech' } }),
        );
        expect(await b.store.get('team.a', 'corrupt')).toBeUndefined();
      }
    });
  });
}

contract('memory', async () => {
  const clock = { now: Date.now() };
  return {
    store: new MemoryCacheStore(() => clock.now),
    peer: undefined,
    clock,
    client: undefined,
    close: async () => undefined,
  };
});
contract('redis', () => redisBackend('single'));
contract('redis cluster (3 masters)', () => redisBackend('cluster'));

describe('memory cache bound', () => {
  it('keeps the most recently used entries', async () => {
    const store = new MemoryCacheStore(() => 0, 3);
    for (const k of ['a', 'b', 'c']) await store.set('p', k, entry(k), 60);
    await store.get('p', 'a'); // a is now the most recent
    await store.set('p', 'd', entry('d'), 60);
    expect(await store.get('p', 'b')).toBeUndefined();
    for (const k of ['a', 'c', 'd']) expect(await store.get('p', k)).toBeDefined();
  });
});
