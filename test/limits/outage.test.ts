/**
 * Redis unreachable (a real Redis, stopped): rate limits fail open and spend caps fail closed with
 * 503 service_unavailable by default, each switchable by environment, every decision counted in
 * switchyard_state_unavailable_total; never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { createRuntimeState } from '#gateway/state/index';
import { type ErrBody, post, userMsg } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { spendCap, workflowOf } from '../spend/manifests.ts';
import { metric } from '../state/fixtures.ts';

const CAPPED_KEY = 'sy_live_OutageCappedKey0123456789abcdefgh';
const LIMITED_KEY = 'sy_live_OutageLimitedKey0123456789abcdefg';

function config(simUrl: string) {
  return [
    ...baseConfig(simUrl),
    project('capped'),
    ...apiKey('capped', CAPPED_KEY, { project: 'capped' }),
    workflowOf('capped', 'capped-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    spendCap('capped-monthly', { project: 'capped', period: 'monthly', limitUsd: '100' }),
    project('limited', { rateLimit: { requestsPerMinute: 1000, tokensPerMinute: 100000 } }),
    ...apiKey('limited', LIMITED_KEY, { project: 'limited' }),
    workflowOf('limited', 'limited-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
  ];
}

// From the registry that /metrics serves (other collectors there may wait on the stopped Redis).
const counted = (gw: RunningGateway, feature: string, decision: string) =>
  metric(gw.gateway.metrics.registry, 'switchyard_state_unavailable_total', { feature, decision });
const leaseCalls = (gw: RunningGateway, kind: string, outcome: string) =>
  metric(gw.gateway.metrics.registry, 'switchyard_spend_lease_calls_total', { kind, outcome });

describe('Redis unreachable', () => {
  let sim: Simulator;
  let redis: RunningRedis;
  const gateways: RunningGateway[] = [];
  const saved = { ...process.env };

  async function gatewayWith(env: Record<string, string>): Promise<RunningGateway> {
    Object.assign(process.env, env);
    try {
      const gw = await startGateway(config(sim.url), {
        state: (metrics, logger) =>
          createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }),
      });
      gateways.push(gw);
      await (gw.gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
      return gw;
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  }

  beforeAll(async () => {
    sim = await startSimulator();
    redis = await startRedis();
  });
  afterAll(async () => {
    // Back up first (on the same port): a gateway's close waits for what it still has to write.
    const back = redis ? await startRedis({ port: redis.port }) : undefined;
    for (const gw of gateways) {
      // Reconnected before closing: the gateway's Redis clients are back in a known state.
      await (gw.gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
      await gw.close();
    }
    await back?.stop();
    await sim?.close();
  });

  it('by default caps fail closed (503) and limits open, on both surfaces, and both are counted', async () => {
    const gw = await gatewayWith({});
    const gw2 = await gatewayWith({
      SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'open',
      SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN: 'closed',
    });
    for (const g of [gw, gw2]) {
      expect(
        (await post(g.url, { workflow: 'capped-chat', messages: userMsg() }, { key: CAPPED_KEY })).status,
      ).toBe(200);
      expect(
        (await post(g.url, { workflow: 'limited-chat', messages: userMsg() }, { key: LIMITED_KEY })).status,
      ).toBe(200);
    }
    // Each project's first request found no lease and waited for one call; Redis answered them.
    expect(await leaseCalls(gw, 'renewal', 'ok')).toBeGreaterThanOrEqual(2);
    expect(await leaseCalls(gw, 'renewal', 'error')).toBe(0);
    await redis.stop();

    const capped = await post<ErrBody>(
      gw.url,
      { workflow: 'capped-chat', messages: userMsg() },
      { key: CAPPED_KEY },
    );
    expect(capped.status).toBe(503);
    expect(capped.json).toEqual({
      error: 'service_unavailable',
      message: 'Spend caps cannot be checked right now; the request was not sent. It is safe to retry.',
    });
    expect(capped.headers.get('retry-after')).toBe('1');
    const compat = await post<{ error: { type: string; code: string } }>(
      gw.url,
      { model: 'capped-chat', messages: userMsg() },
      { key: CAPPED_KEY, path: '/v1/chat/completions' },
    );
    expect(compat.status).toBe(503);
    expect(compat.json.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
    const limited = await post(
      gw.url,
      { workflow: 'limited-chat', messages: userMsg() },
      { key: LIMITED_KEY },
    );
    expect(limited.status).toBe(200);
    // Unlimited, uncapped projects never ask Redis.
    const direct = { provider: 'oai', model: 'gpt-4o-mini', messages: userMsg() };
    expect((await post(gw.url, direct, { key: API_KEY })).status).toBe(200);
    expect(await counted(gw, 'spend_caps', 'closed')).toBe(2);
    expect(await counted(gw, 'rate_limits', 'open')).toBe(1);

    // Switched the other way round.
    expect(
      (await post(gw2.url, { workflow: 'capped-chat', messages: userMsg() }, { key: CAPPED_KEY })).status,
    ).toBe(200);
    const refused = await post<ErrBody>(
      gw2.url,
      { workflow: 'limited-chat', messages: userMsg() },
      { key: LIMITED_KEY },
    );
    expect(refused.status).toBe(503);
    expect(refused.json.message).toBe(
      'Rate limits cannot be checked right now; the request was not sent. It is safe to retry.',
    );
    expect(await counted(gw2, 'spend_caps', 'open')).toBe(1);
    expect(await counted(gw2, 'rate_limits', 'closed')).toBe(1);
  });
});
