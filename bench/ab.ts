/**
 * Two builds of the gateway side by side: CPU per request of each at saturation, measured in turn
 * in the same minutes. On a shared machine one build's CPU per request moves by a fifth between
 * windows seconds apart, so a before/after taken as two runs (`make bench --root`) says little
 * about a change worth a few percent; here both pods are up at once (each on its own Redis, one
 * simulator at 0 ms), each window is preceded by a short unrecorded burst, the order alternates
 * every round, and the ratio is taken within each round.
 *   node bench/ab.ts --a DIR --b DIR [--rounds 8] [--duration 4] [--connections 50]
 *     [--surface compat|native|responses|messages] [--stateless] [--memory-limit chart|none|MiB]
 * DIR is a checkout (or a copy of its dist/, charts/, package.json and a node_modules link) with a
 * built dist/; each pod runs as that checkout's chart says (bench/lib/pod-runtime.ts).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { describeRuntime, gatewayRuntime } from './lib/pod-runtime.ts';
import { cannon, cannonWithCpu, median } from './load.ts';
import { gatewayTarget, type RequestSpec, startSim, type Target } from './targets.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    rounds: { type: 'string', default: '8' },
    duration: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    surface: { type: 'string', default: 'compat' },
    stateless: { type: 'boolean', default: false },
    'memory-limit': { type: 'string', default: 'chart' },
  },
});
if (!values.a || !values.b) throw new Error('--a DIR and --b DIR name the two builds');
const connections = Number(values.connections);
const durationS = Number(values.duration);
const variant = values.stateless ? 'stateless' : 'stateful';

interface Side {
  name: 'A' | 'B';
  target: Target;
  spec: RequestSpec;
  cpu: number[];
  rps: number[];
  cleanup: () => void;
}

const sim = await startSim(0, 64, 20);
const redises: RunningRedis[] = [];
const sides: Side[] = [];
try {
  for (const [name, dir] of [
    ['A', values.a],
    ['B', values.b],
  ] as const) {
    const root = resolve(dir);
    const redis = await startRedis();
    redises.push(redis);
    const pod = gatewayRuntime(root, { memoryLimit: values['memory-limit'] });
    const target = await gatewayTarget([sim], redis.url, { variant, root, ...pod.process });
    const surface = target.surfaces.find((s) => s.name.endsWith(values.surface)) ?? target.surfaces[0]!;
    sides.push({
      name,
      target,
      spec: surface.request(sim, false),
      cpu: [],
      rps: [],
      cleanup: () => pod.process.cgroup?.remove(),
    });
    process.stdout.write(`${name}: ${root} (${surface.name}; ${describeRuntime(pod.runtime)})\n`);
  }
  // A pod's first ~60,000 requests run slower while V8 tiers its code up.
  for (const s of sides) await cannon(s.spec, connections, 10);
  const ratios: number[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
      await cannon(s.spec, connections, 1);
      const w = await cannonWithCpu(s.target.pid, s.spec, connections, durationS);
      s.cpu.push(w.cpuPerRequestUs);
      s.rps.push(w.point.rps);
    }
    const [a, b] = sides as [Side, Side];
    ratios.push(b.cpu.at(-1)! / a.cpu.at(-1)!);
    process.stdout.write(
      `round ${round}: A ${a.cpu.at(-1)!.toFixed(0)} µs, B ${b.cpu.at(-1)!.toFixed(0)} µs per request; B/A ${ratios.at(-1)!.toFixed(3)}\n`,
    );
  }
  const line = (s: Side) =>
    `${s.name} ${median(s.cpu).toFixed(0)} µs/request (${median(s.rps).toFixed(0)} req/s)`;
  const sorted = [...ratios].sort((x, y) => x - y);
  process.stdout.write(
    `${variant} ${values.surface}, medians: ${sides.map(line).join(', ')}; B/A ${median(ratios).toFixed(3)} (rounds ${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})\n`,
  );
} finally {
  for (const s of sides) {
    await s.target.stop();
    s.cleanup();
  }
  for (const r of redises) await r.stop();
  await sim.proc.stop();
}
