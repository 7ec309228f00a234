import { cpus, loadavg } from 'node:os';
import { startRedis } from '#devkit/redis';
import { type InterleavedResult, measureInterleaved } from './interleaved.ts';
import type { GatewayRuntime } from './lib/pod-runtime.ts';
import { type RssSampler, rssSampler } from './lib/rss.ts';
import {
  asLatencyPoint,
  type CannonPoint,
  cannon,
  cannonWithCpu,
  type LatencyPoint,
  latencyPoint,
  type ThroughputResult,
  throughputSearch,
} from './load.ts';
import { type StreamResult, streamProbe } from './stream-probe.ts';
import {
  directTarget,
  type GatewayTargetOptions,
  gatewayTarget,
  passthroughTarget,
  portkeyTarget,
  type RequestSpec,
  type Sim,
  startSim,
  type Target,
  type TargetName,
} from './targets.ts';

/** One bench run: Redis, simulators, then each target in turn, measured alone. */

export interface BenchOptions {
  delays: number[];
  targets: TargetName[];
  /** Seconds per load point. */
  durationS: number;
  throughputSteps: number;
  p99LimitMs: number;
  highConcurrency: number;
  streamChunks: number;
  chunkIntervalMs: number;
  streams: number;
  streamConcurrency: number;
  /** Seconds of unrecorded load: each surface at the target's start, and again before its rows. */
  warmUp: { targetHighS: number; surfaceHighS: number; c1S: number };
  /** After its rows, a target idles `idleS` and then serves its first surface `burstS` at high concurrency. */
  pause: { idleS: number; burstS: number };
  /**
   * After the targets, the goals that compare targets measured in turn (bench/interleaved.ts), when
   * the pass-through and both gateway variants are among the targets (Portkey too when it is):
   * `rounds` of saturated `windowS` windows each after `rewarmS` unrecorded, all after `warmUpS`
   * per target (the stateful gateway's Responses and Messages surfaces are targets of their own); then
   * per round a `c1WindowS` window at concurrency 1 of the simulator, the gateway, its cache hit and
   * its Responses and Messages surfaces, each after as long unrecorded, and `streamsPerRound` streams
   * of the simulator, the pass-through and the gateway, each target's after one unrecorded.
   */
  interleaved?: {
    rounds: number;
    windowS: number;
    rewarmS: number;
    warmUpS: number;
    c1WindowS: number;
    streamsPerRound: number;
  };
  cpuProfDir?: string;
  /** How the gateway targets run (another checkout's dist/, Node flags, the pod's memory limit). */
  gateway?: Pick<GatewayTargetOptions, 'root' | 'nodeFlags' | 'cgroup' | 'env'>;
  /** The gateway pods' flags and memory limit, as the report states them. */
  gatewayRuntime?: GatewayRuntime;
  log(line: string): void;
}

export interface DelayResult {
  delayMs: number;
  c1: LatencyPoint;
  cHigh: LatencyPoint;
}

export interface SurfaceResult {
  name: string;
  target: string;
  delays: DelayResult[];
  throughput: ThroughputResult;
  /** CPU time (user + system) of the target process per request during the saturated run (delay 0). */
  cpuPerRequestUs: number;
  /**
   * The same run's main thread: its CPU per request, and how busy it was (1 = a whole core). A
   * target whose main thread is well short of 1 at its saturated row is held back by the machine
   * (the load generator and simulator share its cores), not by its own work. Absent in older results.
   */
  mainThread?: { usPerRequest: number; busy: number };
  /** Streams one at a time. */
  stream: StreamResult;
  /** Streams `streamConcurrency` at a time. */
  streamConcurrent: StreamResult;
  /**
   * Concurrency 1 at the first delay with IDLE_PAUSE_MS between requests: the target idles before
   * each one, as before every first token of the one-at-a-time streams. Absent in older results.
   */
  c1Idle?: LatencyPoint;
}

/** The pause of `c1Idle`: the chunk interval of the bench's streams. */
export const IDLE_PAUSE_MS = 20;

/** The first seconds of load after a pause, on the target's first surface (delay 0). */
export interface PauseResult {
  idleS: number;
  burstS: number;
  /** RSS at the end of the pause, before the burst. */
  rssMb: number;
  cpuPerRequestUs: number;
  rps: number;
}

export interface TargetResult {
  name: string;
  startupMs: number;
  rssMb: { idle: number; peak: number; after: number };
  loadavgBefore: number;
  surfaces: SurfaceResult[];
  /** Absent in older results. */
  afterPause?: PauseResult;
}

export interface BenchResult {
  startedAt: string;
  durationS: number;
  machine: {
    cpus: number;
    model: string;
    node: string;
    platform: string;
    loadavgStart: number[];
    loadavgEnd: number[];
    busy: boolean;
    note: string;
  };
  options: Omit<BenchOptions, 'log' | 'cpuProfDir' | 'gateway'>;
  simulatorStartupMs: number;
  targets: TargetResult[];
  /** Absent in older results, and when a run left out one of its targets. */
  interleaved?: InterleavedResult;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Load that is not recorded. V8 reaches its steady-state code only after tens of thousands of
 * requests: measured alone, a gateway pod's CPU per request at 50 connections read ~290, ~195 and
 * ~168 µs in its first three 5 s windows and ~165 from then on; a row measured earlier paid for
 * tiering up rather than for its request path. A switch to another surface, and any pause of some
 * seconds (the previous surface's streams), cost a warm pod its first seconds again (docs/benchmarks-log.md,
 * "Warm pods"). So a target first serves every surface briefly (shared code sees all of them, as in a
 * pod with mixed traffic), then each surface is warmed again just before its rows, at both
 * concurrencies (their hot paths differ: batched writes, timers).
 */
async function warmUpTarget(t: Target, sims: Sim[], o: BenchOptions): Promise<void> {
  for (const s of t.surfaces) {
    const spec = s.request(sims[0]!, false);
    await latencyPoint(spec, 8, 1000);
    await cannon(spec, o.highConcurrency, o.warmUp.targetHighS);
  }
}

async function warmUpSurface(spec: RequestSpec, o: BenchOptions): Promise<void> {
  await cannon(spec, o.highConcurrency, o.warmUp.surfaceHighS);
  await latencyPoint(spec, 1, o.warmUp.c1S * 1000);
}

/**
 * A pod that served and then idled for some seconds runs its next requests slower: V8's memory
 * reducer shrinks an idle heap, and the next load pays for growing it back (docs/benchmarks-log.md,
 * "Idle pods go cold again"). Bursty traffic meets pods in that state, so the bench measures it:
 * CPU per request over the first seconds of load after a pause, against the same surface's
 * saturated row, and what the pause gave back.
 */
async function measurePause(
  t: Target,
  spec: RequestSpec,
  o: BenchOptions,
  rss: RssSampler,
): Promise<PauseResult> {
  await sleep(o.pause.idleS * 1000);
  const rssMb = rss.now() ?? Number.NaN;
  const burst = await cannonWithCpu(t.pid, spec, o.highConcurrency, o.pause.burstS);
  return {
    ...o.pause,
    rssMb: round1(rssMb),
    cpuPerRequestUs: round1(burst.cpuPerRequestUs),
    rps: burst.point.rps,
  };
}

async function measureTarget(t: Target, sims: Sim[], o: BenchOptions): Promise<TargetResult> {
  const rss = rssSampler(t.pid);
  const loadavgBefore = loadavg()[0] ?? 0;
  await sleep(1000);
  const idle = rss.now() ?? 0;
  rss.startPeak();
  await warmUpTarget(t, sims, o);
  const surfaces: SurfaceResult[] = [];
  for (const s of t.surfaces) {
    await warmUpSurface(s.request(sims[0]!, false), o);
    const delays: DelayResult[] = [];
    let saturated: CannonPoint | undefined;
    let cpuPerRequestUs = Number.NaN;
    let mainThread = { usPerRequest: Number.NaN, busy: Number.NaN };
    for (const sim of sims) {
      const spec = s.request(sim, false);
      // Concurrency 1 with the µs client; the high-concurrency point with autocannon (the undici
      // client in this process tops out near 3k req/s, below what the simulator serves).
      const c1 = await latencyPoint(spec, 1, o.durationS * 1000);
      const run = await cannonWithCpu(t.pid, spec, o.highConcurrency, o.durationS);
      const high = run.point;
      if (sim === sims[0]) {
        saturated = high;
        cpuPerRequestUs = run.cpuPerRequestUs;
        mainThread = { usPerRequest: round1(run.mainThreadUsPerRequest), busy: round2(run.mainThreadBusy) };
      }
      const cHigh = asLatencyPoint(high, o.durationS);
      delays.push({ delayMs: sim.delayMs, c1, cHigh });
      o.log(
        `  ${s.name} @${sim.delayMs}ms: c1 p50 ${c1.p50.toFixed(3)} p99 ${c1.p99.toFixed(3)} ms; c${o.highConcurrency} p50 ${cHigh.p50.toFixed(2)} p99 ${cHigh.p99.toFixed(2)} ms, ${Math.round(cHigh.rps)} req/s${c1.errors + cHigh.errors ? ` (${c1.errors + cHigh.errors} errors)` : ''}`,
      );
    }
    const c1Idle = await latencyPoint(s.request(sims[0]!, false), 1, o.durationS * 1000, IDLE_PAUSE_MS);
    o.log(
      `  ${s.name}: c1 p50 ${c1Idle.p50.toFixed(3)} ms with ${IDLE_PAUSE_MS} ms idle before each request`,
    );
    const throughput = await throughputSearch(s.request(sims[0]!, false), {
      connections: o.highConcurrency,
      durationS: o.durationS,
      steps: o.throughputSteps,
      limitMs: o.p99LimitMs,
      ...(saturated ? { saturated } : {}),
    });
    o.log(
      `  ${s.name}: max ${Math.round(throughput.maxRps)} req/s with p99 < ${o.p99LimitMs} ms; ${cpuPerRequestUs.toFixed(0)} µs CPU per request, main thread ${mainThread.usPerRequest.toFixed(0)} µs (${Math.round(mainThread.busy * 100)} % of a core)`,
    );
    // The streaming path's JIT warm-up, not recorded (as the plain warm-up above): otherwise the
    // first row measured pays for compiling the SSE parser and encoders in its TTFT.
    await streamProbe(s.request(sims[0]!, true), o.streamConcurrency, o.streamConcurrency);
    // One stream at a time for the time to first token (the goal figure), then several at once.
    const stream = await streamProbe(s.request(sims[0]!, true), o.streams, 1);
    const streamConcurrent = await streamProbe(s.request(sims[0]!, true), o.streams, o.streamConcurrency);
    o.log(
      `  ${s.name}: stream TTFT p50 ${stream.ttft.p50.toFixed(2)} ms (${o.streamConcurrency} at a time: ${streamConcurrent.ttft.p50.toFixed(2)} ms), gap p99 ${stream.gap.p99.toFixed(2)} ms, ${stream.eventsPerStream.toFixed(0)} events/stream${stream.errors ? `, ${stream.errors} errors (${stream.firstError})` : ''}`,
    );
    surfaces.push({
      name: s.name,
      target: t.name,
      delays,
      throughput,
      cpuPerRequestUs,
      mainThread,
      stream,
      streamConcurrent,
      c1Idle,
    });
  }
  await sleep(2000);
  const after = rss.now() ?? 0;
  const first = t.surfaces[0];
  const afterPause = first ? await measurePause(t, first.request(sims[0]!, false), o, rss) : undefined;
  if (afterPause)
    o.log(
      `  ${t.name}: ${afterPause.cpuPerRequestUs.toFixed(0)} µs CPU per request in the first ${afterPause.burstS} s after ${afterPause.idleS} s idle (RSS ${afterPause.rssMb.toFixed(0)} MB before)`,
    );
  const peak = rss.stopPeak();
  rss.close();
  return {
    name: t.name,
    startupMs: round1(t.startupMs),
    rssMb: { idle: round1(idle), peak: round1(peak), after: round1(after) },
    loadavgBefore,
    surfaces,
    ...(afterPause ? { afterPause } : {}),
  };
}

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const t0 = performance.now();
  const loadavgStart = loadavg();
  const redis = await startRedis();
  const sims: Sim[] = [];
  const results: TargetResult[] = [];
  let interleaved: InterleavedResult | undefined;
  try {
    for (const d of o.delays) sims.push(await startSim(d, o.streamChunks, o.chunkIntervalMs));
    o.log(`redis ${redis.url}; simulators ${sims.map((s) => `${s.origin} (${s.delayMs} ms)`).join(', ')}`);
    for (const name of o.targets) {
      o.log(`${name}: starting (load average ${loadavg()[0]?.toFixed(2)})`);
      const t =
        name === 'direct'
          ? directTarget(sims)
          : name === 'passthrough'
            ? await passthroughTarget(sims)
            : name === 'gateway' || name === 'stateless'
              ? await gatewayTarget(sims, redis.url, {
                  ...o.gateway,
                  variant: name === 'stateless' ? 'stateless' : 'stateful',
                  ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}),
                })
              : await portkeyTarget(sims);
      o.log(`${name}: first 200 after ${t.startupMs.toFixed(0)} ms`);
      try {
        results.push(await measureTarget(t, sims, o));
      } finally {
        await t.stop();
      }
    }
    const pairs = ['passthrough', 'stateless', 'gateway'] as const;
    if (o.interleaved && pairs.every((n) => o.targets.includes(n))) {
      const also = o.targets.includes('portkey') ? ', portkey' : '';
      o.log(`interleaved: ${pairs.join(', ')}${also} (load average ${loadavg()[0]?.toFixed(2)})`);
      interleaved = await measureInterleaved(sims, {
        ...o.interleaved,
        connections: o.highConcurrency,
        portkey: o.targets.includes('portkey'),
        ...(o.gateway ? { gateway: o.gateway } : {}),
        log: o.log,
      });
    }
  } finally {
    for (const s of sims) await s.proc.stop();
    await redis.stop();
  }
  const loadavgEnd = loadavg();
  const cpuCount = cpus().length;
  // Our own processes keep about 2 CPUs busy while measuring, so the start figure is the one that says
  // whether something else was running.
  const busy = (loadavgStart[0] ?? 0) > 0.5 * cpuCount;
  const { log: _log, cpuProfDir: _prof, gateway: _gw, ...options } = o;
  return {
    startedAt: new Date(Date.now() - (performance.now() - t0)).toISOString(),
    durationS: Math.round((performance.now() - t0) / 1000),
    machine: {
      cpus: cpuCount,
      model: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadavgStart,
      loadavgEnd,
      busy,
      note: busy
        ? `The machine was busy before the run started (1-min load average ${loadavgStart[0]?.toFixed(2)} on ${cpuCount} CPUs): figures are pessimistic and noisy.`
        : 'The machine was quiet when the run started.',
    },
    options,
    simulatorStartupMs: round1(sims[0]?.startupMs ?? 0),
    targets: results,
    ...(interleaved ? { interleaved } : {}),
  };
}
