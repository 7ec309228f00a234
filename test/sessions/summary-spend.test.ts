import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodWindow, SPEND_KEYS, usdToMicros } from '#contract';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { post, type Wrapped } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { pricedProvider, spendCap, workflowOf } from '../spend/manifests.ts';
import { getJson, type LogEntry, logs, type SessionView } from './helpers.ts';

/**
 * Session summaries are provider calls like any request, so they count toward spend caps: the
 * project's caps and the workflow's per-slot caps reserve and settle the summary call at its real
 * cost; a cap that refuses it leaves the session's turns as they were. On a real Redis, reading the
 * caps' spent counters, against the provider simulator (not test mode: summaries cost money).
 */

const T0 = Date.parse('2026-11-23T10:15:00.000Z');
const DAY = periodWindow('daily', new Date(T0)).start;

/** USD per million tokens, per model; the simulator answers `ceil(chars / 4)` tokens. */
const PRICES: Record<string, { in: number; out: number }> = {
  'oai/gpt-4o-mini': { in: 1, out: 2 },
  'pricey/gpt-4o': { in: 1000, out: 2000 },
  'loud/gpt-4o-mini': { in: 1, out: 1000 },
};

const priced = (name: string, simUrl: string, model: string) =>
  pricedProvider(name, simUrl, model, PRICES[`${name}/${model}`]!);

/** The list price of a log entry's usage at its model's price, in µUSD (rounded up, as the gateway does). */
const listPrice = (e: LogEntry): number => {
  const p = PRICES[`${e.used_provider}/${e.used_model}`]!;
  return Math.ceil(e.usage!.prompt_tokens * p.in + (e.usage!.completion_tokens ?? 0) * p.out);
};

type Entry = LogEntry & {
  http_status: number;
  attempts: { provider: string; model: string; status: string; reason?: { message: string } }[];
};

const KEYS = {
  metered: 'sy_live_SummarySpendMeteredKey0123456789ab',
  tight: 'sy_live_SummarySpendTightKey0123456789abcd',
  slotted: 'sy_live_SummarySpendSlottedKey0123456789ab',
  walled: 'sy_live_SummarySpendWalledKey0123456789abc',
} as const;
type Name = keyof typeof KEYS;

const memory = { enabled: true, summarizeAtTokens: 200, ttlSeconds: 600 };

function config(simUrl: string) {
  const perProject = (name: Name, spec: Record<string, unknown>, caps: object[]) => [
    project(name),
    ...apiKey(name, KEYS[name], { project: name, scopes: ['ai', 'console'] }),
    workflowOf(name, `${name}-sum`, { ...spec, sessionMemory: memory }),
    ...caps,
  ];
  const cap = (name: Name, limitUsd: string, slot?: string) =>
    spendCap(`${name}-${slot ?? 'project'}`, {
      project: name,
      period: 'daily',
      limitUsd,
      ...(slot ? { workflow: `${name}-sum`, slot } : {}),
    });
  return [
    ...baseConfig(simUrl),
    ...priced('pricey', simUrl, 'gpt-4o'),
    ...priced('loud', simUrl, 'gpt-4o-mini'),
    // (a) plenty of room: the summary's cost lands on the project's and the primary's caps.
    ...perProject('metered', { provider: 'oai', model: 'gpt-4o-mini' }, [
      cap('metered', '10'),
      cap('metered', '10', 'primary'),
    ]),
    // (b) a turn that fails over to a very expensive backup uses up the project cap ($0.05).
    ...perProject(
      'tight',
      { provider: 'oai', model: 'gpt-4o-mini', backups: [{ provider: 'pricey', model: 'gpt-4o' }] },
      [cap('tight', '0.05')],
    ),
    // (c) the primary's output costs $1000/MTok (19 tokens a reply, about $0.019 a turn): two turns
    // leave room under its $0.05 cap, the third uses it up. A cap admits while spent + reserved is
    // under its limit.
    ...perProject(
      'slotted',
      { provider: 'loud', model: 'gpt-4o-mini', backups: [{ provider: 'oai', model: 'gpt-4o-mini' }] },
      [cap('slotted', '10'), cap('slotted', '0.05', 'primary'), cap('slotted', '10', 'backup-1')],
    ),
    // (c') the same, but the backup's cap is $0: every slot is over its cap.
    ...perProject(
      'walled',
      { provider: 'loud', model: 'gpt-4o-mini', backups: [{ provider: 'oai', model: 'gpt-4o-mini' }] },
      [cap('walled', '10'), cap('walled', '0.05', 'primary'), cap('walled', '0', 'backup-1')],
    ),
  ];
}

// Each reply is "Simulated openai/<model> reply: " + the first 40 characters of the message: 19 tokens.
const SHORT = (i: number) => `Turn ${i}: the quick brown fox jumps over the lazy dog by the river.`;
const LONG = `Turn 3: ${'Ada keeps a ledger of every invoice, the due dates, the amounts and who approved them. '.repeat(18)}`;

describe('session summaries count toward spend caps (redis state, provider simulator)', () => {
  let sim: Simulator;
  let redis: RunningRedis;
  let reader: Redis;
  let gw: RunningGateway;
  let clock = T0;

  beforeAll(async () => {
    sim = await startSimulator();
    redis = await startRedis();
    reader = new Redis(redis.url);
    gw = await startGateway(config(sim.url), { redisUrl: redis.url, now: () => clock++ });
  });
  afterAll(async () => {
    await gw?.close();
    reader?.disconnect();
    await redis?.stop();
    await sim?.close();
  });

  const projectId = (name: Name) => `team.${name}`;
  const projectKey = (name: Name) => SPEND_KEYS.project(projectId(name), 'daily', DAY);
  const slotKey = (name: Name, slot: string) =>
    SPEND_KEYS.slot(projectId(name), `${name}-sum`, slot, 'daily', DAY);
  const spent = async (key: string) => Number((await reader.get(key)) ?? 0);

  /** Polls (settles are written after the answer, fire and forget) until the counter reads `want`. */
  const spentSettles = async (key: string, want: number): Promise<number> => {
    const deadline = performance.now() + 3000;
    let v = await spent(key);
    while (v !== want && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      v = await spent(key);
    }
    return v;
  };

  const settled = async () => {
    await gw.gateway.sessionWorkDone();
    await gw.gateway.state.flush();
  };

  /** Three turns: two short ones, then a long one that pushes the session past 200 tokens. */
  const converse = async (name: Name, beforeLast?: () => void) => {
    let id: string | undefined;
    for (let i = 1; i <= 3; i++) {
      if (i === 3) beforeLast?.();
      const r = await post<Wrapped>(
        gw.url,
        {
          workflow: `${name}-sum`,
          format: 'wrapped',
          ...(id ? { session_id: id } : {}),
          messages: [{ role: 'user', content: i === 3 ? LONG : SHORT(i) }],
        },
        { key: KEYS[name] },
      );
      expect(r.status).toBe(200);
      id ??= r.json.meta.session_id!;
      await settled();
    }
    const session = (await getJson<SessionView>(gw.url, `/v1/sessions/${id}`, KEYS[name])).json;
    // Oldest first (the log pages newest first).
    const requests = (await logs(gw.url, `session_id=${id}&type=request`, KEYS[name])).reverse() as Entry[];
    const [summary, ...more] = (await logs(
      gw.url,
      `session_id=${id}&type=session_summary`,
      KEYS[name],
    )) as Entry[];
    expect(requests).toHaveLength(3);
    expect(more).toEqual([]);
    return { id: id!, session, requests, summary: summary! };
  };

  const costOf = (e: LogEntry) => usdToMicros(e.cost_usd!);
  const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);

  it('(a) the summary call is reserved and settled at its real cost on the project and slot caps', async () => {
    const { session, requests, summary } = await converse('metered');
    expect(session.summary_version).toBe(1);
    expect(summary).toMatchObject({ status: 'success', outcome: 'success', used_provider: 'oai' });
    // The gateway priced every call at list price, summary included.
    for (const e of [...requests, summary]) expect(costOf(e)).toBe(listPrice(e));
    const requestCost = sum(requests.map(costOf));
    const summaryCost = costOf(summary);
    expect(summaryCost).toBeGreaterThan(0);
    const projectSpent = await spentSettles(projectKey('metered'), requestCost + summaryCost);
    const primarySpent = await spentSettles(slotKey('metered', 'primary'), requestCost + summaryCost);
    console.log(
      `(a) requests ${requestCost} µUSD + summary ${summaryCost} µUSD; project cap spent ${projectSpent}, primary cap spent ${primarySpent}`,
    );
    expect(projectSpent).toBe(requestCost + summaryCost);
    expect(primarySpent).toBe(requestCost + summaryCost);
  });

  it('(b) a project cap used up by the turn that triggers the summary refuses the summary; turns are kept', async () => {
    sim.clearRequests();
    // The long turn's primary fails once: it fails over to the $1000/MTok backup.
    const { session, requests, summary } = await converse('tight', () =>
      sim.addFault({ match: { provider: 'openai', model: 'gpt-4o-mini' }, status: 503, times: 1 }),
    );
    sim.clearFaults();
    expect(requests.map((e) => e.used_provider)).toEqual(['oai', 'oai', 'pricey']);
    const requestCost = sum(requests.map(costOf));
    for (const e of requests) expect(costOf(e)).toBe(listPrice(e));
    expect(requestCost).toBeGreaterThan(usdToMicros('0.05'));
    expect(session.summary_version).toBe(0);
    expect(session.summary).toBeFalsy();
    expect(session.turns).toHaveLength(6);
    expect(summary).toMatchObject({
      status: 'error',
      outcome: 'budget_exceeded',
      error_code: 'project_budget_exceeded',
      http_status: 402,
      used_provider: null,
      usage: null,
    });
    expect(summary.details).toMatchObject({ applied: false, folded_turns: 0, kept_turns: 6 });
    // Nothing reached a provider after the long turn (its failed primary and its backup).
    expect(sim.requests().filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(
      requests.length + 1,
    );
    // The refused summary holds nothing and spent nothing: the cap reads the three requests exactly.
    const projectSpent = await spentSettles(projectKey('tight'), requestCost);
    console.log(
      `(b) requests ${requestCost} µUSD over the $0.05 cap; summary refused (${summary.error_code}); project cap spent ${projectSpent}`,
    );
    expect(projectSpent).toBe(requestCost);
    const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_session_summaries_total\{project="team\.tight",workflow="tight-sum",outcome="error"\} 1\n/,
    );
  });

  it('(c) a primary over its slot cap is skipped: the summary is made on the backup and billed there', async () => {
    const { session, requests, summary } = await converse('slotted');
    expect(requests.map((e) => e.used_provider)).toEqual(['loud', 'loud', 'loud']);
    const requestCost = sum(requests.map(costOf));
    expect(session.summary_version).toBe(1);
    expect(summary).toMatchObject({ status: 'success', used_provider: 'oai', used_model: 'gpt-4o-mini' });
    expect(summary.attempts).toHaveLength(2);
    expect(summary.attempts[0]).toMatchObject({ provider: 'loud', status: 'skipped' });
    expect(summary.attempts[0]!.reason!.message).toMatch(/slotted-primary .* on primary is reached/);
    const summaryCost = costOf(summary);
    expect(summaryCost).toBe(listPrice(summary));
    const primarySpent = await spentSettles(slotKey('slotted', 'primary'), requestCost);
    expect(requestCost - costOf(requests[2]!)).toBeLessThan(usdToMicros('0.05'));
    expect(requestCost).toBeGreaterThanOrEqual(usdToMicros('0.05'));
    const backupSpent = await spentSettles(slotKey('slotted', 'backup-1'), summaryCost);
    const projectSpent = await spentSettles(projectKey('slotted'), requestCost + summaryCost);
    console.log(
      `(c) primary cap $0.05 spent ${primarySpent} by the turns; summary on backup ${summaryCost} µUSD; backup cap spent ${backupSpent}; project cap spent ${projectSpent}`,
    );
    expect(primarySpent).toBe(requestCost);
    expect(backupSpent).toBe(summaryCost);
    expect(projectSpent).toBe(requestCost + summaryCost);
  });

  it("(c') every slot over its cap: the summary is refused with workflow_budget_exceeded, turns kept", async () => {
    const { session, requests, summary } = await converse('walled');
    const requestCost = sum(requests.map(costOf));
    expect(session.summary_version).toBe(0);
    expect(session.turns).toHaveLength(6);
    expect(summary).toMatchObject({
      status: 'error',
      outcome: 'budget_exceeded',
      error_code: 'workflow_budget_exceeded',
      http_status: 402,
      usage: null,
    });
    expect(summary.attempts.map((a) => [a.provider, a.status])).toEqual([
      ['loud', 'skipped'],
      ['oai', 'skipped'],
    ]);
    const primarySpent = await spentSettles(slotKey('walled', 'primary'), requestCost);
    const projectSpent = await spentSettles(projectKey('walled'), requestCost);
    console.log(
      `(c') summary refused (${summary.error_code}); primary cap spent ${primarySpent}, backup cap spent ${await spent(slotKey('walled', 'backup-1'))}, project cap spent ${projectSpent}`,
    );
    expect(primarySpent).toBe(requestCost);
    expect(await spent(slotKey('walled', 'backup-1'))).toBe(0);
    expect(projectSpent).toBe(requestCost);
  });
});
