import { startRedis } from '#devkit/redis';
import { cannon, cannonWithCpu, median } from './load.ts';
import {
  type GatewayTargetOptions,
  gatewayTarget,
  passthroughTarget,
  type Sim,
  type Target,
} from './targets.ts';

/**
 * The two goals that are ratios of targets (CPU per request against the stateless gateway,
 * throughput against the pass-through), measured in one stretch. The rows above measure each target
 * minutes after the other, and on a shared 2-vCPU machine one build's CPU per request moves by a
 * third between runs, so a ratio of two rows is mostly the machine's drift. Here the three targets
 * are up at once (each gateway on its own Redis: a snapshot is per Redis) and serve the compatible
 * surface saturated at the bench's connections in turn, the order reversed every round; each window
 * is preceded by a short unrecorded burst, since a pod that idled while the others ran is slower for
 * its first second. A ratio is taken within each round, from windows seconds apart, and the report
 * gives the median over the rounds.
 */

export const INTERLEAVED_TARGETS = ['passthrough', 'gateway stateless compat', 'gateway compat'] as const;
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

export interface InterleavedResult {
  rounds: number;
  windowS: number;
  rewarmS: number;
  warmUpS: number;
  connections: number;
  windows: InterleavedWindow[];
}

export interface InterleavedOptions {
  rounds: number;
  windowS: number;
  rewarmS: number;
  warmUpS: number;
  connections: number;
  gateway?: Pick<GatewayTargetOptions, 'root' | 'nodeFlags' | 'cgroup' | 'env'>;
  log(line: string): void;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export async function measureInterleaved(sims: Sim[], o: InterleavedOptions): Promise<InterleavedResult> {
  const sim = sims[0]!;
  const redises = [await startRedis(), await startRedis()];
  const started: Target[] = [];
  try {
    started.push(await passthroughTarget(sims));
    started.push(await gatewayTarget(sims, redises[0]!.url, { ...o.gateway, variant: 'stateless' }));
    started.push(await gatewayTarget(sims, redises[1]!.url, { ...o.gateway, variant: 'stateful' }));
    const targets = started.map((t, i) => ({
      name: INTERLEAVED_TARGETS[i]!,
      pid: t.pid,
      spec: t.surfaces[0]!.request(sim, false),
    }));
    for (const t of targets) await cannon(t.spec, o.connections, o.warmUpS);
    const windows: InterleavedWindow[] = [];
    for (let round = 0; round < o.rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
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
      const mine = windows.filter((w) => w.round === round);
      o.log(
        `  interleaved round ${round + 1}: ${mine.map((w) => `${w.target} ${w.rps} req/s ${w.cpuPerRequestUs.toFixed(0)} µs`).join('; ')}`,
      );
    }
    return {
      rounds: o.rounds,
      windowS: o.windowS,
      rewarmS: o.rewarmS,
      warmUpS: o.warmUpS,
      connections: o.connections,
      windows,
    };
  } finally {
    for (const t of started) await t.stop();
    for (const r of redises) await r.stop();
  }
}

/** Per round, `value(a) / value(b)` from that round's windows; the median over the rounds. */
export function roundRatio(
  r: InterleavedResult,
  a: InterleavedTarget,
  b: InterleavedTarget,
  value: (w: InterleavedWindow) => number,
): { median: number; perRound: number[] } {
  const perRound: number[] = [];
  for (let round = 0; round < r.rounds; round++) {
    const wa = r.windows.find((w) => w.round === round && w.target === a);
    const wb = r.windows.find((w) => w.round === round && w.target === b);
    if (wa && wb) perRound.push(value(wa) / value(wb));
  }
  return { median: median(perRound), perRound };
}
