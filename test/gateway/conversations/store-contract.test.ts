import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { CONVERSATION_KEYS } from '#gateway/conversations/keys';
import { MemoryConversationStore } from '#gateway/conversations/memory-store';
import { RedisConversationStore } from '#gateway/conversations/redis-store';
import type { ConversationItem, ConversationObject, ConversationStore } from '#gateway/conversations/types';
import { connectStateRedis, type StateClient } from '#gateway/state/connect';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { silent } from '../../state/fixtures.ts';

/** The conversation store contract, against memory, a real Redis and a real three-master cluster. */

interface Backend {
  store: ConversationStore;
  clock: { now: number };
  client: StateClient | undefined;
  close(): Promise<void>;
}

async function redisBackend(kind: 'single' | 'cluster'): Promise<Backend> {
  const server = kind === 'single' ? await startRedis() : await startRedisCluster();
  const client = connectStateRedis('url' in server ? { url: server.url } : { clusterNodes: server.nodes });
  const state = new RedisRuntimeState({ client, registry: new Registry(), logger: silent, ownsClient: true });
  await state.whenReady();
  return {
    store: new RedisConversationStore(client),
    clock: { now: Date.now() },
    client,
    close: async () => {
      await state.close();
      await server.stop();
    },
  };
}

const conversation = (): ConversationObject => ({
  id: `conv_${randomUUID()}`,
  object: 'conversation',
  created_at: 1,
  metadata: { a: 'b' },
});
const message = (id: string, text: string): ConversationItem => ({
  id,
  type: 'message',
  role: 'user',
  status: 'completed',
  content: [{ type: 'input_text', text }],
});
const DAY = 86_400_000;

function contract(name: string, setup: () => Promise<Backend>): void {
  describe(`conversation store contract: ${name}`, () => {
    let b: Backend;
    beforeAll(async () => {
      b = await setup();
    });
    afterAll(async () => {
      await b?.close();
    });

    it('create then get and items; another project sees nothing', async () => {
      const c = conversation();
      await b.store.create('team.a', c, [message('m1', 'one')], DAY);
      expect(await b.store.get('team.a', c.id)).toEqual(c);
      expect(await b.store.items('team.a', c.id)).toEqual([message('m1', 'one')]);
      expect(await b.store.get('team.b', c.id)).toBeUndefined();
      expect(await b.store.items('team.b', c.id)).toBeUndefined();
      expect(await b.store.append('team.b', c.id, [message('m9', 'x')], DAY)).toBe(false);
      expect(await b.store.deleteItem('team.b', c.id, 'm1')).toBe('no_conversation');
      expect(await b.store.delete('team.b', c.id)).toBe(false);
      expect(await b.store.items('team.a', c.id)).toHaveLength(1);
    });

    it('an empty conversation has no items; append keeps the order', async () => {
      const c = conversation();
      await b.store.create('team.a', c, [], DAY);
      expect(await b.store.items('team.a', c.id)).toEqual([]);
      expect(await b.store.append('team.a', c.id, [message('m1', '1'), message('m2', '2')], DAY)).toBe(true);
      expect(await b.store.append('team.a', c.id, [message('m3', '3')], DAY)).toBe(true);
      expect((await b.store.items('team.a', c.id))!.map((i) => i.id)).toEqual(['m1', 'm2', 'm3']);
    });

    it('update replaces the metadata, only of a conversation that exists', async () => {
      const c = conversation();
      await b.store.create('team.a', c, [], DAY);
      expect(await b.store.update('team.a', { ...c, metadata: { x: 'y' } }, DAY)).toBe(true);
      expect((await b.store.get('team.a', c.id))!.metadata).toEqual({ x: 'y' });
      expect(await b.store.update('team.a', { ...conversation(), metadata: {} }, DAY)).toBe(false);
    });

    it('deleteItem removes one item; delete removes the conversation once', async () => {
      const c = conversation();
      await b.store.create('team.a', c, [message('m1', 'same'), message('m2', 'same')], DAY);
      expect(await b.store.deleteItem('team.a', c.id, 'm2')).toBe('deleted');
      expect(await b.store.deleteItem('team.a', c.id, 'm2')).toBe('no_item');
      expect((await b.store.items('team.a', c.id))!.map((i) => i.id)).toEqual(['m1']);
      expect(await b.store.delete('team.a', c.id)).toBe(true);
      expect(await b.store.delete('team.a', c.id)).toBe(false);
      expect(await b.store.items('team.a', c.id)).toBeUndefined();
      expect(await b.store.append('team.a', c.id, [message('m3', 'x')], DAY)).toBe(false);
      expect(await b.store.items('team.a', c.id)).toBeUndefined();
    });

    it('the turn lock: one holder at a time; only its token renews or frees it; it expires', async () => {
      const id = `conv_${randomUUID()}`;
      expect(await b.store.tryLock('team.a', id, 't1', 60_000)).toBe(true);
      expect(await b.store.tryLock('team.a', id, 't2', 60_000)).toBe(false);
      expect(await b.store.tryLock('team.b', id, 't2', 60_000)).toBe(true);
      expect(await b.store.renewLock('team.a', id, 't2', 60_000)).toBe(false);
      expect(await b.store.renewLock('team.a', id, 't1', 60_000)).toBe(true);
      await b.store.unlock('team.a', id, 't2');
      expect(await b.store.tryLock('team.a', id, 't3', 60_000)).toBe(false);
      await b.store.unlock('team.a', id, 't1');
      expect(await b.store.tryLock('team.a', id, 't3', 50)).toBe(true);
      if (b.client) await new Promise((res) => setTimeout(res, 120));
      else b.clock.now += 100;
      expect(await b.store.renewLock('team.a', id, 't3', 60_000)).toBe(false);
      expect(await b.store.tryLock('team.a', id, 't4', 60_000)).toBe(true);
    });

    it('expires after the retention, pushed back by each write', async () => {
      const c = conversation();
      await b.store.create('team.a', c, [message('m1', 'one')], 30 * DAY);
      if (b.client) {
        for (const key of [
          CONVERSATION_KEYS.conversation('team.a', c.id),
          CONVERSATION_KEYS.items('team.a', c.id),
        ]) {
          const ttl = await b.client.pttl(key);
          expect(ttl).toBeGreaterThan(30 * DAY - 60_000);
          expect(ttl).toBeLessThanOrEqual(30 * DAY);
        }
        await b.store.append('team.a', c.id, [message('m2', 'two')], 50);
        await new Promise((res) => setTimeout(res, 120));
      } else {
        b.clock.now += 20 * DAY;
        await b.store.append('team.a', c.id, [message('m2', 'two')], 30 * DAY);
        b.clock.now += 20 * DAY;
        expect(await b.store.items('team.a', c.id)).toHaveLength(2);
        b.clock.now += 10 * DAY;
      }
      expect(await b.store.get('team.a', c.id)).toBeUndefined();
      expect(await b.store.items('team.a', c.id)).toBeUndefined();
    });
  });
}

contract('memory', async () => {
  const clock = { now: Date.now() };
  return {
    store: new MemoryConversationStore(() => clock.now),
    clock,
    client: undefined,
    close: async () => {},
  };
});
contract('redis', () => redisBackend('single'));
contract('redis cluster', () => redisBackend('cluster'));
