/**
 * Gateway pods as real processes sharing one Redis: one pod is SIGKILLed mid-traffic and the others
 * keep answering; it comes back on the same port; Redis restarts (AOF) and the pods keep serving
 * their last good snapshot, then reconnect and follow the next publish.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REDIS_KEYS } from '#contract';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';

/** The example project as manifests, so the test can publish an edited copy. */
async function exampleManifests(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const file of (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml')).sort())
    for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, file), 'utf8'))) {
      const v: unknown = doc.toJS();
      if (v && typeof v === 'object') out.push(v as Record<string, unknown>);
    }
  return out;
}

interface Outcome {
  gateway: number;
  /** HTTP status, or 0 when the connection failed (refused, reset). */
  status: number;
  model: string;
}

async function ask(g: FleetGateway): Promise<Outcome> {
  try {
    const res = await fetch(`${g.url}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'Hello!' }] }),
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    return { gateway: g.index, status: res.status, model: res.headers.get('x-service-used-model') ?? '' };
  } catch {
    return { gateway: g.index, status: 0, model: '' };
  }
}

/** `rounds` round-robin passes over the fleet, `lanes` requests in flight at a time; outcomes land in `out` as they come. */
async function traffic(
  gateways: readonly FleetGateway[],
  rounds: number,
  out: Outcome[] = [],
  lanes = 3,
): Promise<Outcome[]> {
  const order = Array.from({ length: rounds * gateways.length }, (_, i) => gateways[i % gateways.length]!);
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < order.length) out.push(await ask(order[next++]!));
    }),
  );
  return out;
}

function tally(outcomes: readonly Outcome[]): Record<string, Record<string, number>> {
  const t: Record<string, Record<string, number>> = {};
  for (const o of outcomes) {
    const name = `gateway ${o.gateway}`;
    const row = t[name] ?? {};
    t[name] = row;
    const key = o.status === 0 ? 'no connection' : String(o.status);
    row[key] = (row[key] ?? 0) + 1;
  }
  return t;
}

/** Whether something accepts TCP connections on the loopback port right now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      done(true);
    });
    sock.once('error', () => done(false));
  });
}

let fleet: Fleet;
let manifests: Record<string, unknown>[];

describe('a fleet of gateway processes on one Redis', () => {
  beforeAll(async () => {
    manifests = await exampleManifests();
    const started = Date.now();
    fleet = await startFleet({
      manifests,
      gateways: 3,
      redis: 'single',
      // Spend caps fail closed by default while Redis is away (503); open shows the pods themselves
      // keep serving from the snapshot they hold.
      env: { SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'open', LOG_LEVEL: 'info' },
    });
    console.log(`[fleet] 3 gateways + Redis (AOF) ready in ${Date.now() - started} ms`);
  });

  afterAll(async () => fleet?.stop());

  it('every pod serves the published snapshot', async () => {
    expect(fleet.initial.problems).toEqual([]);
    for (const g of fleet.gateways) {
      const ready = g.logs().find((l) => l.json?.msg === 'gateway ready');
      expect(ready?.json?.snapshot).toBe(fleet.initial.version);
    }
    const outcomes = await traffic(fleet.gateways, 5);
    expect(outcomes.every((o) => o.status === 200)).toBe(true);
  });

  it('SIGKILL of one pod mid-traffic: the others keep answering, it answers again after restart', async () => {
    const victim = fleet.gateways[1]!;
    const pidBefore = victim.pid;
    const others = fleet.gateways.filter((g) => g !== victim);

    const outcomes: Outcome[] = [];
    const during = traffic(fleet.gateways, 40, outcomes);
    // Let the victim answer a few, then crash it while requests are in flight.
    const deadline = Date.now() + 5000;
    const answeredByVictim = () =>
      outcomes.filter((o) => o.gateway === victim.index && o.status === 200).length;
    while (answeredByVictim() < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await victim.kill('SIGKILL');
    await during;
    console.log('[fleet] traffic around the SIGKILL of gateway 1:', tally(outcomes));

    expect(victim.running).toBe(false);
    const mine = outcomes.filter((o) => o.gateway === victim.index);
    expect(mine.some((o) => o.status === 200)).toBe(true); // answered before the kill
    expect(mine.some((o) => o.status === 0)).toBe(true); // refused after it
    for (const g of others) {
      const theirs = outcomes.filter((o) => o.gateway === g.index);
      expect(theirs.length).toBe(40);
      expect(theirs.every((o) => o.status === 200)).toBe(true);
    }

    const restarted = Date.now();
    await victim.restart();
    console.log(`[fleet] gateway 1 back on ${victim.url} in ${Date.now() - restarted} ms`);
    expect(victim.pid).not.toBe(pidBefore);
    const after = await traffic(fleet.gateways, 5);
    console.log('[fleet] traffic after the restart:', tally(after));
    expect(after.every((o) => o.status === 200)).toBe(true);
  });

  it('Redis restarts (AOF): pods keep serving their snapshot, then reconnect and follow the next publish', async () => {
    const outcomes: Outcome[] = [];
    const whileDown: Outcome[] = [];
    let restarting = true;
    let redisDown = false;
    const restarted = fleet.redis.restart().finally(() => {
      restarting = false;
    });
    const { port } = new URL(fleet.redis.url);
    const probe = (async () => {
      while (restarting) {
        redisDown = !(await accepts(Number(port)));
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    // Requests (two lanes per pod) while Redis goes down, is down, and comes back; those sent while
    // the probe saw Redis refuse connections are counted apart.
    await Promise.all(
      [...fleet.gateways, ...fleet.gateways].map(async (g) => {
        while (restarting) {
          const downAtSend = redisDown;
          const o = await ask(g);
          outcomes.push(o);
          if (downAtSend) whileDown.push(o);
        }
      }),
    );
    await Promise.all([restarted, probe]);
    console.log('[fleet] traffic during the Redis restart:', tally(outcomes));
    console.log('[fleet] of which sent while Redis refused connections:', tally(whileDown));
    expect(whileDown.length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.status === 200)).toBe(true);

    // The append-only file kept the published pointer across the restart.
    const client = new Redis(fleet.redis.url, { lazyConnect: true });
    await client.connect();
    expect(await client.get(REDIS_KEYS.current)).toBe(fleet.initial.version);
    client.disconnect();

    // A new publish reaches every pod only through Redis: proof each one reconnected.
    const edited = manifests.map((m) => {
      const meta = m.metadata as { name?: string } | undefined;
      if (m.kind !== 'Workflow' || meta?.name !== 'support-chat') return m;
      return { ...m, spec: { ...(m.spec as object), model: 'gpt-4o' } };
    });
    const published = await fleet.publish(edited);
    expect(published.published).toBe(true);
    expect(published.version).not.toBe(fleet.initial.version);
    const followed = Date.now();
    for (const g of fleet.gateways) {
      let seen = '';
      while (seen !== 'gpt-4o' && Date.now() - followed < 10_000) {
        seen = (await ask(g)).model;
        if (seen !== 'gpt-4o') await new Promise((r) => setTimeout(r, 50));
      }
      expect(seen, `gateway ${g.index} serves the new snapshot`).toBe('gpt-4o');
    }
    console.log(`[fleet] all pods on the new snapshot ${Date.now() - followed} ms after the publish`);
  });
});

describe('a fleet on a Redis Cluster', () => {
  let clustered: Fleet;
  beforeAll(async () => {
    const started = Date.now();
    clustered = await startFleet({ manifests: await exampleManifests(), gateways: 2, redis: 'cluster' });
    console.log(`[fleet] 2 gateways + 3-master Redis Cluster ready in ${Date.now() - started} ms`);
  });
  afterAll(async () => clustered?.stop());

  it('pods serve the snapshot published into the cluster, and a killed pod comes back', async () => {
    expect(clustered.redis.nodes).toHaveLength(3);
    const before = await traffic(clustered.gateways, 5);
    expect(before.every((o) => o.status === 200)).toBe(true);
    const victim = clustered.gateways[0]!;
    await victim.kill();
    expect((await ask(victim)).status).toBe(0);
    await victim.restart();
    const after = await traffic(clustered.gateways, 5);
    console.log('[fleet] cluster traffic after a pod restart:', tally(after));
    expect(after.every((o) => o.status === 200)).toBe(true);
  });
});
