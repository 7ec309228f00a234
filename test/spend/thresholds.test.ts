import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { microsToUsd, periodWindow } from '#contract';
import { type RunningRedis, startRedis } from '#devkit/redis';
import type { GatewayOptions } from '#gateway/gateway';
import { createRuntimeState } from '#gateway/state/index';
import { WEBHOOK_SECRET } from '../async/harness.ts';
import { post, userMsg, type Wrapped } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, project, secret } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { simCostMicros, spendCap, workflowOf } from './manifests.ts';

/**
 * Thresholds: the first time a period's spend reaches 80, 90 and 100 % of a cap, one
 * `budget_threshold` request-log entry each (the budget.threshold event), never twice in the
 * period; the switchyard_spend_cap_used_ratio gauge follows the spend.
 */

const KEY = 'sy_live_ThresholdProjectKey0123456789abcd';

function config(simUrl: string, hookUrl: string) {
  return [
    ...baseConfig(simUrl),
    secret('hook-secret', { s0: WEBHOOK_SECRET }),
    project('watched', {
      webhooks: [
        { url: hookUrl, secretRef: { name: 'hook-secret', key: 's0' }, events: ['budget.threshold'] },
      ],
      outboundFetch: { allowPrivateNetworks: true },
    }),
    ...apiKey('watched', KEY, { project: 'watched', scopes: ['ai', 'console'] }),
    workflowOf('watched', 'watched-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    // 200 µUSD; each answer costs about 40 µUSD at the harness price.
    spendCap('watched-monthly', { project: 'watched', period: 'monthly', limitUsd: '0.0002' }),
  ];
}

interface Entry {
  request_log_id: string;
  time: string;
  type: string;
  surface: string;
  outcome: string;
  details: Record<string, unknown>;
}

function suite(name: string, state: () => GatewayOptions['state']) {
  describe(`spend thresholds (${name})`, () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    beforeAll(async () => {
      sim = await startSimulator();
      receiver = await startReceiver(WEBHOOK_SECRET);
      // The real clock: receivers refuse webhook signatures from another time.
      gw = await startGateway(config(sim.url, receiver.url), { state: state() });
      await (gw.gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
    });
    afterAll(async () => {
      await gw?.close();
      await receiver?.close();
      await sim?.close();
    });

    it('writes one budget_threshold entry per threshold per period and keeps the gauge current', async () => {
      let spent = 0;
      const seenAt: Record<number, number> = {};
      for (let i = 0; i < 12; i++) {
        const r = await post<Wrapped>(
          gw.url,
          { workflow: 'watched-chat', messages: userMsg(), format: 'wrapped' },
          { key: KEY },
        );
        if (r.status === 402) break;
        const before = spent;
        spent += simCostMicros(r.json.meta.usage as { prompt_tokens: number; completion_tokens: number });
        for (const l of [80, 90, 100])
          if (before * 100 < l * 200 && spent * 100 >= l * 200) seenAt[l] = spent;
      }
      expect(spent).toBeGreaterThanOrEqual(200);
      await gw.gateway.state.flush();
      const res = await fetch(`${gw.url}/v1/request-logs?type=budget_threshold&limit=50`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const entries = ((await res.json()) as { data: Entry[] }).data;
      const byLevel = new Map(entries.map((e) => [e.details.threshold_percent, e]));
      expect(entries).toHaveLength(3);
      expect([...byLevel.keys()].sort()).toEqual([100, 80, 90]);
      const states = { 80: 'warning', 90: 'critical', 100: 'exceeded' } as const;
      for (const level of [80, 90, 100] as const) {
        const e = byLevel.get(level)!;
        expect(e.type).toBe('budget_threshold');
        expect(e.surface).toBe('internal');
        expect(e.outcome).toBe(states[level]);
        expect(e.details).toMatchObject({
          event: 'budget.threshold',
          cap_id: 'team/watched-monthly',
          scope: 'project',
          period: 'monthly',
          threshold_percent: level,
          state: states[level],
          spent_usd: microsToUsd(seenAt[level]!),
          limit_usd: '0.0002',
          reset_at: periodWindow('monthly', new Date(e.time)).end.toISOString(),
        });
      }
      // ...and the budget.threshold webhook, once per threshold, signed.
      const deadline = Date.now() + 10_000;
      while (receiver.deliveries.length < 3 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      const hooks = receiver.deliveries.filter((d) => d.event === 'budget.threshold');
      expect(hooks).toHaveLength(3);
      expect(hooks.every((d) => d.verified)).toBe(true);
      expect(JSON.stringify(hooks.map((d) => d.json))).toContain('"threshold_percent":100');
      const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
      const gauge = metrics
        .split('\n')
        .find(
          (l) => l.startsWith('switchyard_spend_cap_used_ratio{') && l.includes('cap="team/watched-monthly"'),
        );
      expect(gauge).toBeDefined();
      expect(Number(gauge!.split(' ').at(-1))).toBeCloseTo(spent / 200, 6);
    });
  });
}

suite('memory', () => undefined);

let redis: RunningRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
suite('redis', () => (metrics, logger) =>
  createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }));
