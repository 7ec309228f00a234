import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { connectStateRedis } from '#gateway/state/connect';
import { createRuntimeState } from '#gateway/state/index';
import { STATE_KEYS } from '#gateway/state/keys';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { StateUnavailableError } from '#gateway/state/types';
import {
  allPages,
  capturingLogger,
  entry,
  HOUR,
  metric,
  projectId,
  settleMany,
  silent,
  usage,
  usageRange,
} from './fixtures.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { maxBuffered?: number; closeTimeoutMs?: number; logger?: Logger } = {}) {
  const redis = await startRedis({ appendonly: true });
  const client = connectStateRedis({ url: redis.url });
  client.on('error', () => undefined);
  const registry = new Registry();
  const state = new RedisRuntimeState({
    client,
    registry,
    logger: opts.logger ?? silent,
    ownsClient: true,
    ...(opts.maxBuffered === undefined ? {} : { maxBuffered: opts.maxBuffered }),
    ...(opts.closeTimeoutMs === undefined ? {} : { closeTimeoutMs: opts.closeTimeoutMs }),
  });
  cleanups.push(async () => {
    await state.close();
    await redis.stop();
  });
  await state.whenReady();
  return { redis, client, registry, state };
}

/** Stops Redis and waits until the client has noticed (so the next settle meets a closed connection). */
async function takeDown(redis: RunningRedis, client: ReturnType<typeof connectStateRedis>): Promise<void> {
  const noticed = client.status === 'ready' ? new Promise((r) => client.once('close', r)) : Promise.resolve();
  await redis.stop();
  await noticed;
  expect(client.status).not.toBe('ready');
}

const ids = (es: Array<{ request_log_id: string }>) => es.map((e) => e.request_log_id);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('redis runtime state when Redis goes away', () => {
  it('buffers settlements while Redis is down and writes every one after it restarts', async () => {
    const { logger, lines } = capturingLogger();
    const { redis, client, registry, state } = await setup({ logger });
    const p = projectId('outage');
    const before = 20;
    const during = 500;
    settleMany(state, p, 0, before);
    await state.flush();

    await takeDown(redis, client);
    await expect(state.queryLogs(p, { limit: 5 })).rejects.toBeInstanceOf(StateUnavailableError);
    await expect(state.queryUsage(p, usageRange)).rejects.toBeInstanceOf(StateUnavailableError);
    settleMany(state, p, before, before + during);
    const buffered = await metric(registry, 'switchyard_state_writes_buffered_total', { kind: 'log' });
    const waiting = await metric(registry, 'switchyard_state_write_buffer_settlements');

    await redis.restart();
    await state.flush();
    const { entries } = await allPages(state, p, { limit: 200 });
    const rows = await state.queryUsage(p, usageRange);
    const dropped =
      (await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })) +
      (await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'usage' }));
    const retried = await metric(registry, 'switchyard_state_writes_retried_total', { kind: 'log' });
    console.log(
      `outage: settled ${before} before + ${during} during; buffered ${buffered} (waiting ${waiting}), retried ${retried}, arrived ${entries.length} log entries and ${rows[0]?.requests} usage requests, dropped ${dropped}`,
    );

    expect(buffered).toBe(during);
    expect(waiting).toBe(during);
    expect(retried).toBe(during);
    expect(dropped).toBe(0);
    expect(ids(entries)).toEqual(
      range(0, before + during)
        .reverse()
        .map((n) => entry(p, n).request_log_id),
    );
    expect(rows.map((r) => r.requests)).toEqual([before + during]);
    // The quality counters of the same writes arrive once each too.
    const quality = await state.queryUsage(p, { ...usageRange, quality: true });
    console.log(
      `outage: quality after the restart: ${quality[0]?.settled_requests} settled, ${quality[0]?.errors} errors, ${quality[0]?.failovers} failovers`,
    );
    expect(quality.map((r) => [r.settled_requests, r.errors, r.failovers])).toEqual([
      [before + during, (before + during) / 10, (before + during) / 5],
    ]);
    expect(await metric(registry, 'switchyard_state_write_buffer_settlements')).toBe(0);
    expect(lines.some((l) => l.level === 40 && String(l.msg).includes('buffering'))).toBe(true);
    expect(lines.some((l) => String(l.msg).includes('takes writes again') && l.written === during)).toBe(
      true,
    );
  });

  it('drops exactly the overflow of a full buffer, oldest first, and says so', async () => {
    const { logger, lines } = capturingLogger();
    const { redis, client, registry, state } = await setup({ maxBuffered: 100, logger });
    const p = projectId('overflow');
    await takeDown(redis, client);
    settleMany(state, p, 0, 250);
    const droppedLog = await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' });
    const droppedUsage = await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'usage' });
    console.log(
      `overflow: settled 250 into a buffer of 100; dropped ${droppedLog} log entries, ${droppedUsage} usage increments`,
    );
    expect(droppedLog).toBe(150);
    expect(droppedUsage).toBe(150);
    expect(await metric(registry, 'switchyard_state_write_buffer_settlements')).toBe(100);
    expect(
      lines.some(
        (l) => l.level === 50 && String(l.msg).includes('dropped') && l.reason === 'write buffer full',
      ),
    ).toBe(true);

    await redis.restart();
    await state.flush();
    const { entries } = await allPages(state, p, { limit: 100 });
    expect(ids(entries)).toEqual(
      range(150, 250)
        .reverse()
        .map((n) => entry(p, n).request_log_id),
    );
    expect((await state.queryUsage(p, usageRange)).map((r) => r.requests)).toEqual([100]);
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(150);
  });

  it('counts a write Redis refuses as dropped instead of retrying it', async () => {
    const { client, registry, state } = await setup();
    const p = projectId('refused');
    // The log key holds a string, so XADD fails inside the settle script while the usage increments succeed.
    await client.set(STATE_KEYS.logs(p), 'not a stream');
    state.write({ projectId: p, log: entry(p, 1), usage: usage({ hourStartSec: HOUR }), logCap: 10 });
    await state.flush();
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(1);
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'usage' })).toBe(0);
    expect(await metric(registry, 'switchyard_state_writes_retried_total', { kind: 'log' })).toBe(0);
    expect((await state.queryUsage(p, usageRange)).map((r) => r.requests)).toEqual([1]);
  });

  it('retries, rather than drops, what a full Redis (OOM) refuses', async () => {
    const { client, registry, state } = await setup();
    const p = projectId('oom');
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    settleMany(state, p, 0, 3);
    state.write({ projectId: p, usage: usage({ hourStartSec: HOUR }), logCap: 10 });
    // Wait until the refused first attempts are all in the buffer, then free the memory.
    for (
      let waited = 0;
      (await metric(registry, 'switchyard_state_writes_buffered_total', { kind: 'usage' })) < 4;
      waited += 10
    ) {
      if (waited > 3000) throw new Error('the OOM-refused settlements were not buffered');
      await new Promise((r) => setTimeout(r, 10));
    }
    await client.config('SET', 'maxmemory', '0');
    await state.flush();
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(0);
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'usage' })).toBe(0);
    expect((await state.queryLogs(p, { limit: 10 })).entries).toHaveLength(3);
    expect((await state.queryUsage(p, usageRange)).map((r) => r.requests)).toEqual([4]);
  });

  it('gives up on what is still buffered at close, counted', async () => {
    const { redis, client, registry, state } = await setup({ closeTimeoutMs: 50 });
    const p = projectId('closing');
    await takeDown(redis, client);
    settleMany(state, p, 0, 10);
    await state.close();
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(10);
    state.write({ projectId: p, log: entry(p, 11), logCap: 10 });
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(11);
    await state.flush();
  });

  it('createRuntimeState: settlements made before the first connection are written once it is up', async () => {
    const redis = await startRedis();
    const registry = new Registry();
    const state = createRuntimeState({ redis: { url: redis.url }, registry, logger: silent });
    cleanups.push(async () => {
      await state.close();
      await redis.stop();
    });
    expect(state.backend).toBe('redis');
    const p = projectId('early');
    state.write({ projectId: p, log: entry(p, 1), logCap: 10 });
    state.write({ projectId: p, log: entry(p, 2), logCap: 10 });
    await state.flush();
    expect(ids((await state.queryLogs(p, { limit: 10 })).entries)).toEqual(
      [entry(p, 2), entry(p, 1)].map((e) => e.request_log_id),
    );
    expect(await metric(registry, 'switchyard_state_writes_dropped_total', { kind: 'log' })).toBe(0);
  });
});
