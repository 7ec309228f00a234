/**
 * CPU profile of the gateway hot path: Redis + simulator (0 ms) + gateway with its inspector open,
 * autocannon load on one surface, then the self-time aggregation of bench/analyse-profile.ts.
 *   node bench/profile.ts [--surface compat|native] [--duration 10] [--warm-up 15] [--dir .cache/prof]
 *     [--stateless] [--connections 50] [--rate N]
 * The gateway is the production pod (dist/, the bench config: caps, limits, logs, usage, the chart's
 * Node flags and memory limit as in bench/lib/pod-runtime.ts); with --stateless, the same config
 * without caps and limits. The profile covers the measured load only: the pod first serves
 * `--warm-up` seconds of the same load, unrecorded, so its code is optimized as in a pod that has
 * been serving (`--warm-up 0` profiles a fresh pod's first requests).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '#devkit/ports';
import { startRedis } from '#devkit/redis';
import { profileWhile } from './lib/inspector.ts';
import { describeRuntime, gatewayRuntime } from './lib/pod-runtime.ts';
import { cannon, latencyPoint } from './load.ts';
import { gatewayTarget, startSim } from './targets.ts';

const { values } = parseArgs({
  options: {
    surface: { type: 'string', default: 'compat' },
    duration: { type: 'string', default: '10' },
    'warm-up': { type: 'string', default: '15' },
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
const inspectPort = await freePort();
const gw = await gatewayTarget([sim], redis.url, {
  inspectPort,
  variant: values.stateless ? 'stateless' : 'stateful',
  ...pod.process,
});
const file = join(dir, 'gateway.cpuprofile');
let requests = 0;
try {
  const surface = gw.surfaces.find((s) => s.name.endsWith(values.surface)) ?? gw.surfaces[0]!;
  const spec = surface.request(sim, false);
  const load = (seconds: number) =>
    cannon(spec, Number(values.connections), seconds, values.rate ? Number(values.rate) : undefined);
  await latencyPoint(spec, 8, 1000);
  const warmUpS = Number(values['warm-up']);
  if (warmUpS > 0) {
    const w = await load(warmUpS);
    process.stdout.write(`warm-up: ${Math.round(w.rps * warmUpS)} requests in ${warmUpS} s, not profiled\n`);
  }
  const profile = await profileWhile(inspectPort, async () => {
    const p = await load(Number(values.duration));
    requests = Math.round(p.rps * Number(values.duration));
    process.stdout.write(
      `${surface.name}: ${Math.round(p.rps)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, ${requests} requests\n`,
    );
  });
  writeFileSync(file, profile);
} finally {
  await gw.stop();
  await sim.proc.stop();
  await redis.stop();
  pod.process.cgroup?.remove();
}
execFileSync(
  process.execPath,
  [
    join(import.meta.dirname, 'analyse-profile.ts'),
    file,
    '--top',
    values.top,
    '--requests',
    String(requests),
  ],
  {
    stdio: 'inherit',
  },
);
