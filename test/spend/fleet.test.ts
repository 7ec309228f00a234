/**
 * Spend caps across real gateway processes on one Redis (devkit/fleet.ts):
 * - overshoot: 200 concurrent requests over 3 gateways against a $1.00 project cap, with the
 *   simulator answering at a known cost: the settled spend stays within the cap plus one request's
 *   estimate, and equals the sum of what the answered requests cost;
 * - a SIGKILLed gateway's reservations expire at their deadline and count as spent.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { microsToUsd, periodWindow, REDIS_KEYS, SPEND_KEYS, snapshot } from '#contract';
import { type Fleet, startFleet } from '#devkit/fleet';
import { ceilingMessageTokens } from '#gateway/tokens/count';
import { readCapSpend } from '#operator/spend/spend';
import { apiKey, NS, project, provider } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { spendCap, workflowOf } from './manifests.ts';

const KEY = 'sy_live_FleetSpendKey0123456789abcdefghijk';
const KILL_KEY = 'sy_live_FleetKillKey0123456789abcdefghijkl';
const PROJECT_ID = `${NS}.spend`;
const KILL_PROJECT_ID = `${NS}.killed`;
// Expensive on purpose, so a few dozen requests reach $1: 1000 $/MTok in, 2000 $/MTok out.
const PRICE_IN = 1000;
const PRICE_OUT = 2000;
// Below the simulator's reply length, so every answer is cut at max_tokens: estimates are tight.
const MAX_TOKENS = 8;

function manifests(simUrl: string) {
  const pricey = provider('pricey', 'openai', simUrl, ['gpt-4o-mini', 'hang']).map((o) =>
    'spec' in o
      ? {
          ...o,
          spec: {
            ...o.spec,
            timeouts: { connectMs: 1000, firstByteMs: 1500, totalMs: 1500 },
            models: ['gpt-4o-mini', 'hang'].map((name) => ({
              name,
              requestTypes: ['chat'],
              pricing: { inputUsdPerMTok: String(PRICE_IN), outputUsdPerMTok: String(PRICE_OUT) },
            })),
          },
        }
      : o,
  );
  return [
    ...pricey,
    project('spend'),
    ...apiKey('spend', KEY, { project: 'spend' }),
    workflowOf('spend', 'chat', { provider: 'pricey', model: 'gpt-4o-mini' }),
    spendCap('spend-daily', { project: 'spend', period: 'daily', limitUsd: '1.00' }),
    project('killed'),
    ...apiKey('killed', KILL_KEY, { project: 'killed' }),
    workflowOf('killed', 'stuck', { provider: 'pricey', model: 'hang' }),
    workflowOf('killed', 'quick', { provider: 'pricey', model: 'gpt-4o-mini' }),
    spendCap('killed-daily', { project: 'killed', period: 'daily', limitUsd: '100.00' }),
  ];
}

interface Answer {
  status: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

async function ask(url: string, key: string, workflow: string, signal?: AbortSignal): Promise<Answer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: workflow,
      messages: [{ role: 'user', content: 'Price me' }],
      max_tokens: MAX_TOKENS,
    }),
    ...(signal ? { signal } : {}),
  });
  const json = (await res.json()) as { usage?: Answer['usage'] };
  return { status: res.status, ...(json.usage ? { usage: json.usage } : {}) };
}

const costOf = (u: { prompt_tokens: number; completion_tokens: number }) =>
  Math.ceil(u.prompt_tokens * PRICE_IN + u.completion_tokens * PRICE_OUT);

/** What one 'Price me' request holds before it is sent: its prompt's ceiling plus max_tokens, at list price. */
const ESTIMATE = (): number =>
  Math.ceil(
    ceilingMessageTokens([{ role: 'user', content: 'Price me' }]) * PRICE_IN + MAX_TOKENS * PRICE_OUT,
  );

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('spend caps across three gateway processes on one Redis', () => {
  let sim: Simulator;
  let fleet: Fleet;
  let redis: Redis;
  beforeAll(async () => {
    sim = await startSimulator();
    fleet = await startFleet({
      manifests: manifests(sim.url),
      gateways: 3,
      redis: 'single',
      env: { LOG_LEVEL: 'warn', SWITCHYARD_SPEND_LEASE_TTL_MS: '1500' },
    });
    redis = new Redis(fleet.redis.url);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await fleet?.stop();
    await sim?.close();
  });

  const spentKey = (projectId: string) =>
    SPEND_KEYS.project(projectId, 'daily', periodWindow('daily', new Date()).start);

  it('waves of 200 concurrent requests overshoot a $1.00 cap by less than one request estimate', async () => {
    const estimate = ESTIMATE();
    let answeredCost = 0;
    const waves: string[] = [];
    // Each wave is 200 requests at once over the 3 gateways; reservations refuse what the cap
    // cannot cover, so waves come until one is refused entirely (spend has reached the cap).
    for (let wave = 0; wave < 10; wave++) {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => ask(fleet.gateways[i % 3]!.url, KEY, 'chat')),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length + answers.filter((a) => a.status === 402).length).toBe(200);
      answeredCost += ok.reduce((n, a) => n + costOf(a.usage!), 0);
      // Settles are written right after each answer; wait until Redis holds them all.
      await until(async () => Number(await redis.get(spentKey(PROJECT_ID))) === answeredCost, 5000);
      waves.push(`${ok.length}`);
      if (ok.length === 0) break;
    }
    const spent = Number(await redis.get(spentKey(PROJECT_ID)));
    const overshoot = Math.max(0, spent - 1_000_000);
    console.log(
      `overshoot test: answered per wave of 200 [${waves.join(', ')}]; settled spend $${microsToUsd(spent)} against a $1.00 cap; overshoot $${microsToUsd(overshoot)} (bound: one estimate, $${microsToUsd(estimate)})`,
    );
    expect(spent).toBe(answeredCost);
    expect(spent).toBeGreaterThanOrEqual(1_000_000); // a wave was refused entirely: the cap is reached
    expect(spent).toBeLessThanOrEqual(1_000_000 + estimate);
    expect(waves.at(-1)).toBe('0');

    // The operator's SpendCap status reads the same keys.
    const version = (await redis.get(REDIS_KEYS.current))!;
    const snap = snapshot.parse(JSON.parse((await redis.get(REDIS_KEYS.snapshot(version)))!));
    const status = await readCapSpend(redis, snap, new Date());
    expect(status.get(`${NS}/spend-daily`)).toEqual({
      spentUsd: microsToUsd(spent),
      state: 'exceeded',
      resetAt: periodWindow('daily', new Date()).end.toISOString(),
    });
  }, 60_000);

  it('a SIGKILLed gateway: what it committed (its requests in flight, and a few ahead) counts as spent, the rest of its lease returns', async () => {
    const victim = fleet.gateways[0]!;
    const abort = new AbortController();
    const stuck = Array.from({ length: 4 }, () =>
      ask(victim.url, KILL_KEY, 'stuck', abort.signal).catch(() => null),
    );
    const r = `${spentKey(KILL_PROJECT_ID)}:r`;
    // The victim's lease reports what its four requests in flight commit (c:<pod>), within a turn.
    const committed = async (): Promise<number> => {
      const fields = await redis.hgetall(r);
      return Object.entries(fields)
        .filter(([k]) => k.startsWith('c:'))
        .reduce((n, [, v]) => n + Number(v), 0);
    };
    await until(async () => (await committed()) >= 4 * ESTIMATE(), 5000);
    const held = await committed();
    const leased = Number(await redis.hget(r, '_sum'));
    expect(leased).toBeGreaterThan(held);
    await victim.kill('SIGKILL');
    abort.abort();
    await Promise.all(stuck);
    expect(Number((await redis.get(spentKey(KILL_PROJECT_ID))) ?? 0)).toBe(0);
    // Lease TTL (1500 ms) past the victim's last call: the next lease call on the cap counts it.
    await new Promise((res) => setTimeout(res, 1900));
    const next = await ask(fleet.gateways[1]!.url, KILL_KEY, 'quick');
    expect(next.status).toBe(200);
    await until(
      async () => Number(await redis.get(spentKey(KILL_PROJECT_ID))) === held + costOf(next.usage!),
      5000,
    );
    const fields = await redis.hgetall(r);
    const counted = Object.entries(fields).filter(([k]) => k.startsWith('x:'));
    expect(counted).toHaveLength(1);
    expect(Number(counted[0]![1])).toBe(held);
    console.log(
      `kill test: the killed gateway held a lease of $${microsToUsd(leased)}; it had committed $${microsToUsd(held)} (its 4 requests in flight, $${microsToUsd(4 * ESTIMATE())}, plus room committed ahead for a few more), counted as spent after its lease expired; the other $${microsToUsd(leased - held)} returned`,
    );
  }, 30_000);
});
