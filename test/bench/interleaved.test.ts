/**
 * The bench's goals that compare targets, from its interleaved stretch: a ratio or a difference is
 * taken within each round (windows seconds apart) and the goal reads the median over the rounds, so
 * one slow window moves it little; first-token times are pooled over the rounds.
 */
import { describe, expect, it } from 'vitest';
import {
  type InterleavedLatency,
  type InterleavedResult,
  type InterleavedWindow,
  roundAddedRatio,
  roundDifference,
  roundRatio,
  ttftOverhead,
} from '../../bench/interleaved.ts';
import { median } from '../../bench/load.ts';

const window = (
  target: InterleavedWindow['target'],
  round: number,
  rps: number,
  cpu: number,
): InterleavedWindow => ({
  target,
  round,
  rps,
  p99: 20,
  errors: 0,
  cpuPerRequestUs: cpu,
  mainThreadUsPerRequest: cpu - 10,
  mainThreadBusy: 0.95,
});

const stretch = (
  windows: InterleavedWindow[],
  rounds: number,
  more: Partial<InterleavedResult> = {},
): InterleavedResult => ({
  rounds,
  windowS: 5,
  rewarmS: 1,
  warmUpS: 10,
  connections: 50,
  windows,
  ...more,
});

const c1 = (
  target: InterleavedLatency['target'],
  round: number,
  p50: number,
  p99: number,
  requests = 2000,
) => ({
  target,
  round,
  p50,
  p99,
  requests,
  errors: 0,
});

describe('the interleaved ratios of make bench', () => {
  it('takes the middle value, the mean of the two middle ones for an even count, NaN for none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([Number.NaN, 5])).toBe(5);
    expect(median([])).toBeNaN();
  });

  it('pairs the windows of each round and takes the median over the rounds', () => {
    // The machine slowed everything in round 2: both variants' CPU rose, their ratio did not.
    const r = stretch(
      [
        window('gateway stateless compat', 0, 6000, 150),
        window('gateway compat', 0, 5500, 165),
        window('gateway compat', 1, 4000, 264),
        window('gateway stateless compat', 1, 4500, 240),
        window('gateway stateless compat', 2, 6100, 148),
        window('gateway compat', 2, 5400, 170),
      ],
      3,
    );
    const cpu = roundRatio(r, 'gateway compat', 'gateway stateless compat', (w) => w.cpuPerRequestUs);
    expect(cpu.perRound.map((x) => Math.round(x * 100) / 100)).toEqual([1.1, 1.1, 1.15]);
    expect(cpu.median).toBeCloseTo(1.1, 5);
    // A row from round 1 against a row from round 2 would read 264 / 150 = 1.76.
  });

  it('leaves out a round that lacks one of the pair', () => {
    const r = stretch(
      [
        window('passthrough', 0, 10000, 90),
        window('gateway compat', 0, 5000, 170),
        window('gateway compat', 1, 5200, 160),
      ],
      2,
    );
    const byPass = roundRatio(r, 'gateway compat', 'passthrough', (w) => w.rps);
    expect(byPass.perRound).toEqual([0.5]);
    expect(byPass.median).toBe(0.5);
  });

  it('takes Portkey like the pass-through: gateway req/s over its req/s within each round', () => {
    const r = stretch(
      [
        window('portkey', 0, 2000, 400),
        window('gateway compat', 0, 6400, 160),
        window('gateway compat', 1, 4800, 210),
        window('portkey', 1, 1500, 520),
      ],
      2,
    );
    const byPortkey = roundRatio(r, 'gateway compat', 'portkey', (w) => w.rps);
    expect(byPortkey.perRound).toEqual([3.2, 3.2]);
    // Rows from different minutes would read 4800 / 2000 = 2.4 or 6400 / 1500 = 4.3.
  });

  it('takes added latency as the difference of the two windows of each round, and the median of those', () => {
    const r = stretch([], 3, {
      c1WindowS: 2,
      latency: [
        c1('direct', 0, 0.3, 0.6),
        c1('gateway compat', 0, 0.7, 1.4),
        c1('gateway cache hit', 0, 0.45, 0.9),
        // A slow round: both windows slower by 0.5 ms, their difference the same.
        c1('gateway compat', 1, 1.2, 2.9),
        c1('direct', 1, 0.8, 1.9),
        c1('gateway cache hit', 1, 0.95, 2.2),
        c1('direct', 2, 0.3, 0.6),
        c1('gateway compat', 2, 0.75, 1.5),
        c1('gateway cache hit', 2, 0.4, 0.8),
      ],
    });
    const p50 = roundDifference(r, 'gateway compat', 'direct', 'p50');
    expect(p50.perRound.map((x) => Math.round(x * 1000) / 1000)).toEqual([0.4, 0.4, 0.45]);
    expect(p50.median).toBeCloseTo(0.4, 9);
    expect(roundDifference(r, 'gateway compat', 'direct', 'p99').median).toBeCloseTo(0.9, 9);
    const hit = roundDifference(r, 'gateway cache hit', 'direct', 'p50');
    expect(hit.perRound.map((x) => Math.round(x * 1000) / 1000)).toEqual([0.15, 0.15, 0.1]);
    // A slow window's p50 against a quiet one's would read 1.2 - 0.3 = 0.9 ms.
  });

  it("takes a surface's added latency as a multiple of chat completions', each over the simulator in its round", () => {
    const r = stretch(
      [
        window('gateway compat', 0, 5000, 160),
        window('gateway responses', 0, 4500, 176),
        window('gateway messages', 0, 4800, 168),
        // A slow round: every window slower, the surfaces' ratios to chat completions the same.
        window('gateway responses', 1, 3000, 264),
        window('gateway compat', 1, 3400, 240),
        window('gateway messages', 1, 3200, 252),
      ],
      2,
      {
        latency: [
          c1('direct', 0, 0.2, 0.5),
          c1('gateway compat', 0, 0.6, 1.3),
          c1('gateway responses', 0, 0.7, 1.5),
          c1('gateway messages', 0, 0.64, 1.4),
          c1('gateway messages', 1, 1.14, 2.4),
          c1('gateway responses', 1, 1.2, 2.5),
          c1('gateway compat', 1, 1.1, 2.3),
          c1('direct', 1, 0.7, 1.5),
        ],
      },
    );
    const cpu = roundRatio(r, 'gateway responses', 'gateway compat', (w) => w.cpuPerRequestUs);
    expect(cpu.perRound.map((x) => Math.round(x * 100) / 100)).toEqual([1.1, 1.1]);
    const p50 = roundAddedRatio(r, 'gateway responses', 'gateway compat', 'p50');
    // (0.7 - 0.2) / (0.6 - 0.2) in both rounds; the slow round's raw p50s would read 1.2 / 0.6 = 2.
    expect(p50.perRound.map((x) => Math.round(x * 1000) / 1000)).toEqual([1.25, 1.25]);
    expect(roundAddedRatio(r, 'gateway messages', 'gateway compat', 'p50').median).toBeCloseTo(1.1, 9);
    // Without the simulator's window in a round, that round is left out.
    const noDirect = stretch([], 1, {
      latency: [c1('gateway compat', 0, 0.6, 1), c1('gateway responses', 0, 0.7, 1)],
    });
    expect(roundAddedRatio(noDirect, 'gateway responses', 'gateway compat', 'p50').median).toBeNaN();
  });

  it('leaves out a round whose window served nothing, and reads NaN from a stretch without latency', () => {
    const r = stretch([], 2, {
      latency: [
        c1('direct', 0, 0.3, 0.6),
        c1('gateway compat', 0, 0.6, 1.2),
        c1('direct', 1, 0.3, 0.6),
        c1('gateway compat', 1, Number.NaN, Number.NaN, 0),
      ],
    });
    expect(roundDifference(r, 'gateway compat', 'direct', 'p50').perRound).toEqual([0.6 - 0.3]);
    expect(roundDifference(stretch([], 2), 'gateway compat', 'direct', 'p50').median).toBeNaN();
  });

  it('pools first-token times over the rounds and compares the p50s', () => {
    const r = stretch([], 2, {
      streamsPerRound: 3,
      streams: [
        { target: 'direct', round: 0, ttftMs: [2.0, 2.2, 2.1], errors: 0 },
        { target: 'gateway compat', round: 0, ttftMs: [3.1, 2.9, 3.0], errors: 0 },
        { target: 'gateway compat', round: 1, ttftMs: [3.3, 2.8, 3.2], errors: 0 },
        { target: 'direct', round: 1, ttftMs: [2.4, 1.9, 2.3], errors: 1 },
        { target: 'passthrough', round: 0, ttftMs: [2.6, 2.5], errors: 0 },
        { target: 'passthrough', round: 1, ttftMs: [2.7], errors: 0 },
      ],
    });
    const t = ttftOverhead(r);
    expect(t.streams).toBe(6);
    // Gateway: 2.8 2.9 3.0 3.1 3.2 3.3 → p50 3.0; direct: 1.9 2.0 2.1 2.2 2.3 2.4 → p50 2.1.
    expect(t.gateway).toBe(3.0);
    expect(t.direct).toBe(2.1);
    expect(t.overhead).toBeCloseTo(0.9, 9);
    // The pass-through, the reference: 2.5 2.6 2.7 → p50 2.6, over the simulator's 2.1.
    expect(t.passthrough).toBe(2.6);
    expect(t.passthroughOverhead).toBeCloseTo(0.5, 9);
    expect(ttftOverhead(stretch([], 2)).overhead).toBeNaN();
    expect(ttftOverhead(stretch([], 2)).passthroughOverhead).toBeNaN();
  });
});
