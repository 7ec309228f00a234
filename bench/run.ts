/**
 * make bench: the gateway against its floor (the simulator), its limit (a bare Fastify + undici
 * pass-through) and its peer (Portkey), in one run. Writes bench/results/latest.{json,md}.
 *   node bench/run.ts [--targets direct,passthrough,gateway,portkey] [--delays 0,50] [--duration 5]
 *                     [--quick] [--cpu-prof DIR] [--root DIR] [--gateway-flags "--flag ..."]
 * The gateway rows run the compiled production entry point (`make build` first): --root runs
 * another checkout's dist/ (a before/after comparison on the same machine).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkRedisBinary } from '#devkit/redis';
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

const result = await runBench({
  targets,
  delays: values.delays.split(',').map(Number),
  durationS: values.quick ? 2 : Number(values.duration),
  throughputSteps: values.quick ? 2 : 3,
  p99LimitMs: 50,
  highConcurrency: 50,
  streamChunks: 64,
  chunkIntervalMs: 20,
  streams: values.quick ? 4 : 10,
  streamConcurrency: 5,
  ...(values['cpu-prof'] ? { cpuProfDir: resolve(values['cpu-prof']) } : {}),
  gateway: {
    ...(values.root ? { root: resolve(values.root) } : {}),
    ...(values['gateway-flags'] ? { nodeFlags: values['gateway-flags'].split(/\s+/).filter(Boolean) } : {}),
  },
  log: (line) => process.stdout.write(`${line}\n`),
});

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const md = markdown(result);
writeFileSync(join(out, `${values.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(join(out, `${values.name}.md`), md);
process.stdout.write(`\n${md}\n`);
for (const x of ratios(result)) process.stdout.write(`ratio ${x.label}: ${x.value.toFixed(2)}\n`);
process.stdout.write(`wrote ${join(out, `${values.name}.json`)} and ${values.name}.md\n`);
