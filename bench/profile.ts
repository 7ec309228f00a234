/**
 * CPU profile of the gateway hot path: Redis + simulator (0 ms) + gateway under `node --cpu-prof`,
 * autocannon load on one surface, then the self-time aggregation of bench/analyse-profile.ts.
 *   node bench/profile.ts [--surface compat|native] [--duration 10] [--dir .cache/prof] [--stateless]
 *     [--connections 50] [--rate N]
 * The gateway is the production pod (dist/, the bench config: caps, limits, logs, usage, the chart's
 * Node flags and memory limit as in bench/lib/pod-runtime.ts); with --stateless, the same config
 * without caps and limits.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis } from '#devkit/redis';
import { describeRuntime, gatewayRuntime } from './lib/pod-runtime.ts';
import { cannon, latencyPoint } from './load.ts';
import { gatewayTarget, startSim } from './targets.ts';

const { values } = parseArgs({
  options: {
    surface: { type: 'string', default: 'compat' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    dir: { type: 'string', default: '.cache/prof' },
    top: { type: 'string', default: '25' },
    stateless: { type: 'boolean', default: false },
    // A fixed request rate (autocannon's overallRate): both variants do the same work per second.
    rate: { type: 'string' },
    'memory-limit': { type: 'string', default: 'chart' },
  },
});
const dir = resolve(values.dir, `${Date.now()}`);
mkdirSync(dir, { recursive: true });
const redis = await startRedis();
const sim = await startSim(0, 64, 20);
const pod = gatewayRuntime(resolve(import.meta.dirname, '..'), { memoryLimit: values['memory-limit'] });
process.stdout.write(`gateway pod: ${describeRuntime(pod.runtime)}\n`);
const gw = await gatewayTarget([sim], redis.url, {
  cpuProfDir: dir,
  variant: values.stateless ? 'stateless' : 'stateful',
  ...pod.process,
});
let requests = 0;
try {
  const surface = gw.surfaces.find((s) => s.name.endsWith(values.surface)) ?? gw.surfaces[0]!;
  const spec = surface.request(sim, false);
  await latencyPoint(spec, 8, 1000);
  const p = await cannon(
    spec,
    Number(values.connections),
    Number(values.duration),
    values.rate ? Number(values.rate) : undefined,
  );
  requests = Math.round(p.rps * Number(values.duration));
  process.stdout.write(
    `${surface.name}: ${Math.round(p.rps)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, ${requests} requests\n`,
  );
} finally {
  await gw.stop();
  await sim.proc.stop();
  await redis.stop();
  pod.process.cgroup?.remove();
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
execFileSync(
  process.execPath,
  [
    join(import.meta.dirname, 'analyse-profile.ts'),
    join(dir, file),
    '--top',
    values.top,
    '--requests',
    String(requests),
  ],
  {
    stdio: 'inherit',
  },
);
