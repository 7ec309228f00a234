import { roundAddedRatio, roundDifference, roundRatio, ttftOverhead } from './interleaved.ts';
import type { BenchResult, SurfaceResult } from './orchestrator.ts';

/** The figures the report and the goals read from one run: its rows, and its interleaved stretch. */

export const f = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits);
export const signed = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? 'n/a' : `${n >= 0 ? '+' : ''}${n.toFixed(digits)}`;

export interface Row {
  s: SurfaceResult;
  startupMs: number;
  rss: { idle: number; peak: number; after: number };
}

export function rows(r: BenchResult): Row[] {
  return r.targets.flatMap((t) => t.surfaces.map((s) => ({ s, startupMs: t.startupMs, rss: t.rssMb })));
}

export function byName(r: BenchResult, name: string): Row | undefined {
  return rows(r).find((x) => x.s.name === name);
}

/** A row's latency minus the simulator's, same delay, concurrency and quantile (ms). */
export function added(
  r: BenchResult,
  s: SurfaceResult,
  delayMs: number,
  conc: 'c1' | 'cHigh',
  q: 'p50' | 'p99',
) {
  const direct = byName(r, 'direct')?.s.delays.find((d) => d.delayMs === delayMs);
  const mine = s.delays.find((d) => d.delayMs === delayMs);
  if (!direct || !mine) return Number.NaN;
  return mine[conc][q] - direct[conc][q];
}

/** A target's first token (p50, one stream at a time) over the simulator's, from the rows (ms). */
export function ttftOverDirect(r: BenchResult, name: string): number {
  const direct = byName(r, 'direct');
  const t = byName(r, name);
  return direct && t ? t.s.stream.ttft.p50 - direct.s.stream.ttft.p50 : Number.NaN;
}

/** A surface of the stateful gateway against chat completions, from the rows: added c1 p50 and CPU. */
export function surfaceOverChat(r: BenchResult, name: string): { p50: number; cpu: number } {
  const compat = byName(r, 'gateway compat');
  const x = byName(r, name);
  if (!compat || !x) return { p50: Number.NaN, cpu: Number.NaN };
  const d0 = r.options.delays[0] ?? 0;
  return {
    p50: added(r, x.s, d0, 'c1', 'p50') / added(r, compat.s, d0, 'c1', 'p50'),
    cpu: x.s.cpuPerRequestUs / compat.s.cpuPerRequestUs,
  };
}

/** The interleaved stretch's figures for the goals (NaN without one, or without that part of it). */
export function interleavedFigures(r: BenchResult) {
  const x = r.interleaved;
  if (!x) {
    const none = Number.NaN;
    const surface = { p50: none, cpu: none };
    return {
      cpu: none,
      byPass: none,
      byPortkey: none,
      p50: none,
      p99: none,
      hit: none,
      ttft: none,
      ptTtft: none,
      surfaces: { 'gateway responses': surface, 'gateway messages': surface, 'gateway guarded': surface },
    };
  }
  const streams = ttftOverhead(x);
  const overChat = (name: 'gateway responses' | 'gateway messages' | 'gateway guarded') => ({
    p50: roundAddedRatio(x, name, 'gateway compat', 'p50').median,
    cpu: roundRatio(x, name, 'gateway compat', (w) => w.cpuPerRequestUs).median,
  });
  return {
    cpu: roundRatio(x, 'gateway compat', 'gateway stateless compat', (w) => w.cpuPerRequestUs).median,
    byPass: roundRatio(x, 'gateway compat', 'passthrough', (w) => w.rps).median,
    byPortkey: roundRatio(x, 'gateway compat', 'portkey', (w) => w.rps).median,
    p50: roundDifference(x, 'gateway compat', 'direct', 'p50').median,
    p99: roundDifference(x, 'gateway compat', 'direct', 'p99').median,
    hit: roundDifference(x, 'gateway cache hit', 'direct', 'p50').median,
    ttft: streams.overhead,
    ptTtft: streams.passthroughOverhead,
    surfaces: {
      'gateway responses': overChat('gateway responses'),
      'gateway messages': overChat('gateway messages'),
      'gateway guarded': overChat('gateway guarded'),
    },
  };
}
