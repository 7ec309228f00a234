/**
 * Exactly once under real faults, in the middle of a burst of settlements: a Redis restart (SIGTERM,
 * append-only file, same port) and a series of CLIENT KILLs that cut the state client's connection
 * wherever its script calls happen to be, on one Redis and on a three-master cluster. Each batch
 * whose reply the fault cut is sent again; afterwards every request_log_id is in the stream once and
 * the usage counters count every request once. Whether a cut fell between Redis applying a batch and
 * its reply is up to timing (exactly-once.test.ts forces that case): the counts are printed.
 */
import { Registry } from 'prom-client';
import { afterEach, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { startRedisCluster } from '#devkit/redis-cluster';
import { connectStateRedis, type StateRedisConfig } from '#gateway/state/connect';
import { LOG_FIELD, STATE_KEYS } from '#gateway/state/keys';
import { RedisRuntimeState } from '#gateway/state/redis/redis-state';
import { capturingLogger, metric, projectId, settleMany, usageRange } from './fixtures.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PER_TICK = 20;
/** Ticks of the burst before the fault starts, and after it has ended. */
const BEFORE = 50;
const AFTER = 50;

async function open(cfg: StateRedisConfig) {
  const { logger, lines } = capturingLogger();
  const client = connectStateRedis(cfg);
  client.on('error', () => undefined);
  const registry = new Registry();
  const state = new RedisRuntimeState({
    client,
    registry,
    logger,
    ownsClient: true,
    retryBaseMs: 20,
    // Room for the whole burst: this test is about duplicates, not about a full buffer.
    maxBuffered: 100_000,
  });
  cleanups.push(async () => {
    await state.close();
  });
  await state.whenReady();
  return { state, registry, lines };
}

/**
 * Settles PER_TICK requests per project every millisecond: BEFORE ticks, then while `fault` runs,
 * then AFTER more. Returns how many each project settled.
 */
async function burst(
  state: RedisRuntimeState,
  projects: readonly string[],
  fault: () => Promise<void>,
): Promise<number> {
  let t = 0;
  const tick = async () => {
    for (const p of projects) settleMany(state, p, t * PER_TICK, (t + 1) * PER_TICK);
    t++;
    await new Promise((r) => setTimeout(r, 1));
  };
  while (t < BEFORE) await tick();
  let faulting = true;
  const faulted = fault().finally(() => {
    faulting = false;
  });
  while (faulting) await tick();
  await faulted;
  for (let i = 0; i < AFTER; i++) await tick();
  await state.flush();
  return t * PER_TICK;
}

interface Count {
  entries: number;
  distinct: number;
  missing: number;
  usageRequests: number;
}

/**
 * Every entry of each project's stream, read directly, against the `settled` requests; the reading
 * client connects after the faults, so none of them cuts it.
 */
async function countAll(
  cfg: StateRedisConfig,
  state: RedisRuntimeState,
  projects: readonly string[],
  settled: number,
): Promise<Count[]> {
  const probe = connectStateRedis(cfg, { maxRetriesPerRequest: 3, enableOfflineQueue: true });
  probe.on('error', () => undefined);
  try {
    return await Promise.all(projects.map((p) => count(probe, state, p, settled)));
  } finally {
    probe.disconnect();
  }
}

async function count(
  probe: ReturnType<typeof connectStateRedis>,
  state: RedisRuntimeState,
  p: string,
  settled: number,
): Promise<Count> {
  const ids = new Set<string>();
  let entries = 0;
  for (const [, fields] of await probe.xrange(STATE_KEYS.logs(p), '-', '+')) {
    entries++;
    const json = fields[fields.indexOf(LOG_FIELD) + 1] ?? '{}';
    ids.add((JSON.parse(json) as { request_log_id: string }).request_log_id);
  }
  let missing = 0;
  for (let n = 0; n < settled; n++) if (!ids.has(`rl_${p}_${n}`)) missing++;
  const rows = await state.queryUsage(p, usageRange);
  return { entries, distinct: ids.size, missing, usageRequests: rows.reduce((s, r) => s + r.requests, 0) };
}

async function report(
  label: string,
  registry: Registry,
  settled: number,
  counts: Count[],
  lines: Array<Record<string, unknown>>,
): Promise<void> {
  const m = (name: string) => metric(registry, `switchyard_state_writes_${name}_total`, { kind: 'log' });
  const [retried, deduplicated, dropped] = [await m('retried'), await m('deduplicated'), await m('dropped')];
  console.log(
    `${label}: ${counts.length} projects x ${settled} settled; ` +
      counts
        .map(
          (c) =>
            `${c.entries} entries (${c.distinct} distinct, ${c.entries - c.distinct} twice, ${c.missing} missing), usage requests ${c.usageRequests}`,
        )
        .join('; ') +
      `; retried ${retried}, found applied ${deduplicated}, dropped ${dropped}`,
  );
  const problems = lines.filter((l) => Number(l.level) >= 50);
  if (problems.length) console.log(JSON.stringify(problems.slice(0, 5)));
  expect(dropped).toBe(0);
  for (const c of counts)
    expect(c).toEqual({
      entries: settled,
      distinct: settled,
      missing: 0,
      usageRequests: settled,
    });
}

it('writes each entry once when Redis restarts in the middle of a burst', async () => {
  const redis = await startRedis({ appendonly: true });
  cleanups.push(() => redis.stop());
  const cfg = { url: redis.url };
  const { state, registry, lines } = await open(cfg);
  const projects = [projectId('restart-a'), projectId('restart-b')];
  const settled = await burst(state, projects, () => redis.restart());
  const counts = await countAll(cfg, state, projects, settled);
  await report('redis restart mid-burst', registry, settled, counts, lines);
  // The restart cut the client, so the buffer was used (the burst outlasts the restart).
  expect(await metric(registry, 'switchyard_state_writes_retried_total', { kind: 'log' })).toBeGreaterThan(0);
}, 60_000);

/** Kills the state client's connections `times` times, `gapMs` apart, from an admin connection per node. */
async function clientKills(nodes: readonly string[], times: number, gapMs: number): Promise<void> {
  const admins = nodes.map((node) => {
    const [host, port] = node.split(':');
    const c = connectStateRedis(
      { url: `redis://${host}:${port}` },
      {
        connectionName: 'test-admin',
        enableOfflineQueue: true,
        maxRetriesPerRequest: 3,
      },
    );
    c.on('error', () => undefined);
    return c;
  });
  try {
    for (let i = 0; i < times; i++) {
      await Promise.all(admins.map((a) => a.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')));
      await new Promise((r) => setTimeout(r, gapMs));
    }
  } finally {
    for (const a of admins) a.disconnect();
  }
}

it('writes each entry once when its connection is killed again and again during a burst', async () => {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const cfg = { url: redis.url };
  const { state, registry, lines } = await open(cfg);
  const projects = [projectId('kill-a'), projectId('kill-b')];
  const settled = await burst(state, projects, () => clientKills([`127.0.0.1:${redis.port}`], 8, 25));
  const counts = await countAll(cfg, state, projects, settled);
  await report('CLIENT KILL x8 mid-burst', registry, settled, counts, lines);
}, 60_000);

it('writes each entry once on a Redis Cluster whose connections are killed during a burst', async () => {
  const cluster = await startRedisCluster();
  cleanups.push(() => cluster.stop());
  const cfg = { clusterNodes: cluster.nodes };
  const { state, registry, lines } = await open(cfg);
  const projects = [projectId('cluster-a'), projectId('cluster-b'), projectId('cluster-c')];
  const settled = await burst(state, projects, () => clientKills(cluster.nodes, 8, 25));
  const counts = await countAll(cfg, state, projects, settled);
  await report('cluster CLIENT KILL x8 mid-burst', registry, settled, counts, lines);
}, 60_000);
