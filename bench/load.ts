import autocannon from 'autocannon';
import { Pool } from 'undici';
import { cpuMs, mainThreadCpuMs } from './lib/rss.ts';
import type { RequestSpec } from './targets.ts';

/** Load: a closed-loop latency probe with µs resolution, and autocannon for throughput. */

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentiles(samples: number[]): Percentiles {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1] ?? Number.NaN };
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface LatencyPoint extends Percentiles {
  concurrency: number;
  requests: number;
  errors: number;
  rps: number;
}

/**
 * `concurrency` loops, each sending the next request when the previous answer is read completely, for
 * `durationMs`. Latency is from send to the last body byte, in ms with µs resolution (autocannon's
 * histogram rounds to whole ms, too coarse for sub-millisecond overheads). With `pauseMs`, each loop
 * waits that long after every answer: the target sleeps between requests, as it does between the
 * chunks of a slow stream (the idle latency in bench/report.ts).
 */
export async function latencyPoint(
  spec: RequestSpec,
  concurrency: number,
  durationMs: number,
  pauseMs = 0,
): Promise<LatencyPoint> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  const samples: number[] = [];
  let errors = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await pool.request({
          method: 'POST',
          path: url.pathname,
          headers: spec.headers,
          body: spec.body,
        });
        await res.body.arrayBuffer();
        if (res.statusCode === 200) samples.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = performance.now() - started;
  await pool.close();
  return {
    concurrency,
    requests: samples.length,
    errors,
    rps: (samples.length / elapsed) * 1000,
    ...percentiles(samples),
  };
}

/** An autocannon run as a latency point (whole-ms resolution, fine at tens of ms). */
export function asLatencyPoint(p: CannonPoint, durationS: number): LatencyPoint {
  return {
    concurrency: p.connections,
    requests: Math.round(p.rps * durationS),
    errors: p.errors + p.non2xx,
    rps: p.rps,
    p50: p.p50,
    p90: Number.NaN,
    p99: p.p99,
    max: Number.NaN,
  };
}

export interface CannonPoint {
  connections: number;
  /** Requested rate (req/s) or undefined for as fast as possible. */
  rate: number | undefined;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function cannon(
  spec: RequestSpec,
  connections: number,
  durationS: number,
  rate?: number,
): Promise<CannonPoint> {
  const result = await autocannon({
    url: spec.url,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
    connections,
    duration: durationS,
    // autocannon's coordinated-omission correction uses ceil(1 / per-connection rate) = 1 ms as the
    // expected interval, which pads the histogram with made-up samples: keep the raw latencies instead.
    ...(rate ? { overallRate: rate, ignoreCoordinatedOmission: true } : {}),
  });
  return {
    connections,
    rate,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** What a process spent on CPU during a run. */
export interface CpuUse {
  /** CPU time (user + system) of the whole process per request, in µs. */
  cpuPerRequestUs: number;
  /** The same for its main thread alone. */
  mainThreadUsPerRequest: number;
  /** The main thread's CPU time over the run's wall time: 1 is one core, all the time. */
  mainThreadBusy: number;
}

/** `cannon`, with the CPU time process `pid` spent meanwhile. */
export async function cannonWithCpu(
  pid: number,
  spec: RequestSpec,
  connections: number,
  durationS: number,
): Promise<{ point: CannonPoint } & CpuUse> {
  const cpu0 = cpuMs(pid) ?? Number.NaN;
  const main0 = mainThreadCpuMs(pid) ?? Number.NaN;
  const point = await cannon(spec, connections, durationS);
  const requests = point.rps * durationS;
  const mainMs = (mainThreadCpuMs(pid) ?? Number.NaN) - main0;
  return {
    point,
    cpuPerRequestUs: (((cpuMs(pid) ?? Number.NaN) - cpu0) * 1000) / requests,
    mainThreadUsPerRequest: (mainMs * 1000) / requests,
    mainThreadBusy: mainMs / (durationS * 1000),
  };
}

export interface ThroughputResult {
  /** Highest measured req/s whose p99 stayed under the limit (0 if none). */
  maxRps: number;
  p99AtMax: number;
  connectionsAtMax: number;
  limitMs: number;
  points: CannonPoint[];
}

/**
 * Maximum throughput with p99 under `limitMs`: first as fast as possible with `connections`; if that p99 is
 * over the limit, a bisection over the number of connections (closed loop: fewer connections, less
 * queueing). Rate-limited autocannon runs are not used: autocannon releases each second's budget in a
 * burst, which queues requests at the target and inflates p99 even at low rates.
 */
export async function throughputSearch(
  spec: RequestSpec,
  opts: { connections: number; durationS: number; steps: number; limitMs: number; saturated?: CannonPoint },
): Promise<ThroughputResult> {
  const points: CannonPoint[] = [];
  const ok = (p: CannonPoint) => p.p99 < opts.limitMs && p.errors === 0 && p.non2xx === 0;
  const sat = opts.saturated ?? (await cannon(spec, opts.connections, opts.durationS));
  points.push(sat);
  let best: CannonPoint | undefined = ok(sat) ? sat : undefined;
  if (!best) {
    let lo = 0;
    let hi = opts.connections;
    for (let i = 0; i < opts.steps && hi - lo > 1; i++) {
      const c = Math.max(1, Math.floor((lo + hi) / 2));
      const p = await cannon(spec, c, opts.durationS);
      points.push(p);
      if (ok(p)) {
        if (!best || p.rps > best.rps) best = p;
        lo = c;
      } else hi = c;
    }
  }
  return {
    maxRps: best?.rps ?? 0,
    p99AtMax: best?.p99 ?? Number.NaN,
    connectionsAtMax: best?.connections ?? 0,
    limitMs: opts.limitMs,
    points,
  };
}
