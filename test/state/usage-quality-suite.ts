import { beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeState } from '#gateway/state/types';
import { percentileMs } from '#gateway/state/usage-quality';
import { projectId, usage } from './fixtures.ts';

/**
 * The quality figures of the usage buckets (errors, cache hits, failovers, duration percentiles),
 * written by the same state write as the usage and read back by `queryUsage(..., {quality: true})`.
 * Run inside the state contract, so memory, Redis and Redis Cluster answer alike.
 */
export function usageQualityContract(stateOf: () => RuntimeState): void {
  describe('usage quality figures', () => {
    const hour = Date.UTC(2025, 7, 1, 9) / 1000;
    const range = { from: hour * 1000, to: (hour + 7200) * 1000 };
    const p = projectId('quality');
    const q = (
      durationMs: number,
      over: { error?: boolean; cacheHit?: boolean; failover?: boolean } = {},
    ) => ({
      durationMs,
      error: over.error ?? false,
      cacheHit: over.cacheHit ?? false,
      failover: over.failover ?? false,
    });

    beforeAll(async () => {
      const state = stateOf();
      // wA: 20 answers of 40 ms, 2 cache hits (3 ms), one failover of 700 ms; one error of 30 ms with no usage.
      for (let i = 0; i < 20; i++)
        state.write({
          projectId: p,
          usage: usage({ hourStartSec: hour, workflow: 'wA', quality: q(40) }),
          logCap: 10,
        });
      for (let i = 0; i < 2; i++)
        state.write({
          projectId: p,
          usage: usage({ hourStartSec: hour, workflow: 'wA', quality: q(3, { cacheHit: true }) }),
          logCap: 10,
        });
      state.write({
        projectId: p,
        usage: usage({
          hourStartSec: hour,
          workflow: 'wA',
          model: 'backup',
          quality: q(700, { failover: true }),
        }),
        logCap: 10,
      });
      const refused = {
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        cost_micros: 0,
      };
      state.write({
        projectId: p,
        usage: usage({
          hourStartSec: hour,
          workflow: 'wA',
          provider: '',
          model: '',
          ...refused,
          quality: q(30, { error: true }),
        }),
        logCap: 10,
      });
      // wB in the next hour: only errors, no usage at all.
      for (let i = 0; i < 3; i++)
        state.write({
          projectId: p,
          usage: usage({
            hourStartSec: hour + 3600,
            workflow: 'wB',
            provider: '',
            model: '',
            ...refused,
            quality: q(12_000, { error: true }),
          }),
          logCap: 10,
        });
      await state.flush();
    });

    it('counts errors, cache hits, failovers and p50/p95 per workflow and hour', async () => {
      const rows = await stateOf().queryUsage(p, {
        ...range,
        groupBy: 'workflow',
        granularity: 'hour',
        quality: true,
      });
      expect(
        rows.map((r) => [
          r.workflow,
          r.requests,
          r.settled_requests,
          r.errors,
          r.cache_hits,
          r.failovers,
          r.latency_p50_ms,
          r.latency_p95_ms,
        ]),
      ).toEqual([
        // 24 settled: 2 in (0,10], 20 in (25,50], 1 in (25,50] (the error), 1 in (500,1000]. p50 rank 12 of the 21 in (25,50].
        ['wA', 23, 24, 1, 2, 1, Math.round(25 + (10 / 21) * 25), Math.round(25 + (20.8 / 21) * 25)],
        ['wB', 0, 3, 3, 0, 0, Math.round(10_000 + 0.5 * 20_000), Math.round(10_000 + 0.95 * 20_000)],
      ]);
      expect(rows[0]?.latency_histogram?.reduce((a, b) => a + b, 0)).toBe(24);
    });

    it('groups by model and by day the same way', async () => {
      const rows = await stateOf().queryUsage(p, {
        ...range,
        groupBy: 'model',
        granularity: 'day',
        quality: true,
      });
      expect(rows.map((r) => [r.provider, r.model, r.settled_requests, r.errors, r.failovers])).toEqual([
        ['', '', 4, 4, 0],
        ['openai-main', 'backup', 1, 0, 1],
        ['openai-main', 'gpt-4o-mini', 22, 0, 0],
      ]);
    });

    it('leaves the usage answer as it was when the figures are not asked for', async () => {
      const rows = await stateOf().queryUsage(p, { ...range, groupBy: 'workflow', granularity: 'hour' });
      expect(rows.map((r) => [r.workflow, r.requests])).toEqual([['wA', 23]]);
      expect(Object.keys(rows[0] ?? {})).not.toContain('errors');
    });

    it('estimates percentiles inside their bucket', () => {
      expect(percentileMs([], 0.5)).toBeNull();
      expect(percentileMs([0, 0, 0, 4], 0.5)).toBe(75);
      expect(percentileMs([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5], 0.95)).toBe(60_000);
    });
  });
}
