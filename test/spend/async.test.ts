import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodWindow, SPEND_KEYS } from '#contract';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { createRuntimeState } from '#gateway/state/index';
import { waitState } from '../async/harness.ts';
import { post, userMsg } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { simCostMicros, spendCap, workflowOf } from './manifests.ts';

/**
 * Reservations never outlive their request: an async request's acceptance gives back what its
 * admission reserved (the job reserves for itself and settles at its real cost), and a refusal by
 * a later stage (the session stage) gives back what admission took. On a real Redis, so the
 * reservation hash can be read.
 */

const KEY = 'sy_live_AsyncSpendProjectKey0123456789abc';
const PROJECT_ID = 'team.metered';
const TOKENED_KEY = 'sy_live_AsyncTokenLimitedKey0123456789ab';
/** 600 tokens a minute: the bucket refills 10 tokens a second, slow enough to read exactly. */
const TOKENS_PER_MINUTE = 600;

describe('reservations are settled or given back', () => {
  let sim: Simulator;
  let redis: RunningRedis;
  let reader: Redis;
  let gw: RunningGateway;
  beforeAll(async () => {
    sim = await startSimulator();
    redis = await startRedis();
    reader = new Redis(redis.url);
    gw = await startGateway(
      [
        ...baseConfig(sim.url),
        project('metered'),
        ...apiKey('metered', KEY, { project: 'metered', scopes: ['ai', 'console'] }),
        workflowOf('metered', 'metered-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
        spendCap('metered-daily', { project: 'metered', period: 'daily', limitUsd: '10' }),
        project('tokened', { rateLimit: { tokensPerMinute: TOKENS_PER_MINUTE } }),
        ...apiKey('tokened', TOKENED_KEY, { project: 'tokened' }),
        workflowOf('tokened', 'tokened-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
        spendCap('metered-primary', {
          project: 'metered',
          workflow: 'metered-chat',
          period: 'daily',
          limitUsd: '10',
        }),
      ],
      { state: (m, l) => createRuntimeState({ redis: { url: redis.url }, registry: m.registry, logger: l }) },
    );
    await (gw.gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
  });
  afterAll(async () => {
    await gw?.close();
    reader?.disconnect();
    await redis?.stop();
    await sim?.close();
  });

  const start = () => periodWindow('daily', new Date()).start;
  const projectKey = () => SPEND_KEYS.project(PROJECT_ID, 'daily', start());
  const slotKey = () => SPEND_KEYS.slot(PROJECT_ID, 'metered-chat', 'primary', 'daily', start());
  /** What the gateway's requests in flight hold on a cap (µUSD), as its metrics say. */
  const held = async (key: string) => {
    const cap = key === projectKey() ? 'team/metered-daily' : 'team/metered-primary';
    const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('switchyard_spend_in_flight_usd{') && l.includes(`cap="${cap}"`));
    return line ? Math.round(Number(line.split(' ').at(-1)) * 1_000_000) : 0;
  };
  const spent = async (key: string) => Number((await reader.get(key)) ?? 0);
  /** What finished requests cost reaches the spent counter within a fraction of a second. */
  const spentSettles = async (key: string, want: number): Promise<number> => {
    let v = await spent(key);
    for (let i = 0; i < 100 && v !== want; i++) {
      await new Promise((r) => setTimeout(r, 20));
      v = await spent(key);
    }
    return v;
  };
  const settled = async () => {
    await gw.gateway.state.flush();
    for (let i = 0; i < 100 && ((await held(projectKey())) !== 0 || (await held(slotKey())) !== 0); i++)
      await new Promise((r) => setTimeout(r, 20));
  };

  it('a refusal by a later stage (session_id on a workflow without sessions) holds nothing', async () => {
    const r = await post(
      gw.url,
      { workflow: 'metered-chat', session_id: 'nope', messages: userMsg() },
      { key: KEY },
    );
    expect(r.status).toBe(400);
    await settled();
    expect(await held(projectKey())).toBe(0);
    expect(await held(slotKey())).toBe(0);
    expect(await spent(projectKey())).toBe(0);
  });

  it('an async request: the acceptance holds nothing, the job settles its real cost on both caps', async () => {
    const r = await post<{ channel_id: string }>(
      gw.url,
      { workflow: 'metered-chat', messages: userMsg() },
      { key: KEY, path: '/v1/ai/async' },
    );
    expect(r.status).toBe(202);
    const done = (await waitState(gw.url, r.json.channel_id, 'completed', KEY)) as {
      result: { meta: { usage: { prompt_tokens: number; completion_tokens: number } } };
    };
    const cost = simCostMicros(done.result.meta.usage);
    await settled();
    expect(await held(projectKey())).toBe(0);
    expect(await held(slotKey())).toBe(0);
    expect(await spentSettles(projectKey(), cost)).toBe(cost);
    expect(await spentSettles(slotKey(), cost)).toBe(cost);
  });

  it('an async request counts toward token limits: acceptance takes the estimate, the job corrects it to the real usage', async () => {
    const tpmKey = 'switchyard:{p:team.tokened}:rl:project:tpm';
    /** Tokens the project's bucket holds back now (what was taken and has not refilled yet). */
    const outstanding = async () => {
      const [tat, [sec, usec]] = await Promise.all([reader.get(tpmKey), reader.time()]);
      const nowUs = Number(sec) * 1e6 + Number(usec);
      return tat === null ? 0 : Math.max(0, (Number(tat) - nowUs) / (60e6 / TOKENS_PER_MINUTE));
    };
    // max_tokens 300: the estimate (prompt + 300) is far above what the simulator answers with.
    const r = await post<{ channel_id: string }>(
      gw.url,
      { workflow: 'tokened-chat', messages: userMsg(), max_tokens: 300 },
      { key: TOKENED_KEY, path: '/v1/ai/async' },
    );
    expect(r.status).toBe(202);
    const atAcceptance = await outstanding();
    const done = (await waitState(gw.url, r.json.channel_id, 'completed', TOKENED_KEY)) as {
      result: { meta: { usage: { total_tokens: number } } };
    };
    const real = done.result.meta.usage.total_tokens;
    await gw.gateway.state.flush();
    let after = await outstanding();
    for (let i = 0; i < 100 && after > real; i++) {
      await new Promise((res) => setTimeout(res, 20));
      after = await outstanding();
    }
    console.log(
      `async token limit: ${atAcceptance.toFixed(1)} tokens held at acceptance, ${after.toFixed(1)} after the job (real usage ${real})`,
    );
    expect(real).toBeLessThan(150);
    // The acceptance kept the estimate (more than 300), minus what refilled since.
    expect(atAcceptance).toBeGreaterThan(290);
    // The job replaced it with its real usage, minus at most a few seconds of refill.
    expect(after).toBeLessThanOrEqual(real);
    expect(after).toBeGreaterThan(real - 50);
  });
});
