import { startRedis } from '#devkit/redis';
import { cannon, cannonWithCpu, latencyPoint, median, percentiles } from './load.ts';
import { streamProbe } from './stream-probe.ts';
import {
  directTarget,
  type GatewayTargetOptions,
  gatewayTarget,
  passthroughTarget,
  portkeyTarget,
  type RequestSpec,
  type Sim,
  type Target,
} from './targets.ts';

/**
 * The goals that compare targets, measured in one stretch. The rows above measure each target
 * minutes after the other, and on a shared 2-vCPU machine one build's CPU per request moves by a
 * third between runs, so a ratio or a difference of two rows is mostly the machine's drift. Here
 * the targets are up at once (each gateway on its own Redis: a snapshot is per Redis) and are
 * measured in turn, the order reversed every round:
 * - saturated windows of the compatible surface at the bench's connections, for the ratio goals
 *   (CPU per request against the stateless gateway; throughput against the pass-through and
 *   Portkey); each preceded by a short unrecorded burst, since a pod that idled while the others
 *   ran is slower for its first second;
 * - windows at concurrency 1 of the simulator itself and of the stateful gateway (a plain request
 *   and a cache hit), for the added-latency goals;
 * - the same saturated and concurrency-1 windows of the stateful gateway's Responses and Messages
 *   surfaces (the same workflow), for their goals against chat completions;
 * - streams one at a time, straight from the simulator and through the stateful gateway, for the
 *   time-to-first-token overhead.
 * Every recorded window and set of streams follows unrecorded load of the same kind on the same
 * target.
 * A ratio or a difference is taken within each round, from windows seconds apart, and the report
 * gives the median over the rounds; first-token times are pooled over the rounds (a round has only a
 * few streams) and their p50s compared.
 */

export const INTERLEAVED_TARGETS = [
  'passthrough',
  'gateway stateless compat',
  'gateway compat',
  'gateway responses',
  'gateway messages',
  'gateway guarded',
  'portkey',
] as const;
export type InterleavedTarget = (typeof INTERLEAVED_TARGETS)[number];

export interface InterleavedWindow {
  target: InterleavedTarget;
  round: number;
  rps: number;
  p99: number;
  errors: number;
  cpuPerRequestUs: number;
  mainThreadUsPerRequest: number;
  mainThreadBusy: number;
}

/** What the latency windows and the streams are taken of. */
export const LATENCY_TARGETS = [
  'direct',
  'gateway compat',
  'gateway cache hit',
  'gateway responses',
  'gateway messages',
  'gateway guarded',
] as const;
export type LatencyTarget = (typeof LATENCY_TARGETS)[number];

/** One window at concurrency 1 (milliseconds). */
export interface InterleavedLatency {
  target: LatencyTarget;
  round: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
}

/**
 * What the streams are taken of: the simulator, the gateway, and the bare pass-through as the
 * reference for what one more hop costs the first token on this machine (no goal of its own).
 */
export type StreamTarget = 'direct' | 'passthrough' | 'gateway compat';

/** One round's streams of one target, one at a time: each one's time to first token (ms). */
export interface InterleavedStreams {
  target: StreamTarget;
  round: number;
  ttftMs: number[];
  errors: number;
}

export interface InterleavedResult {
  rounds: number;
  windowS: number;
  rewarmS: number;
  warmUpS: number;
  connections: number;
  windows: InterleavedWindow[];
  /** Seconds per window at concurrency 1. Absent, with `latency` and `streams`, in older results. */
  c1WindowS?: number;
  latency?: InterleavedLatency[];
  streamsPerRound?: number;
  streams?: InterleavedStreams[];
}

export interface InterleavedOptions {
  rounds: number;
  windowS: number;
  rewarmS: number;
  warmUpS: number;
  connections: number;
  /** Seconds per window at concurrency 1, each after as long unrecorded. */
  c1WindowS: number;
  /** Streams per round and target, one at a time. */
  streamsPerRound: number;
  /** Portkey among the saturated targets (when the run has it). */
  portkey: boolean;
  gateway?: Pick<GatewayTargetOptions, 'root' | 'nodeFlags' | 'cgroup' | 'env'>;
  log(line: string): void;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

const surface = (t: Target, name: string) => {
  const found = t.surfaces.find((x) => x.name === name);
  if (!found) throw new Error(`${t.name} has no surface ${name}`);
  return found;
};

export async function measureInterleaved(sims: Sim[], o: InterleavedOptions): Promise<InterleavedResult> {
  const sim = sims[0]!;
  const redises = [await startRedis(), await startRedis()];
  const started: Target[] = [];
  try {
    const passthrough = await passthroughTarget(sims);
    started.push(passthrough);
    const stateless = await gatewayTarget(sims, redises[0]!.url, { ...o.gateway, variant: 'stateless' });
    started.push(stateless);
    const gateway = await gatewayTarget(sims, redises[1]!.url, { ...o.gateway, variant: 'stateful' });
    started.push(gateway);
    const portkey = o.portkey ? await portkeyTarget(sims) : undefined;
    if (portkey) started.push(portkey);
    const plain = (name: InterleavedTarget, t: Target, s = t.surfaces[0]!) => ({
      name,
      pid: t.pid,
      spec: s.request(sim, false),
    });
    const compat = surface(gateway, 'gateway compat');
    const responses = surface(gateway, 'gateway responses');
    const messages = surface(gateway, 'gateway messages');
    const guarded = surface(gateway, 'gateway guarded');
    // The stateful pod's three surfaces are windows of their own, on the same process.
    const targets = [
      plain('passthrough', passthrough),
      plain('gateway stateless compat', stateless),
      plain('gateway compat', gateway, compat),
      plain('gateway responses', gateway, responses),
      plain('gateway messages', gateway, messages),
      plain('gateway guarded', gateway, guarded),
      ...(portkey ? [plain('portkey', portkey)] : []),
    ];
    const direct = directTarget(sims).surfaces[0]!;
    const c1: { name: LatencyTarget; spec: RequestSpec }[] = [
      { name: 'direct', spec: direct.request(sim, false) },
      { name: 'gateway compat', spec: compat.request(sim, false) },
      { name: 'gateway cache hit', spec: surface(gateway, 'gateway cache hit').request(sim, false) },
      { name: 'gateway responses', spec: responses.request(sim, false) },
      { name: 'gateway messages', spec: messages.request(sim, false) },
      { name: 'gateway guarded', spec: guarded.request(sim, false) },
    ];
    const streamed: { name: StreamTarget; spec: RequestSpec }[] = [
      { name: 'direct', spec: direct.request(sim, true) },
      { name: 'passthrough', spec: passthrough.surfaces[0]!.request(sim, true) },
      { name: 'gateway compat', spec: compat.request(sim, true) },
    ];
    for (const t of targets) await cannon(t.spec, o.connections, o.warmUpS);
    for (const t of c1) await latencyPoint(t.spec, 1, o.c1WindowS * 1000);
    for (const t of streamed) await streamProbe(t.spec, 2, 1);
    const windows: InterleavedWindow[] = [];
    const latency: InterleavedLatency[] = [];
    const streams: InterleavedStreams[] = [];
    const inTurn = <T>(xs: T[], round: number) => (round % 2 === 0 ? xs : [...xs].reverse());
    for (let round = 0; round < o.rounds; round++) {
      for (const t of inTurn(targets, round)) {
        await cannon(t.spec, o.connections, o.rewarmS);
        const run = await cannonWithCpu(t.pid, t.spec, o.connections, o.windowS);
        windows.push({
          target: t.name,
          round,
          rps: Math.round(run.point.rps),
          p99: run.point.p99,
          errors: run.point.errors + run.point.non2xx,
          cpuPerRequestUs: round1(run.cpuPerRequestUs),
          mainThreadUsPerRequest: round1(run.mainThreadUsPerRequest),
          mainThreadBusy: Math.round(run.mainThreadBusy * 100) / 100,
        });
      }
      for (const t of inTurn(c1, round)) {
        // As long as the window itself: a pod that sat idle while the others served answers its
        // first requests at concurrency 1 slowly (after a quarter of a window unrecorded, the added
        // p50 read 0.44-0.90 ms over six rounds where the row, after 8 s of warm-up, read 0.46).
        await latencyPoint(t.spec, 1, o.c1WindowS * 1000);
        const p = await latencyPoint(t.spec, 1, o.c1WindowS * 1000);
        latency.push({
          target: t.name,
          round,
          p50: round3(p.p50),
          p99: round3(p.p99),
          requests: p.requests,
          errors: p.errors,
        });
      }
      for (const t of inTurn(streamed, round)) {
        const ttftMs: number[] = [];
        let errors = 0;
        await streamProbe(t.spec, 1, 1);
        // One stream per probe, so each first-token time is kept, not only a percentile of them.
        for (let i = 0; i < o.streamsPerRound; i++) {
          const p = await streamProbe(t.spec, 1, 1);
          if (p.streams === 1) ttftMs.push(round3(p.ttft.p50));
          errors += p.errors;
        }
        streams.push({ target: t.name, round, ttftMs, errors });
      }
      const mine = windows.filter((w) => w.round === round);
      const lat = latency.filter((w) => w.round === round);
      o.log(
        `  interleaved round ${round + 1}: ${mine.map((w) => `${w.target} ${w.rps} req/s ${w.cpuPerRequestUs.toFixed(0)} µs`).join('; ')}; c1 p50 ${lat.map((w) => `${w.target} ${w.p50.toFixed(3)}`).join(', ')} ms`,
      );
    }
    return {
      rounds: o.rounds,
      windowS: o.windowS,
      rewarmS: o.rewarmS,
      warmUpS: o.warmUpS,
      connections: o.connections,
      windows,
      c1WindowS: o.c1WindowS,
      latency,
      streamsPerRound: o.streamsPerRound,
      streams,
    };
  } finally {
    for (const t of started) await t.stop();
    for (const r of redises) await r.stop();
  }
}

/**
 * For each round, `combine` of that round's `a` and `b` entries (a round lacking either, or where
 * `combine` gives undefined, is left out); the median over the rounds.
 */
function perRound<W extends { round: number; target: string }>(
  rounds: number,
  entries: readonly W[],
  a: W['target'],
  b: W['target'],
  combine: (wa: W, wb: W) => number | undefined,
): { median: number; perRound: number[] } {
  const out: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const wa = entries.find((w) => w.round === round && w.target === a);
    const wb = entries.find((w) => w.round === round && w.target === b);
    const v = wa && wb ? combine(wa, wb) : undefined;
    if (v !== undefined) out.push(v);
  }
  return { median: median(out), perRound: out };
}

/** Per round, `value(a) / value(b)` from that round's windows; the median over the rounds. */
export function roundRatio(
  r: InterleavedResult,
  a: InterleavedTarget,
  b: InterleavedTarget,
  value: (w: InterleavedWindow) => number,
): { median: number; perRound: number[] } {
  return perRound(r.rounds, r.windows, a, b, (wa, wb) => value(wa) / value(wb));
}

/** Per round, `a`'s latency minus `b`'s at quantile `q` (ms); the median over the rounds. */
export function roundDifference(
  r: InterleavedResult,
  a: LatencyTarget,
  b: LatencyTarget,
  q: 'p50' | 'p99',
): { median: number; perRound: number[] } {
  return perRound(r.rounds, r.latency ?? [], a, b, (wa, wb) =>
    wa.requests > 0 && wb.requests > 0 ? wa[q] - wb[q] : undefined,
  );
}

/**
 * Per round, what `a` adds over the simulator as a multiple of what `base` adds, at concurrency 1
 * and quantile `q` (a surface's added latency over chat completions'); the median over the rounds.
 */
export function roundAddedRatio(
  r: InterleavedResult,
  a: LatencyTarget,
  base: LatencyTarget,
  q: 'p50' | 'p99',
): { median: number; perRound: number[] } {
  const latency = r.latency ?? [];
  return perRound(r.rounds, latency, a, base, (wa, wb) => {
    const direct = latency.find((w) => w.round === wa.round && w.target === 'direct');
    if (!direct || direct.requests === 0 || wa.requests === 0 || wb.requests === 0) return undefined;
    return (wa[q] - direct[q]) / (wb[q] - direct[q]);
  });
}

/**
 * Time to first token through the gateway over the simulator's own: the p50 of each target's
 * streams pooled over the rounds (a round holds a few streams each), and their difference (ms);
 * the pass-through's the same way (NaN in results from before it was streamed).
 */
export function ttftOverhead(r: InterleavedResult): {
  gateway: number;
  direct: number;
  overhead: number;
  streams: number;
  passthrough: number;
  passthroughOverhead: number;
} {
  const pooled = (t: StreamTarget) =>
    (r.streams ?? []).filter((s) => s.target === t).flatMap((s) => s.ttftMs);
  const p50 = (xs: number[]) => (xs.length ? percentiles(xs).p50 : Number.NaN);
  const gw = pooled('gateway compat');
  const direct = pooled('direct');
  const gateway = p50(gw);
  const simulator = p50(direct);
  const passthrough = p50(pooled('passthrough'));
  return {
    gateway,
    direct: simulator,
    overhead: gateway - simulator,
    streams: Math.min(gw.length, direct.length),
    passthrough,
    passthroughOverhead: passthrough - simulator,
  };
}
