import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { SESSION_KEYS } from '#gateway/sessions/keys';
import { MemorySessionStore } from '#gateway/sessions/memory-store';
import { RedisSessionStore } from '#gateway/sessions/redis-store';
import type { SessionRef, SessionStore, Turn } from '#gateway/sessions/types';
import type { StateClient } from '#gateway/state/connect';
import { connectStateRedis } from '#gateway/state/connect';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { silent } from '../state/fixtures.ts';

/** The session store contract, run against memory, a real Redis and a real three-master cluster. */

interface Backend {
  store: SessionStore;
  /** Moves the store's clock (memory) or checks the TTL Redis holds (redis). */
  clock: { now: number };
  client: StateClient | undefined;
  close(): Promise<void>;
}

const turn = (role: 'user' | 'assistant', content: string, tokens = 5): Turn => ({
  message: { role, content },
  tokens,
  at: 1,
});

async function redisBackend(kind: 'single' | 'cluster'): Promise<Backend> {
  const clock = { now: Date.now() };
  const server = kind === 'single' ? await startRedis() : await startRedisCluster();
  const client = connectStateRedis('url' in server ? { url: server.url } : { clusterNodes: server.nodes });
  const state = new RedisRuntimeState({ client, registry: new Registry(), logger: silent, ownsClient: true });
  await state.whenReady();
  return {
    store: new RedisSessionStore(client, () => clock.now),
    clock,
    client,
    close: async () => {
      await state.close();
      await server.stop();
    },
  };
}

function contract(name: string, setup: () => Promise<Backend>): void {
  describe(`session store contract: ${name}`, () => {
    let b: Backend;
    beforeAll(async () => {
      b = await setup();
    });
    afterAll(async () => {
      await b?.close();
    });
    const ref = (projectId = 'team.a', ttlSeconds = 600): SessionRef => ({
      projectId,
      sessionId: randomUUID(),
      ttlSeconds,
    });

    it('creates an empty session; unknown ids are undefined', async () => {
      const r = ref();
      await b.store.create(r, 'wf');
      expect(await b.store.load(r)).toMatchObject({
        id: r.sessionId,
        workflow: 'wf',
        summary: '',
        summaryVersion: 0,
        summaryTokens: 0,
        foldedTurns: 0,
        turns: [],
      });
      expect(await b.store.load(ref())).toBeUndefined();
      expect(await b.store.peek('team.a', randomUUID())).toBeUndefined();
    });

    it('a session of one project does not exist under another', async () => {
      const r = ref('team.a');
      await b.store.create(r, 'wf');
      expect(await b.store.load({ ...r, projectId: 'team.b' })).toBeUndefined();
      expect(await b.store.append({ ...r, projectId: 'team.b' }, [turn('user', 'x')])).toBe(false);
      expect(await b.store.peek('team.b', r.sessionId)).toBeUndefined();
    });

    it('50 concurrent appends of an exchange each keep all 100 turns, pairs together', async () => {
      const r = ref();
      await b.store.create(r, 'wf');
      const oks = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          b.store.append(r, [turn('user', `q${i}`), turn('assistant', `a${i}`)]),
        ),
      );
      expect(oks.every(Boolean)).toBe(true);
      const s = (await b.store.load(r))!;
      expect(s.turns).toHaveLength(100);
      for (let i = 0; i < 100; i += 2)
        expect(s.turns[i + 1]!.message.content).toBe(`a${(s.turns[i]!.message.content as string).slice(1)}`);
    });

    it('appending to a missing session does not create it', async () => {
      const r = ref();
      expect(await b.store.append(r, [turn('user', 'x')])).toBe(false);
      expect(await b.store.load(r)).toBeUndefined();
    });

    it('fold replaces a range by the summary, keeps later appends, and applies once per version', async () => {
      const r = ref();
      await b.store.create(r, 'wf');
      await b.store.append(
        r,
        ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3'].map((c) =>
          turn(c[0] === 'u' ? 'user' : 'assistant', c),
        ),
      );
      // A turn lands while the summary is being written.
      await b.store.append(r, [turn('user', 'u4')]);
      const fold = { expectedVersion: 0, start: 2, end: 6, summary: 'they talked', summaryTokens: 7 };
      expect(await b.store.fold(r, fold)).toEqual({ applied: true, version: 1 });
      const s = (await b.store.load(r))!;
      expect(s.turns.map((t) => t.message.content)).toEqual(['u0', 'a0', 'u3', 'a3', 'u4']);
      expect(s).toMatchObject({
        summary: 'they talked',
        summaryVersion: 1,
        summaryTokens: 7,
        foldedTurns: 4,
      });
      // A second summariser that started from version 0 loses.
      expect(await b.store.fold(r, fold)).toEqual({ applied: false, reason: 'stale' });
      expect((await b.store.load(r))!.turns).toHaveLength(5);
      expect(await b.store.fold(ref(), fold)).toEqual({ applied: false, reason: 'gone' });
      const big = Array.from({ length: 1200 }, (_, i) => turn(i % 2 ? 'assistant' : 'user', `t${i}`));
      await b.store.append(r, big);
      expect(await b.store.fold(r, { ...fold, expectedVersion: 1, start: 2, end: 1000 })).toEqual({
        applied: true,
        version: 2,
      });
      const after = (await b.store.load(r))!;
      expect(after.turns).toHaveLength(5 + 1200 - 998);
      expect(after.turns.at(-1)!.message.content).toBe('t1199');
      expect(after.foldedTurns).toBe(4 + 998);
    });

    it('expires after ttlSeconds idle; load and append restart the timer, peek does not', async () => {
      const r = ref('team.a', 60);
      await b.store.create(r, 'wf');
      if (!b.client) {
        b.clock.now += 50_000;
        expect(await b.store.load(r)).toBeDefined();
        b.clock.now += 50_000;
        expect(await b.store.peek(r.projectId, r.sessionId)).toBeDefined();
        b.clock.now += 11_000;
        expect(await b.store.load(r)).toBeUndefined();
        return;
      }
      // Redis expires on its own clock: check the TTLs it holds, before and after a touch.
      const meta = SESSION_KEYS.meta(r.projectId, r.sessionId);
      const turns = SESSION_KEYS.turns(r.projectId, r.sessionId);
      await b.store.append(r, [turn('user', 'x')]);
      await b.client.pexpire(meta, 10_000);
      await b.client.pexpire(turns, 10_000);
      await b.store.peek(r.projectId, r.sessionId);
      expect(await b.client.pttl(meta)).toBeLessThanOrEqual(10_000);
      await b.store.load(r);
      expect(await b.client.pttl(meta)).toBeGreaterThan(59_000);
      expect(await b.client.pttl(turns)).toBeGreaterThan(59_000);
    });

    it('counts active sessions per project', async () => {
      const p = `team.count-${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 3; i++) await b.store.create(ref(p, 60), 'wf');
      expect(await b.store.countActive(p)).toBe(3);
      b.clock.now += 61_000;
      expect(await b.store.countActive(p)).toBe(0);
    });
  });
}

contract('memory', async () => {
  const clock = { now: Date.now() };
  return {
    store: new MemorySessionStore(() => clock.now),
    clock,
    client: undefined,
    close: async () => undefined,
  };
});
contract('redis', () => redisBackend('single'));
contract('redis cluster (3 masters)', () => redisBackend('cluster'));
