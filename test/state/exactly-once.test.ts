/**
 * Request-log entries and usage are written exactly once, also when Redis applied a batch and its
 * reply never reached the gateway. A TCP proxy between the state client and a real Redis forwards
 * every command and, when armed, closes the connection instead of passing on the next reply to a
 * script call: Redis has written the batch, the client sees a cut connection, buffers the batch and
 * sends it again once it has reconnected.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { connectStateRedis } from '#gateway/state/connect';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { allPages, entry, metric, projectId, settleMany, silent, usageRange } from './fixtures.ts';

/**
 * Forwards bytes both ways. Armed, it closes the connection at the next script call: after Redis
 * ran it, instead of passing on its reply ('reply'), or before Redis sees it ('request').
 */
interface ReplyCutter {
  port: number;
  cutNextScript(where: 'reply' | 'request'): void;
  /** Script replies dropped so far. */
  cut: number;
  close(): Promise<void>;
}

async function replyCutter(redis: RunningRedis): Promise<ReplyCutter> {
  const target = new URL(redis.url);
  const sockets = new Set<Socket>();
  let armed: 'reply' | 'request' | undefined;
  const state = { cut: 0 };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    sockets.add(client).add(upstream);
    let cutNext = false;
    client.on('data', (d: Buffer) => {
      // RESP spells the command name as a bulk string: the script call ioredis sends as EVALSHA.
      if (armed && /\r\nevalsha\r\n/i.test(d.toString('latin1'))) {
        const where = armed;
        armed = undefined;
        if (where === 'request') {
          state.cut++;
          client.destroy();
          upstream.destroy();
          return;
        }
        cutNext = true;
      }
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (cutNext) {
        state.cut++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    cutNextScript: (where) => {
      armed = where;
    },
    get cut() {
      return state.cut;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const redis = await startRedis();
  const proxy = await replyCutter(redis);
  const client = connectStateRedis({ url: `redis://127.0.0.1:${proxy.port}` });
  client.on('error', () => undefined);
  const registry = new Registry();
  const state = new RedisRuntimeState({ client, registry, logger: silent, ownsClient: true });
  cleanups.push(async () => {
    await state.close();
    await proxy.close();
    await redis.stop();
  });
  await state.whenReady();
  return { redis, proxy, registry, state };
}

describe('runtime state writes are exactly once', () => {
  it('a batch Redis applied whose reply was lost is sent again and not written twice', async () => {
    const { proxy, registry, state } = await setup();
    const p = projectId('once');
    settleMany(state, p, 0, 10);
    await state.flush();

    proxy.cutNextScript('reply');
    settleMany(state, p, 10, 60);
    await state.flush();
    // The batch after the cut goes out with the lost one's acknowledgement pending: still once.
    settleMany(state, p, 60, 70);
    await state.flush();

    const { entries } = await allPages(state, p, { limit: 200 });
    const rows = await state.queryUsage(p, usageRange);
    const retried = await metric(registry, 'switchyard_state_writes_retried_total', { kind: 'log' });
    const deduplicated = await metric(registry, 'switchyard_state_writes_deduplicated_total', {
      kind: 'log',
    });
    const ids = entries.map((e) => e.request_log_id);
    console.log(
      `exactly once: 70 settled, 1 script reply cut after Redis applied its batch of 50; retried ${retried}, found applied ${deduplicated}; ${entries.length} log entries (${new Set(ids).size} distinct), usage requests ${rows[0]?.requests}`,
    );
    expect(proxy.cut).toBe(1);
    expect(retried).toBe(50);
    expect(deduplicated).toBe(50);
    expect(ids).toEqual(Array.from({ length: 70 }, (_, i) => entry(p, 69 - i).request_log_id));
    expect(rows.map((r) => r.requests)).toEqual([70]);
    const quality = await state.queryUsage(p, { ...usageRange, quality: true });
    expect(quality.map((r) => [r.settled_requests, r.errors, r.failovers])).toEqual([[70, 7, 14]]);
  });

  it('a batch whose call never reached Redis is written when sent again', async () => {
    const { proxy, registry, state } = await setup();
    const p = projectId('never');
    settleMany(state, p, 0, 5);
    await state.flush();
    proxy.cutNextScript('request');
    settleMany(state, p, 5, 25);
    await state.flush();
    const { entries } = await allPages(state, p, { limit: 200 });
    const rows = await state.queryUsage(p, usageRange);
    expect(proxy.cut).toBe(1);
    expect(await metric(registry, 'switchyard_state_writes_retried_total', { kind: 'log' })).toBe(20);
    expect(await metric(registry, 'switchyard_state_writes_deduplicated_total', { kind: 'log' })).toBe(0);
    expect(entries.map((e) => e.request_log_id)).toEqual(
      Array.from({ length: 25 }, (_, i) => entry(p, 24 - i).request_log_id),
    );
    expect(rows.map((r) => r.requests)).toEqual([25]);
  });
});
