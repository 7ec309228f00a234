import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import type { GatewayOptions } from '#gateway/gateway';
import { createRuntimeState } from '#gateway/state/index';
import { post, userMsg } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { spendCap, workflowOf } from './manifests.ts';

/**
 * Periods reset exactly at UTC boundaries, with an injected clock: one project per period,
 * each capped at $0.00001 so one request exhausts it. The last second of a period is refused with
 * reset_at at the boundary; the boundary itself is a new period.
 */

const PERIODS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
const keyOf = (p: string) => `sy_live_PeriodKeyFor${p.padEnd(10, 'x')}0123456789abcd`;

function config(simUrl: string) {
  return [
    ...baseConfig(simUrl),
    ...PERIODS.flatMap((p) => [
      project(`per-${p}`),
      ...apiKey(`per-${p}`, keyOf(p), { project: `per-${p}` }),
      workflowOf(`per-${p}`, `chat-${p}`, { provider: 'oai', model: 'gpt-4o-mini' }),
      spendCap(`cap-${p}`, { project: `per-${p}`, period: p, limitUsd: '0.00001' }),
    ]),
  ];
}

interface Refusal {
  error: string;
  period: string;
  reset_at: string;
}

/** Each case: the last second of a period, its reset instant, and (optionally) a mid-period check. */
const CASES: { period: (typeof PERIODS)[number]; last: string; boundary: string }[] = [
  { period: 'hourly', last: '2026-11-23T10:59:59.000Z', boundary: '2026-11-23T11:00:00.000Z' },
  { period: 'daily', last: '2026-11-23T23:59:59.000Z', boundary: '2026-11-24T00:00:00.000Z' },
  // 2026-11-29 is a Sunday; weeks start Monday 00:00 UTC.
  { period: 'weekly', last: '2026-11-29T23:59:59.000Z', boundary: '2026-11-30T00:00:00.000Z' },
  // October has 31 days: the 31st is the last day, the 1st a new month.
  { period: 'monthly', last: '2026-10-31T23:59:59.000Z', boundary: '2026-11-01T00:00:00.000Z' },
];

function periodSuite(name: string, state: () => GatewayOptions['state']) {
  describe(`spend periods at UTC boundaries (${name})`, () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let now = 0;
    beforeAll(async () => {
      sim = await startSimulator();
      gw = await startGateway(config(sim.url), { now: () => now, state: state() });
      const s = gw.gateway.state as { whenReady?: () => Promise<void> };
      await s.whenReady?.();
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
    });

    for (const c of CASES)
      it(`${c.period}: refused until ${c.last}, reset_at ${c.boundary}, a new period at ${c.boundary}`, async () => {
        const send = () =>
          post<Refusal>(
            gw.url,
            { workflow: `chat-${c.period}`, messages: userMsg() },
            { key: keyOf(c.period) },
          );
        // Spend the cap early in the period, then ask again in its last second.
        now = Date.parse(c.last) - 1000 * 60 * 20;
        if (c.period === 'hourly') now = Date.parse(c.last) - 1000 * 60 * 30;
        expect((await send()).status).toBe(200);
        now = Date.parse(c.last);
        const refused = await send();
        expect(refused.status).toBe(402);
        expect(refused.json).toMatchObject({
          error: 'project_budget_exceeded',
          period: c.period,
          reset_at: c.boundary,
        });
        now = Date.parse(c.boundary);
        expect((await send()).status).toBe(200);
        // ...and that request spent the new period's cap.
        const again = await send();
        expect(again.status).toBe(402);
        const next = Date.parse(again.json.reset_at);
        expect(next).toBeGreaterThan(Date.parse(c.boundary));
      });
  });
}

periodSuite('memory', () => undefined);

let redis: RunningRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
periodSuite(
  'redis',
  () => (metrics, logger) =>
    createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }),
);
