import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { type MemoryCgroup, memoryCgroup } from './cgroup.ts';

/**
 * How the chart runs a gateway pod, read from a checkout's charts/switchyard/values.yaml: the Node
 * flags before the entry point, the allocator's environment (jemalloc preloaded, or glibc's malloc
 * settings) and the container's memory limit. The limit matters to speed, not only to memory: Node
 * sizes V8's heap, young generation included, from the cgroup's limit.
 */
export interface PodRuntime {
  nodeFlags: string[];
  mallocEnv: Record<string, string>;
  memoryLimitMb: number | undefined;
  /** Why the chart's allocator is not what the gateway runs with here, when it is not. */
  allocatorNote?: string;
}

/** The chart preloads jemalloc by name, as the image's ld.so finds it: so does this machine's. */
export const JEMALLOC = 'libjemalloc.so.2';
const LIBRARY_DIRS = [
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/usr/lib64',
  '/usr/lib',
  '/usr/local/lib',
];

function allocatorEnv(
  gateway: z.infer<typeof Values>['gateway'],
): Pick<PodRuntime, 'mallocEnv' | 'allocatorNote'> {
  const glibc = gateway?.mallocEnv ?? {};
  if (gateway?.allocator !== 'jemalloc') return { mallocEnv: glibc };
  if (!LIBRARY_DIRS.some((d) => existsSync(join(d, JEMALLOC))))
    return {
      mallocEnv: {},
      allocatorNote: `the chart's jemalloc is not installed here (apt-get install libjemalloc2): glibc malloc with its defaults`,
    };
  return { mallocEnv: { LD_PRELOAD: JEMALLOC, MALLOC_CONF: gateway.jemallocConf ?? '' } };
}

const Values = z.object({
  gateway: z
    .object({
      nodeFlags: z.array(z.string()).optional(),
      allocator: z.enum(['jemalloc', 'glibc']).optional(),
      jemallocConf: z.string().optional(),
      mallocEnv: z.record(z.string(), z.string()).optional(),
      resources: z
        .object({ limits: z.object({ memory: z.union([z.string(), z.number()]).optional() }).optional() })
        .optional(),
    })
    .optional(),
});

const UNITS: Record<string, number> = {
  '': 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  k: 1e3,
  M: 1e6,
  G: 1e9,
};

/** A Kubernetes memory quantity ("512Mi", "1G", "536870912") in MiB. */
export function quantityMb(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(String(q).trim());
  if (!m) throw new Error(`not a memory quantity: ${q}`);
  return (Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1)) / 2 ** 20;
}

export function chartPodRuntime(root: string): PodRuntime {
  const file = join(root, 'charts/switchyard/values.yaml');
  if (!existsSync(file)) return { nodeFlags: [], mallocEnv: {}, memoryLimitMb: undefined };
  const values = Values.parse(parse(readFileSync(file, 'utf8')));
  const memory = values.gateway?.resources?.limits?.memory;
  return {
    nodeFlags: values.gateway?.nodeFlags ?? [],
    ...allocatorEnv(values.gateway),
    memoryLimitMb: memory === undefined ? undefined : quantityMb(memory),
  };
}

/** What the gateway rows ran under, as the report states it. */
export interface GatewayRuntime {
  nodeFlags: string[];
  /** Environment of the gateway process beyond the bench's own (the chart's malloc settings). */
  env: Record<string, string>;
  /** The limit asked for (MiB); undefined for none. */
  memoryLimitMb: number | undefined;
  /** The limit was applied as a cgroup; otherwise `note` says why not. */
  applied: boolean;
  note: string;
}

/** How a bench starts the gateway process: what `gatewayTarget` takes from the pod runtime. */
export interface PodProcess {
  nodeFlags: string[];
  env: Record<string, string>;
  cgroup?: MemoryCgroup;
}

/**
 * The gateway process of a bench run, as the chart of `root` runs it unless told otherwise:
 * `flags` ("" for none) replaces the chart's nodeFlags, `malloc` ("chart" or "none") keeps or drops
 * its malloc settings, `memoryLimit` ("chart", "none" or MiB) its memory limit. The caller removes
 * the cgroup at the end (`process.cgroup?.remove()`).
 */
export function gatewayRuntime(
  root: string,
  opts: { flags?: string | undefined; malloc?: string | undefined; memoryLimit?: string | undefined },
): { runtime: GatewayRuntime; process: PodProcess } {
  const chart = chartPodRuntime(root);
  const nodeFlags = opts.flags === undefined ? chart.nodeFlags : opts.flags.split(/\s+/).filter(Boolean);
  const malloc = opts.malloc ?? 'chart';
  if (malloc !== 'chart' && malloc !== 'none')
    throw new Error(`--malloc-env is chart or none, not ${malloc}`);
  const env = malloc === 'chart' ? chart.mallocEnv : {};
  const allocator = malloc === 'chart' && chart.allocatorNote ? `; ${chart.allocatorNote}` : '';
  const asked = opts.memoryLimit ?? 'chart';
  const limitMb = asked === 'chart' ? chart.memoryLimitMb : asked === 'none' ? undefined : quantityMb(asked);
  const unlimited = (note: string) => ({
    runtime: { nodeFlags, env, memoryLimitMb: limitMb, applied: false, note: `${note}${allocator}` },
    process: { nodeFlags, env },
  });
  if (limitMb === undefined) return unlimited('no memory limit');
  const cg = memoryCgroup(limitMb);
  if (typeof cg === 'string') return unlimited(`memory limit not applied: ${cg}`);
  return {
    runtime: {
      nodeFlags,
      env,
      memoryLimitMb: limitMb,
      applied: true,
      note: `in a cgroup v${cg.version} with memory limit ${limitMb} MiB${allocator}`,
    },
    process: { nodeFlags, env, cgroup: cg },
  };
}

/** One line for a report: the gateway pod's flags, allocator settings and memory limit. */
export function describeRuntime(r: GatewayRuntime): string {
  const flags = r.nodeFlags.length ? r.nodeFlags.join(' ') : 'no Node flags';
  const env = Object.entries(r.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `${flags}; ${env || 'glibc malloc defaults'}; ${r.note}`;
}
