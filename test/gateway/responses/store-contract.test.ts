import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { connectStateRedis, type StateClient } from '#gateway/state/connect';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { STORED_RESPONSE_KEYS } from '#gateway/stored-responses/keys';
import { MemoryStoredResponseStore } from '#gateway/stored-responses/memory-store';
import { RedisStoredResponseStore } from '#gateway/stored-responses/redis-store';
import type { StoredResponse, StoredResponseStore } from '#gateway/stored-responses/types';
import { silent } from '../../state/fixtures.ts';

/** The stored-response store contract, against memory, a real Redis and a real three-master cluster. */

interface Backend {
  store: StoredResponseStore;
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
    store: new RedisStoredResponseStore(client),
    clock: { now: Date.now() },
    client,
    close: async () => {
      await state.close();
      await server.stop();
    },
  };
}

const record = (id = `resp_${randomUUID()}`): StoredResponse => ({
  id,
  workflow: 'w',
  response: { id, object: 'response', output: [] },
  items: [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
  conversation: [{ role: 'user', content: 'hi' }],
});

function contract(name: string, setup: () => Promise<Backend>): void {
  describe(`stored-response store contract: ${name}`, () => {
    let b: Backend;
    beforeAll(async () => {
      b = await setup();
    });
    afterAll(async () => {
      await b?.close();
    });

    it('put then get returns the record; another project does not see it', async () => {
      const r = record();
      await b.store.put('team.a', r, 60_000);
      expect(await b.store.get('team.a', r.id)).toEqual(r);
      expect(await b.store.get('team.b', r.id)).toBeUndefined();
    });

    it('delete removes it once', async () => {
      const r = record();
      await b.store.put('team.a', r, 60_000);
      expect(await b.store.delete('team.b', r.id)).toBe(false);
      expect(await b.store.delete('team.a', r.id)).toBe(true);
      expect(await b.store.delete('team.a', r.id)).toBe(false);
      expect(await b.store.get('team.a', r.id)).toBeUndefined();
    });

    it('expires after the retention', async () => {
      const r = record();
      await b.store.put('team.a', r, 30 * 86_400_000);
      if (b.client) {
        const ttl = await b.client.pttl(STORED_RESPONSE_KEYS.response('team.a', r.id));
        expect(ttl).toBeGreaterThan(30 * 86_400_000 - 60_000);
        expect(ttl).toBeLessThanOrEqual(30 * 86_400_000);
        await b.store.put('team.a', r, 50);
        await new Promise((res) => setTimeout(res, 120));
      } else b.clock.now += 30 * 86_400_000;
      expect(await b.store.get('team.a', r.id)).toBeUndefined();
    });

    it('transition replaces a record only from the statuses named, keeping its expiry', async () => {
      const r = { ...record(), response: { id: 'x', status: 'queued' } };
      await b.store.put('team.a', r, 60_000);
      const running = { ...r, response: { ...r.response, status: 'in_progress' } };
      expect(await b.store.transition('team.a', running, ['queued'])).toBe(true);
      const done = { ...r, response: { ...r.response, status: 'completed' } };
      expect(await b.store.transition('team.a', done, ['queued'])).toBe(false);
      expect((await b.store.get('team.a', r.id))?.response.status).toBe('in_progress');
      expect(await b.store.transition('team.a', done, ['queued', 'in_progress'])).toBe(true);
      expect(await b.store.get('team.a', r.id)).toEqual(done);
      expect(await b.store.transition('team.b', done, ['completed'])).toBe(false);
      expect(await b.store.transition('team.a', { ...done, id: 'resp_none' }, ['completed'])).toBe(false);
      if (b.client) {
        const ttl = await b.client.pttl(STORED_RESPONSE_KEYS.response('team.a', r.id));
        expect(ttl).toBeGreaterThan(50_000);
      }
    });

    it('the event log: appended in order, read from an index, deleted with the record', async () => {
      const r = record();
      await b.store.put('team.a', r, 60_000);
      await b.store.appendEvents('team.a', r.id, ['e0', 'e1'], 60_000);
      await b.store.appendEvents('team.a', r.id, ['e2'], 60_000);
      expect(await b.store.events('team.a', r.id, 0)).toEqual(['e0', 'e1', 'e2']);
      expect(await b.store.events('team.a', r.id, 2)).toEqual(['e2']);
      expect(await b.store.events('team.a', r.id, 3)).toEqual([]);
      expect(await b.store.events('team.b', r.id, 0)).toEqual([]);
      expect(await b.store.delete('team.a', r.id)).toBe(true);
      expect(await b.store.events('team.a', r.id, 0)).toEqual([]);
    });

    it('returns copies: changing a read record changes nothing stored', async () => {
      const r = record();
      await b.store.put('team.a', r, 60_000);
      const got = await b.store.get('team.a', r.id);
      (got!.conversation as unknown[]).push({ role: 'user', content: 'x' });
      expect((await b.store.get('team.a', r.id))!.conversation).toHaveLength(1);
    });
  });
}

contract('memory', async () => {
  const clock = { now: Date.now() };
  return {
    store: new MemoryStoredResponseStore(() => clock.now),
    clock,
    client: undefined,
    close: async () => {},
  };
});
contract('redis', () => redisBackend('single'));
contract('redis cluster', () => redisBackend('cluster'));
