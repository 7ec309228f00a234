/**
 * make bench-pod: memory and start time of a gateway pod as it runs in production, in a minute.
 * The bundled entry point (`node dist/gateway/pod/main.js`, NODE_ENV=production, Node's compile
 * cache as in the image) follows the snapshot the operator's publisher put in Redis; the config has
 * every feature (caps, limits, sessions, cache, async, webhooks: bench/config). Per run and variant:
 * start → first 200 with an empty compile cache (a new pod) and with the cache it left (a restarted
 * container), RSS idle (1 s after the first 200), the main thread's wake-ups and the CPU over the
 * next 5 s with no traffic, RSS peak and CPU per request under `--connections`
 * autocannon connections on the compatible surface, RSS 2 s after the load.
 *   node bench/pod.ts [--runs 3] [--duration 5] [--connections 50] [--root DIR] [--gateway-flags "..."]
 *                     [--memory-limit chart|none|MiB] [--malloc-env chart|none] [--console]
 * With --console each variant runs a second time with the web console served and unused
 * (`SWITCHYARD_CONSOLE=kubernetes`, the bundle in dist/console), as `<variant>+console`.
 * The pod runs with its chart's `gateway.nodeFlags` and memory limit unless told otherwise
 * (bench/lib/pod-runtime.ts).
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis } from '#devkit/redis';
import type { Variant } from './lib/config.ts';
import { describeRuntime, gatewayRuntime } from './lib/pod-runtime.ts';
import { cpuMs, mainThreadWakeups, rssMb, rssSampler } from './lib/rss.ts';
import { cannonWithCpu, latencyPoint, median } from './load.ts';
import { type GatewayTargetOptions, gatewayTarget, type Sim, startSim } from './targets.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    variants: { type: 'string', default: 'stateful,stateless' },
    root: { type: 'string' },
    'gateway-flags': { type: 'string' },
    'memory-limit': { type: 'string', default: 'chart' },
    'malloc-env': { type: 'string', default: 'chart' },
    /** Each variant also with the web console served (the chart's console.enabled), to compare idle RSS. */
    console: { type: 'boolean', default: false },
  },
});

interface PodFigures {
  /** The variant, `+console` when the console was served. */
  variant: string;
  coldStartMs: number;
  warmStartMs: number;
  idleMb: number;
  /** Over IDLE_WINDOW_MS with no traffic, from 1 s after the first 200. */
  idleWakeupsPerS: number;
  idleCpuMsPerS: number;
  peakMb: number;
  afterMb: number;
  rps: number;
  cpuUsPerRequest: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the pod is watched with no traffic, for its wake-ups and CPU at idle. */
const IDLE_WINDOW_MS = 5000;

const root = resolve(values.root ?? join(import.meta.dirname, '..'));
const gw = gatewayRuntime(root, {
  flags: values['gateway-flags'],
  malloc: values['malloc-env'],
  memoryLimit: values['memory-limit'],
});
const base: GatewayTargetOptions = {
  ...(values.root ? { root } : {}),
  ...gw.process,
};
const durationS = Number(values.duration);
const connections = Number(values.connections);

const consoleEnv = {
  SWITCHYARD_CONSOLE: 'kubernetes',
  SWITCHYARD_CONSOLE_DIR: join(root, 'dist/console'),
};

async function measure(
  sim: Sim,
  redisUrl: string,
  variant: Variant,
  withConsole: boolean,
): Promise<PodFigures> {
  const compileCache = mkdtempSync(join(tmpdir(), 'switchyard-pod-cache-'));
  const opts = {
    ...base,
    variant,
    compileCache,
    ...(withConsole ? { env: { ...base.env, ...consoleEnv } } : {}),
  };
  // First start fills the compile cache (a new pod); the second reuses it (a restarted container).
  const cold = await gatewayTarget([sim], redisUrl, opts);
  const coldStartMs = cold.startupMs;
  await cold.stop();
  const t = await gatewayTarget([sim], redisUrl, opts);
  try {
    await sleep(1000);
    const idleMb = rssMb(t.pid) ?? Number.NaN;
    const wake0 = mainThreadWakeups(t.pid) ?? Number.NaN;
    const idleCpu0 = cpuMs(t.pid) ?? Number.NaN;
    await sleep(IDLE_WINDOW_MS);
    const idleWakeupsPerS = (((mainThreadWakeups(t.pid) ?? Number.NaN) - wake0) * 1000) / IDLE_WINDOW_MS;
    const idleCpuMsPerS = (((cpuMs(t.pid) ?? Number.NaN) - idleCpu0) * 1000) / IDLE_WINDOW_MS;
    const rss = rssSampler(t.pid, 50);
    rss.startPeak();
    const spec = t.surfaces[0]!.request(sim, false);
    await latencyPoint(spec, 8, 1000);
    const { point: load, cpuPerRequestUs: cpuUsPerRequest } = await cannonWithCpu(
      t.pid,
      spec,
      connections,
      durationS,
    );
    const peakMb = rss.stopPeak();
    await sleep(2000);
    const afterMb = rssMb(t.pid) ?? Number.NaN;
    rss.close();
    return {
      variant: withConsole ? `${variant}+console` : variant,
      coldStartMs,
      warmStartMs: t.startupMs,
      idleMb,
      idleWakeupsPerS,
      idleCpuMsPerS,
      peakMb,
      afterMb,
      rps: load.rps,
      cpuUsPerRequest,
    };
  } finally {
    await t.stop();
  }
}

const variants = values.variants.split(',').map((v) => v.trim()) as Variant[];
const cases = variants.flatMap((v) =>
  values.console ? [[v, false] as const, [v, true] as const] : [[v, false] as const],
);
const loadStart = loadavg()[0] ?? 0;
const redis = await startRedis();
const sim = await startSim(0, 16, 20);
const all: PodFigures[] = [];
try {
  for (let run = 0; run < Number(values.runs); run++)
    for (const [variant, withConsole] of cases) {
      const x = await measure(sim, redis.url, variant, withConsole);
      all.push(x);
      process.stdout.write(
        `run ${run + 1} ${x.variant}: start ${x.coldStartMs.toFixed(0)} ms (warm cache ${x.warmStartMs.toFixed(0)}), RSS idle ${x.idleMb.toFixed(1)} (${x.idleWakeupsPerS.toFixed(0)} wake-ups/s, ${x.idleCpuMsPerS.toFixed(1)} ms CPU/s) / peak ${x.peakMb.toFixed(1)} / after ${x.afterMb.toFixed(1)} MB, ${Math.round(x.rps)} req/s at c${connections}, ${x.cpuUsPerRequest.toFixed(0)} µs CPU/req (load ${loadavg()[0]?.toFixed(2)})\n`,
      );
    }
} finally {
  await sim.proc.stop();
  await redis.stop();
  gw.process.cgroup?.remove();
}

const lines = [
  `gateway pod (${values.root ? root : 'this checkout'}; ${describeRuntime(gw.runtime)}): medians of ${values.runs} runs; load average ${loadStart.toFixed(2)} at start, ${loadavg()[0]?.toFixed(2)} at end`,
  '',
  '| variant | start → first 200, new pod (ms) | restarted, warm compile cache (ms) | RSS idle (MB) | idle wake-ups / s | idle CPU ms / s | RSS peak c' +
    `${connections} (MB) | RSS after (MB) | req/s c${connections} | CPU µs / request |`,
  '|---|---|---|---|---|---|---|---|---|---|',
];
for (const variant of [...new Set(all.map((x) => x.variant))]) {
  const xs = all.filter((x) => x.variant === variant);
  const m = (k: keyof Omit<PodFigures, 'variant'>) => median(xs.map((x) => x[k]));
  lines.push(
    `| ${variant} | ${m('coldStartMs').toFixed(0)} | ${m('warmStartMs').toFixed(0)} | ${m('idleMb').toFixed(1)} | ${m('idleWakeupsPerS').toFixed(0)} | ${m('idleCpuMsPerS').toFixed(1)} | ${m('peakMb').toFixed(1)} | ${m('afterMb').toFixed(1)} | ${Math.round(m('rps'))} | ${m('cpuUsPerRequest').toFixed(0)} |`,
  );
}
process.stdout.write(`\n${lines.join('\n')}\n`);
