/**
 * The flush window of the Redis runtime state: settlements of one window go out as one script call
 * per project, a read waits for this pod's own open window, and a full window or a stop sends it at
 * once. Real Redis; script calls counted with INFO commandstats.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { connectStateRedis } from '#gateway/state/connect';
import { STATE_KEYS } from '#gateway/state/keys';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { entry, projectId, silent, usage } from './fixtures.ts';

let redis: RunningRedis;
let probe: ReturnType<typeof connectStateRedis>;
const opened: RedisRuntimeState[] = [];

beforeAll(async () => {
  redis = await startRedis();
  probe = connectStateRedis({ url: redis.url });
});

afterAll(async () => {
  for (const s of opened) await s.close();
  probe?.disconnect();
  await redis?.stop();
});

async function open(flushMs: number): Promise<RedisRuntimeState> {
  const state = new RedisRuntimeState({
    client: connectStateRedis({ url: redis.url }),
    registry: new Registry(),
    logger: silent,
    ownsClient: true,
    flushMs,
  });
  opened.push(state);
  await state.whenReady();
  return state;
}

/** Script calls Redis has executed so far (EVAL and EVALSHA). */
async function scriptCalls(): Promise<number> {
  const info = await probe.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)) n += Number(m[1]);
  return n;
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));
const settle = (state: RedisRuntimeState, project: string, n: number) =>
  state.write({
    projectId: project,
    log: entry(project, n),
    usage: usage({ hourStartSec: 3600 }),
    logCap: 10_000,
  });

it('sends a window of settlements made in separate turns as one script call', async () => {
  const state = await open(60_000);
  const project = projectId('window');
  // The first call loads the script (EVALSHA, NOSCRIPT, EVAL): counted apart.
  settle(state, projectId('warm'), 0);
  await state.flush();
  const before = await scriptCalls();
  for (let n = 0; n < 20; n++) {
    settle(state, project, n);
    await nextTurn();
  }
  expect(await probe.xlen(STATE_KEYS.logs(project))).toBe(0);
  await state.flush();
  expect(await probe.xlen(STATE_KEYS.logs(project))).toBe(20);
  expect((await scriptCalls()) - before).toBe(1);
  const rows = await state.queryUsage(project, {
    from: 0,
    to: 7200_000,
    groupBy: 'workflow',
    granularity: 'hour',
  });
  expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(20);
});

it('lets a read see its own pod’s settlements without waiting for the window', async () => {
  const state = await open(60_000);
  const project = projectId('own');
  settle(state, project, 1);
  const page = await state.queryLogs(project, { limit: 10 });
  expect(page.entries.map((e) => e.request_log_id)).toEqual([entry(project, 1).request_log_id]);
  const rows = await state.queryUsage(project, {
    from: 0,
    to: 7200_000,
    groupBy: 'workflow',
    granularity: 'hour',
  });
  expect(rows.length).toBeGreaterThan(0);
});

it('sends a full window at once', async () => {
  const state = await open(60_000);
  const project = projectId('full');
  for (let n = 0; n < 256; n++) settle(state, project, n);
  await until(async () => (await probe.xlen(STATE_KEYS.logs(project))) === 256);
});

it('sends the open window when it closes, and by itself when the window ends', async () => {
  const closing = await open(60_000);
  const a = projectId('close');
  settle(closing, a, 1);
  const started = Date.now();
  await closing.close();
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(await probe.xlen(STATE_KEYS.logs(a))).toBe(1);

  const timed = await open(5);
  const b = projectId('timer');
  settle(timed, b, 1);
  await until(async () => (await probe.xlen(STATE_KEYS.logs(b))) === 1);
});

async function until(cond: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
