/**
 * make bench: the gateway against its floor (the simulator), its limit (a bare Fastify + undici
 * pass-through) and its peer (Portkey), in one run. Writes bench/results/latest.{json,md}.
 *   node bench/run.ts [--targets direct,passthrough,gateway,portkey] [--delays 0,50] [--duration 5]
 *                     [--quick] [--cpu-prof DIR] [--root DIR] [--gateway-flags "--flag ..."]
 *                     [--memory-limit chart|none|MiB] [--malloc-env chart|none]
 * The gateway rows run the compiled production entry point (`make build` first) as the chart runs
 * it: its `gateway.nodeFlags` and, where this machine allows a memory cgroup, its container memory
 * limit (bench/lib/pod-runtime.ts). --root runs another checkout's dist/ under that checkout's
 * chart (a before/after comparison on the same machine); --gateway-flags replaces the flags.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkRedisBinary } from '#devkit/redis';
import { describeRuntime, gatewayRuntime } from './lib/pod-runtime.ts';
import { runBench } from './orchestrator.ts';
import { markdown, ratios } from './report.ts';
import { TARGET_NAMES, type TargetName } from './targets.ts';

const { values } = parseArgs({
  options: {
    targets: { type: 'string', default: TARGET_NAMES.join(',') },
    delays: { type: 'string', default: '0,50' },
    duration: { type: 'string', default: '5' },
    quick: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    out: { type: 'string', default: join(import.meta.dirname, 'results') },
    name: { type: 'string', default: 'latest' },
    root: { type: 'string' },
    'gateway-flags': { type: 'string' },
    'memory-limit': { type: 'string', default: 'chart' },
    'malloc-env': { type: 'string', default: 'chart' },
  },
});

const targets = values.targets.split(',').map((t) => t.trim()) as TargetName[];
for (const t of targets) if (!TARGET_NAMES.includes(t)) throw new Error(`unknown target ${t}`);
try {
  checkRedisBinary();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}

const root = resolve(values.root ?? join(import.meta.dirname, '..'));
const gw = gatewayRuntime(root, {
  flags: values['gateway-flags'],
  malloc: values['malloc-env'],
  memoryLimit: values['memory-limit'],
});
process.stdout.write(`gateway pods: ${describeRuntime(gw.runtime)}\n`);
const result = await runBench({
  targets,
  delays: values.delays.split(',').map(Number),
  durationS: values.quick ? 2 : Number(values.duration),
  throughputSteps: values.quick ? 2 : 3,
  warmUp: values.quick
    ? { targetHighS: 1, surfaceHighS: 1, c1S: 1 }
    : { targetHighS: 2, surfaceHighS: 5, c1S: 3 },
  pause: values.quick ? { idleS: 2, burstS: 1 } : { idleS: 15, burstS: 3 },
  interleaved: values.quick
    ? { rounds: 2, windowS: 2, rewarmS: 1, warmUpS: 2, c1WindowS: 1, streamsPerRound: 1 }
    : { rounds: 6, windowS: 4, rewarmS: 1, warmUpS: 10, c1WindowS: 2, streamsPerRound: 3 },
  p99LimitMs: 50,
  highConcurrency: 50,
  streamChunks: 64,
  chunkIntervalMs: 20,
  streams: values.quick ? 4 : 10,
  streamConcurrency: 5,
  ...(values['cpu-prof'] ? { cpuProfDir: resolve(values['cpu-prof']) } : {}),
  gateway: {
    ...(values.root ? { root } : {}),
    ...gw.process,
  },
  gatewayRuntime: gw.runtime,
  log: (line) => process.stdout.write(`${line}\n`),
}).finally(() => gw.process.cgroup?.remove());

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const md = markdown(result);
writeFileSync(join(out, `${values.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(join(out, `${values.name}.md`), md);
process.stdout.write(`\n${md}\n`);
for (const x of ratios(result)) process.stdout.write(`ratio ${x.label}: ${x.value.toFixed(2)}\n`);
process.stdout.write(`wrote ${join(out, `${values.name}.json`)} and ${values.name}.md\n`);
