import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATE_KEYS } from '#gateway/state/keys';
import { encodeCursor } from '#gateway/state/log-pager';
import {
  InvalidCursorError,
  type LogQuery,
  MAX_USAGE_RANGE_MS,
  type RequestLogEntry,
  type RuntimeState,
  UsageRangeError,
} from '#gateway/state/types';
import { allPages, entry, projectId, usage } from './fixtures.ts';
import { usageQualityContract } from './usage-quality-suite.ts';

/** What the contract suite needs from one backend. */
export interface StateUnderTest {
  state: RuntimeState;
  /** Two project ids; on a cluster, ones whose keys hash to slots on different masters. */
  projectsApart(): Promise<[string, string]>;
  /** On a cluster: the master (`host:port`) that holds `key`, asked of each master directly; null if none. */
  nodeHolding?(key: string): Promise<string | null>;
  close(): Promise<void>;
}

/** Rows a page examines at most: small, so filters that match little really page through bounded scans. */
export const CONTRACT_SCAN_LIMIT = 64;

const ids = (es: RequestLogEntry[]) => es.map((e) => e.request_log_id);
const HOUR = 3_600_000;

/** The one runtime-state contract, run against every backend (memory, Redis, Redis Cluster). */
export function stateContract(name: string, setup: () => Promise<StateUnderTest>): void {
  describe(`runtime state contract: ${name}`, () => {
    let sut: StateUnderTest;
    let state: RuntimeState;
    beforeAll(async () => {
      sut = await setup();
      state = sut.state;
    });
    afterAll(async () => {
      await sut?.close();
    });

    /** Settles each entry (logs only) in order and waits until all are stored. */
    async function write(project: string, entries: RequestLogEntry[], logCap = 10_000): Promise<void> {
      for (const log of entries) state.write({ projectId: project, log, logCap });
      await state.flush();
    }

    it('returns a settled entry with every field intact', async () => {
      const p = projectId('roundtrip');
      const full = entry(p, 1);
      const minimal = entry(p, 2, {
        type: 'session_summary',
        api_key_id: null,
        surface: 'internal',
        method: null,
        path: null,
        workflow: null,
        channel_id: null,
        session_id: null,
        status: 'error',
        outcome: 'upstream_error',
        http_status: 502,
        error_code: 'upstream_error',
        used_provider: null,
        used_model: null,
        attempts: [],
        usage: null,
        cost_usd: null,
        cache: null,
        stream: false,
        ttft_ms: null,
        customer_data: {},
        test_mode: true,
      });
      delete minimal.details;
      delete minimal.bodies;
      await write(p, [full, minimal]);
      const page = await state.queryLogs(p, { limit: 10 });
      expect(page.entries).toStrictEqual([minimal, full]);
      expect(page.next_cursor).toBeNull();
    });

    it('keeps the entry of a request whose customer data cannot be serialised, without that data', async () => {
      const p = projectId('unserialisable');
      // BigInt is what JSON.stringify refuses; a request's free-form parts are where such data would be.
      const odd = entry(p, 1, { customer_data: { n: 10n as unknown as number } });
      await write(p, [odd]);
      const page = await state.queryLogs(p, { limit: 10 });
      expect(page.entries).toHaveLength(1);
      const [kept] = page.entries;
      expect(kept?.request_log_id).toBe(odd.request_log_id);
      expect(kept?.http_status).toBe(200);
      expect(kept?.customer_data).toEqual({});
      expect(String(kept?.details?.not_recorded)).toMatch(/could not be serialised/);
    });

    it('answers an empty page for a project with no entries', async () => {
      expect(await state.queryLogs(projectId('nobody'), { limit: 5 })).toEqual({
        entries: [],
        next_cursor: null,
      });
    });

    it('lists newest first', async () => {
      const p = projectId('order');
      const written = [0, 1, 2, 3, 4].map((n) => entry(p, n));
      await write(p, written);
      const page = await state.queryLogs(p, { limit: 10 });
      expect(ids(page.entries)).toEqual(ids(written).reverse());
    });

    describe('filters', () => {
      const p = projectId('filters');
      const base = Date.UTC(2025, 4, 10, 8);
      // Insertion order and entry time deliberately disagree (37 is coprime to 80), so the time
      // filter is tested on entry times, not on where entries sit in the log.
      const written = Array.from({ length: 80 }, (_, n) =>
        entry(p, n, {
          workflow: n % 5 === 0 ? null : n % 2 ? 'wA' : 'wB',
          status: n % 3 === 0 ? 'error' : 'success',
          session_id: n % 7 === 0 ? null : `s-${n % 4}`,
          channel_id: `ch-${n % 3}`,
          type: n % 10 === 0 ? 'callback' : n % 6 === 0 ? 'webhook_attempt' : 'request',
          time: new Date(base + ((n * 37) % 80) * 60_000).toISOString(),
        }),
      );
      const newestFirst = [...written].reverse();
      const t = (e: RequestLogEntry) => Date.parse(e.time);
      const at = (minute: number) => base + minute * 60_000;
      const cases: Array<[string, Omit<LogQuery, 'limit'>, (e: RequestLogEntry) => boolean]> = [
        ['workflow', { workflow: 'wA' }, (e) => e.workflow === 'wA'],
        ['status', { status: 'error' }, (e) => e.status === 'error'],
        ['session_id', { session_id: 's-1' }, (e) => e.session_id === 's-1'],
        ['channel_id', { channel_id: 'ch-2' }, (e) => e.channel_id === 'ch-2'],
        ['type', { type: 'webhook_attempt' }, (e) => e.type === 'webhook_attempt'],
        ['from', { from: at(50) }, (e) => t(e) >= at(50)],
        ['to', { to: at(9) }, (e) => t(e) <= at(9)],
        ['from and to', { from: at(20), to: at(30) }, (e) => t(e) >= at(20) && t(e) <= at(30)],
        [
          'all combined',
          { workflow: 'wB', status: 'success', channel_id: 'ch-1', type: 'request', from: at(5), to: at(70) },
          (e) =>
            e.workflow === 'wB' &&
            e.status === 'success' &&
            e.channel_id === 'ch-1' &&
            e.type === 'request' &&
            t(e) >= at(5) &&
            t(e) <= at(70),
        ],
        [
          'status and session',
          { status: 'success', session_id: 's-2' },
          (e) => e.status === 'success' && e.session_id === 's-2',
        ],
      ];

      beforeAll(async () => {
        await write(p, written);
      });

      for (const [label, filter, keep] of cases)
        it(`by ${label}, across pages`, async () => {
          const expected = newestFirst.filter(keep);
          expect(expected.length).toBeGreaterThan(0);
          expect(expected.length).toBeLessThan(written.length);
          const { entries } = await allPages(state, p, { ...filter, limit: 3 });
          expect(ids(entries)).toEqual(ids(expected));
        });

      it('time bounds are inclusive to the millisecond', async () => {
        const first = written[10];
        const last = written[40];
        if (!first || !last) throw new Error('fixture too short');
        const [lo, hi] = [t(first), t(last)].sort((a, b) => a - b) as [number, number];
        const inside = await allPages(state, p, { from: lo, to: hi, limit: 50 });
        expect(ids(inside.entries)).toEqual(ids(newestFirst.filter((e) => t(e) >= lo && t(e) <= hi)));
        expect(ids(inside.entries)).toEqual(
          expect.arrayContaining([first.request_log_id, last.request_log_id]),
        );
        const strict = await allPages(state, p, { from: lo + 1, to: hi - 1, limit: 50 });
        expect(ids(strict.entries)).not.toContain(first.request_log_id);
        expect(ids(strict.entries)).not.toContain(last.request_log_id);
        expect(strict.entries.length).toBe(inside.entries.length - 2);
      });
    });

    it('finds entries timed now by a recent time range', async () => {
      const p = projectId('recent');
      const now = Date.now();
      const written = [0, 1, 2].map((n) => entry(p, n, { time: new Date(now - n * 1000).toISOString() }));
      await write(p, written);
      const { entries } = await allPages(state, p, { from: now - 60_000, to: now + 60_000, limit: 10 });
      expect(ids(entries)).toEqual(ids(written).reverse());
    });

    it('pages 250 entries by 40 with no duplicates and no gaps', async () => {
      const p = projectId('pages');
      const written = Array.from({ length: 250 }, (_, n) => entry(p, n));
      await write(p, written);
      const { entries, pages } = await allPages(state, p, { limit: 40 });
      expect(pages.map((pg) => pg.entries.length)).toEqual([40, 40, 40, 40, 40, 40, 10]);
      expect(new Set(ids(entries)).size).toBe(250);
      expect(ids(entries)).toEqual(ids(written).reverse());
      // A cursor keeps its place while newer entries arrive.
      const first = await state.queryLogs(p, { limit: 40 });
      await write(p, [entry(p, 1000), entry(p, 1001)]);
      const second = await state.queryLogs(p, { limit: 40, cursor: first.next_cursor ?? '' });
      expect(ids(second.entries)).toEqual(ids(written).reverse().slice(40, 80));
    });

    it('bounds the rows one page examines: a rare match still arrives, over several short pages', async () => {
      const p = projectId('sparse');
      const written = Array.from({ length: 300 }, (_, n) =>
        entry(p, n, { workflow: n % 97 === 5 ? 'rare' : 'common' }),
      );
      await write(p, written);
      const { entries, pages } = await allPages(state, p, { workflow: 'rare', limit: 10 });
      expect(ids(entries)).toEqual(ids(written.filter((e) => e.workflow === 'rare').reverse()));
      expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(300 / CONTRACT_SCAN_LIMIT));
      expect(pages.some((pg) => pg.entries.length === 0 && pg.next_cursor !== null)).toBe(true);
    });

    it('refuses malformed and foreign cursors', async () => {
      const [a, b] = await sut.projectsApart();
      await write(
        a,
        Array.from({ length: 5 }, (_, n) => entry(a, n)),
      );
      const page = await state.queryLogs(a, { limit: 2 });
      expect(page.next_cursor).not.toBeNull();
      const foreign = [
        'not a cursor!',
        '',
        Buffer.from('hello').toString('base64url'),
        Buffer.from(`r1\n${a}\n1-0`).toString('base64url'),
        encodeCursor('x', a, '1-0'),
        state.backend === 'redis' ? encodeCursor('m', a, '7') : encodeCursor('r', a, '7-0'),
        state.backend === 'redis' ? encodeCursor('r', a, '7') : encodeCursor('m', a, '7-0'),
        `${page.next_cursor}x`,
        `${page.next_cursor}==`,
      ];
      for (const cursor of foreign)
        await expect(state.queryLogs(a, { limit: 2, cursor }), cursor).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
      await expect(state.queryLogs(b, { limit: 2, cursor: page.next_cursor ?? '' })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
      const next = await state.queryLogs(a, { limit: 2, cursor: page.next_cursor ?? '' });
      expect(next.entries).toHaveLength(2);
    });

    it('trims the log to about its cap, keeping the newest', async () => {
      const p = projectId('cap');
      const written = Array.from({ length: 400 }, (_, n) => entry(p, n));
      await write(p, written, 50);
      const { entries } = await allPages(state, p, { limit: 100 });
      // Redis trims whole stream nodes (MAXLEN ~, 100 entries a node): at least the cap, less than a node over.
      expect(entries.length).toBeGreaterThanOrEqual(50);
      expect(entries.length).toBeLessThanOrEqual(150);
      expect(ids(entries)).toEqual(ids(written).reverse().slice(0, entries.length));
    });

    it('keeps projects apart: logs and usage', async () => {
      const [a, b] = await sut.projectsApart();
      const hour = Date.UTC(2025, 5, 1, 9) / 1000;
      state.write({
        projectId: a,
        log: entry(a, 1),
        usage: usage({ hourStartSec: hour, requests: 3 }),
        logCap: 100,
      });
      state.write({
        projectId: b,
        log: entry(b, 1),
        usage: usage({ hourStartSec: hour, requests: 5 }),
        logCap: 100,
      });
      state.write({ projectId: b, log: entry(b, 2), logCap: 100 });
      await state.flush();
      expect(ids((await state.queryLogs(a, { limit: 10 })).entries)).toEqual([entry(a, 1).request_log_id]);
      expect(ids((await state.queryLogs(b, { limit: 10 })).entries)).toEqual(
        [entry(b, 2), entry(b, 1)].map((e) => e.request_log_id),
      );
      const range = {
        from: hour * 1000,
        to: hour * 1000 + HOUR,
        groupBy: 'workflow',
        granularity: 'hour',
      } as const;
      expect((await state.queryUsage(a, range)).map((r) => r.requests)).toEqual([3]);
      expect((await state.queryUsage(b, range)).map((r) => r.requests)).toEqual([5]);
      if (sut.nodeHolding) {
        const nodeA = await sut.nodeHolding(STATE_KEYS.logs(a));
        const nodeB = await sut.nodeHolding(STATE_KEYS.logs(b));
        expect(nodeA).not.toBeNull();
        expect(nodeB).not.toBeNull();
        expect(nodeA).not.toBe(nodeB);
        expect(await sut.nodeHolding(STATE_KEYS.usage(a, hour))).toBe(nodeA);
      }
    });

    describe('usage', () => {
      const hour = Date.UTC(2025, 6, 4, 15) / 1000;
      const inc = [
        usage({ hourStartSec: hour, workflow: 'wA', provider: 'openai', model: 'gpt-4o', cost_micros: 1000 }),
        usage({ hourStartSec: hour, workflow: 'wA', provider: 'openai', model: 'gpt-4o', cost_micros: 1000 }),
        usage({
          hourStartSec: hour,
          workflow: 'wA',
          provider: 'anthropic',
          model: 'claude',
          prompt_tokens: 10,
          completion_tokens: 0,
          total_tokens: 10,
          cost_micros: 2_500_000,
        }),
        usage({ hourStartSec: hour, workflow: 'wB', provider: 'openai', model: 'gpt-4o', cost_micros: 0 }),
        usage({ hourStartSec: hour, workflow: '', provider: 'openai', model: 'gpt-4o', cost_micros: null }),
        usage({
          hourStartSec: hour,
          workflow: '',
          provider: 'local',
          model: 'llama',
          cost_micros: null,
          requests: 2,
        }),
      ];
      const p = projectId('usage');
      const range = { from: hour * 1000, to: (hour + 3600) * 1000 };
      const period_start = new Date(hour * 1000).toISOString();

      beforeAll(async () => {
        for (const u of inc) state.write({ projectId: p, usage: u, logCap: 100 });
        await state.flush();
      });

      it('by workflow', async () => {
        expect(await state.queryUsage(p, { ...range, groupBy: 'workflow', granularity: 'hour' })).toEqual([
          {
            period_start,
            workflow: '',
            provider: null,
            model: null,
            requests: 3,
            prompt_tokens: 200,
            completion_tokens: 40,
            total_tokens: 240,
            cost_usd: null,
            unpriced_requests: 3,
          },
          {
            period_start,
            workflow: 'wA',
            provider: null,
            model: null,
            requests: 3,
            prompt_tokens: 210,
            completion_tokens: 40,
            total_tokens: 250,
            cost_usd: '2.502',
            unpriced_requests: 0,
          },
          {
            period_start,
            workflow: 'wB',
            provider: null,
            model: null,
            requests: 1,
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
            cost_usd: '0.00',
            unpriced_requests: 0,
          },
        ]);
      });

      it('by model, with unpriced requests counted apart from the cost', async () => {
        const rows = await state.queryUsage(p, { ...range, groupBy: 'model', granularity: 'hour' });
        expect(
          rows.map((r) => [r.workflow, r.provider, r.model, r.requests, r.cost_usd, r.unpriced_requests]),
        ).toEqual([
          [null, 'anthropic', 'claude', 1, '2.50', 0],
          [null, 'local', 'llama', 2, null, 2],
          [null, 'openai', 'gpt-4o', 4, '0.002', 1],
        ]);
        expect(rows.map((r) => r.total_tokens)).toEqual([10, 120, 480]);
      });

      it('folds hours into UTC days across a day boundary', async () => {
        const q = projectId('days');
        const at = (d: number, h: number) => Date.UTC(2025, 11, d, h) / 1000;
        const hours = [at(31, 20), at(31, 22), at(31, 23), at(31, 23), at(32, 0), at(32, 1), at(32, 2)];
        for (const [i, h] of hours.entries())
          state.write({ projectId: q, usage: usage({ hourStartSec: h, prompt_tokens: i + 1 }), logCap: 10 });
        await state.flush();
        // 21:30 is aligned down to 21:00; the 02:00 hour starts at `to` and is left out.
        const window = { from: at(31, 21) * 1000 + HOUR / 2, to: at(32, 2) * 1000 };
        const hourly = await state.queryUsage(q, { ...window, groupBy: 'workflow', granularity: 'hour' });
        expect(hourly.map((r) => [r.period_start, r.requests, r.prompt_tokens])).toEqual([
          ['2025-12-31T22:00:00.000Z', 1, 2],
          ['2025-12-31T23:00:00.000Z', 2, 3 + 4],
          ['2026-01-01T00:00:00.000Z', 1, 5],
          ['2026-01-01T01:00:00.000Z', 1, 6],
        ]);
        const daily = await state.queryUsage(q, { ...window, groupBy: 'model', granularity: 'day' });
        expect(daily.map((r) => [r.period_start, r.model, r.requests, r.prompt_tokens, r.cost_usd])).toEqual([
          ['2025-12-31T00:00:00.000Z', 'gpt-4o-mini', 3, 9, '0.0045'],
          ['2026-01-01T00:00:00.000Z', 'gpt-4o-mini', 2, 11, '0.003'],
        ]);
      });

      it('refuses empty, reversed and too long ranges', async () => {
        const q = { groupBy: 'workflow', granularity: 'day' } as const;
        const from = Date.UTC(2025, 0, 1);
        await expect(state.queryUsage(p, { ...q, from, to: from })).rejects.toBeInstanceOf(UsageRangeError);
        await expect(state.queryUsage(p, { ...q, from, to: from - 1 })).rejects.toBeInstanceOf(
          UsageRangeError,
        );
        await expect(
          state.queryUsage(p, { ...q, from, to: from + MAX_USAGE_RANGE_MS + 1 }),
        ).rejects.toBeInstanceOf(UsageRangeError);
        await expect(state.queryUsage(p, { ...q, from, to: Number.NaN })).rejects.toBeInstanceOf(
          UsageRangeError,
        );
        expect(await state.queryUsage(p, { ...q, from, to: from + MAX_USAGE_RANGE_MS })).toEqual([]);
      });
    });

    usageQualityContract(() => state);
  });
}
