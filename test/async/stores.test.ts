import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { type ChannelDoc, type ChannelStore, MemoryChannelStore } from '#gateway/async/channels';
import { RedisChannelStore } from '#gateway/async/redis-channels';
import { MemoryTokenStore, RedisTokenStore, type TokenStore } from '#gateway/async/tokens';
import { connectStateRedis, type StateClient } from '#gateway/state/connect';
import { MemoryWebhookStore, RedisWebhookStore, type WebhookStore } from '#gateway/webhooks/store';
import { until } from './harness.ts';

interface Stores {
  channels: ChannelStore;
  tokens: TokenStore;
  webhooks: WebhookStore;
  close(): Promise<void>;
}

async function onRedis(client: StateClient, stop: () => Promise<void>): Promise<Stores> {
  await until(async () => (client.status === 'ready' ? true : undefined), 20_000);
  return {
    channels: new RedisChannelStore(client),
    tokens: new RedisTokenStore(client),
    webhooks: new RedisWebhookStore(client),
    close: async () => {
      client.disconnect();
      await stop();
    },
  };
}

const BACKENDS: [string, () => Promise<Stores>][] = [
  [
    'memory',
    async () => ({
      channels: new MemoryChannelStore(Date.now),
      tokens: new MemoryTokenStore(Date.now),
      webhooks: new MemoryWebhookStore(),
      close: async () => {},
    }),
  ],
  [
    'redis',
    async () => {
      const r = await startRedis();
      return onRedis(connectStateRedis({ url: r.url }), () => r.stop());
    },
  ],
  [
    'redis cluster',
    async () => {
      const c = await startRedisCluster();
      return onRedis(connectStateRedis({ clusterNodes: c.nodes }), () => c.stop());
    },
  ],
];

const doc = (projectId: string, channelId = randomUUID()): ChannelDoc => ({
  channel_id: channelId,
  project_id: projectId,
  workflow: 'wf',
  event_name: null,
  session_id: null,
  created_at: 1,
  updated_at: 1,
  deadline_at: null,
  ai_response: null,
  result: null,
  base_url: 'http://localhost',
});

/** One contract for the async/webhook state, run against memory, a real Redis and a real Cluster. */
for (const [name, open] of BACKENDS) {
  describe(`async state contract: ${name}`, () => {
    let s: Stores;
    beforeAll(async () => {
      s = await open();
    }, 60_000);
    afterAll(() => s?.close());

    it('channels: created pending, invisible to other projects, moved by exactly one of many racers', async () => {
      const d = doc('p.one');
      await s.channels.create({ state: 'pending', doc: d }, 60);
      expect((await s.channels.get('p.one', d.channel_id))?.state).toBe('pending');
      expect(await s.channels.get('p.two', d.channel_id)).toBeUndefined();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          s.channels.transition('p.one', d.channel_id, ['pending'], {
            state: 'completed',
            doc: { ...d, updated_at: i },
          }),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.current === 'completed')).toBe(true);
      const after = await s.channels.get('p.one', d.channel_id);
      expect(after?.state).toBe('completed');
      const winner = results.findIndex((r) => r.ok);
      expect(after?.doc.updated_at).toBe(winner);
      const missing = await s.channels.transition('p.one', randomUUID(), ['pending'], {
        state: 'failed',
        doc: d,
      });
      expect(missing).toEqual({ ok: false, current: undefined });
    });

    it('channels: a doc that cannot be stored leaves the channel as it was, so the move can be retried', async () => {
      const d = doc('p.one');
      await s.channels.create({ state: 'awaiting_callback', doc: d }, 60);
      // BigInt is what JSON.stringify refuses: the store must refuse before it changes anything.
      const unstorable = { ...d, updated_at: 2n as unknown as number };
      await expect(
        s.channels.transition('p.one', d.channel_id, ['awaiting_callback'], {
          state: 'completed',
          doc: unstorable,
        }),
      ).rejects.toThrow(TypeError);
      const kept = await s.channels.get('p.one', d.channel_id);
      expect(kept?.state).toBe('awaiting_callback');
      expect(kept?.doc.updated_at).toBe(1);
      const retried = await s.channels.transition('p.one', d.channel_id, ['awaiting_callback'], {
        state: 'completed',
        doc: { ...d, updated_at: 3 },
      });
      expect(retried).toEqual({ ok: true });
      expect((await s.channels.get('p.one', d.channel_id))?.doc.updated_at).toBe(3);
    });

    it('tokens: single use at a time, released on disconnect, spent after delivery; one of many concurrent claims wins', async () => {
      const grant = { projectId: 'p.one', channelId: randomUUID() };
      const t = await s.tokens.issue(grant, 60_000);
      expect(await s.tokens.claim(t)).toEqual({ ok: true, grant });
      expect(await s.tokens.claim(t)).toEqual({ ok: false, reason: 'token_already_used' });
      await s.tokens.release(t);
      const claims = await Promise.all(Array.from({ length: 10 }, () => s.tokens.claim(t)));
      expect(claims.filter((c) => c.ok)).toHaveLength(1);
      await s.tokens.spend(t);
      await s.tokens.release(t); // a spent token stays spent
      expect(await s.tokens.claim(t)).toEqual({ ok: false, reason: 'token_already_used' });
      expect(await s.tokens.claim('wst_unknown')).toEqual({ ok: false, reason: 'invalid_token' });
      const short = await s.tokens.issue(grant, 150);
      await new Promise((r) => setTimeout(r, 200));
      expect(await s.tokens.claim(short)).toEqual({ ok: false, reason: 'invalid_token' });
    });

    it('dead letters: listed since a time, taken once by concurrent replays; endpoints disabled and enabled', async () => {
      const p = `p.${randomUUID().slice(0, 8)}`;
      const letter = (id: string, at: number) => ({
        id,
        url: 'https://hooks.example.com/a',
        event: 'ai.response',
        body: '{}',
        attempts: 8,
        last_status: 500,
        last_error: 'HTTP 500',
        dead_at: at,
        replays: 0,
      });
      await s.webhooks.deadLetter(p, letter('m1', 1000));
      await s.webhooks.deadLetter(p, letter('m2', 2000));
      await s.webhooks.deadLetter(p, letter('m3', 3000));
      expect((await s.webhooks.listDeadLetters(p, 2000, 10)).map((d) => d.id)).toEqual(['m2', 'm3']);
      expect(await s.webhooks.countDeadLetters(p)).toBe(3);
      expect(await s.webhooks.listDeadLetters('p.elsewhere', 0, 10)).toEqual([]);
      const takes = await Promise.all(Array.from({ length: 5 }, () => s.webhooks.takeDeadLetter(p, 'm2')));
      expect(takes.filter((d) => d !== undefined)).toHaveLength(1);
      expect(await s.webhooks.countDeadLetters(p)).toBe(2);
      await s.webhooks.disable(p, 'https://hooks.example.com/a', 5);
      expect(await s.webhooks.isDisabled(p, 'https://hooks.example.com/a')).toBe(true);
      expect(await s.webhooks.disabledEndpoints(p)).toEqual(['https://hooks.example.com/a']);
      await s.webhooks.enable(p, 'https://hooks.example.com/a');
      expect(await s.webhooks.isDisabled(p, 'https://hooks.example.com/a')).toBe(false);
    });
  });
}
