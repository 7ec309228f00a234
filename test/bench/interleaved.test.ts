/**
 * The bench's ratio goals from its interleaved stretch: a ratio is taken within each round (windows
 * seconds apart) and the goal reads the median over the rounds, so one slow window moves it little.
 */
import { describe, expect, it } from 'vitest';
import { type InterleavedResult, type InterleavedWindow, roundRatio } from '../../bench/interleaved.ts';
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

const stretch = (windows: InterleavedWindow[], rounds: number): InterleavedResult => ({
  rounds,
  windowS: 5,
  rewarmS: 1,
  warmUpS: 10,
  connections: 50,
  windows,
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
});
