import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { type MemoryCgroup, memoryCgroup } from './cgroup.ts';

/**
 * How the chart runs a gateway pod, read from a checkout's charts/switchyard/values.yaml: the Node
 * flags before the entry point and the container's memory limit. The limit matters to speed, not
 * only to memory: Node sizes V8's heap, young generation included, from the cgroup's limit.
 */
export interface PodRuntime {
  nodeFlags: string[];
  memoryLimitMb: number | undefined;
}

const Values = z.object({
  gateway: z
    .object({
      nodeFlags: z.array(z.string()).optional(),
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
  if (!existsSync(file)) return { nodeFlags: [], memoryLimitMb: undefined };
  const values = Values.parse(parse(readFileSync(file, 'utf8')));
  const memory = values.gateway?.resources?.limits?.memory;
  return {
    nodeFlags: values.gateway?.nodeFlags ?? [],
    memoryLimitMb: memory === undefined ? undefined : quantityMb(memory),
  };
}

/** What the gateway rows ran under, as the report states it. */
export interface GatewayRuntime {
  nodeFlags: string[];
  /** The limit asked for (MiB); undefined for none. */
  memoryLimitMb: number | undefined;
  /** The limit was applied as a cgroup; otherwise `note` says why not. */
  applied: boolean;
  note: string;
}

/**
 * The gateway process of a bench run, as the chart of `root` runs it unless told otherwise:
 * `flags` ("" for none) replaces the chart's nodeFlags, `memoryLimit` ("chart", "none" or MiB) its
 * memory limit. The caller removes the cgroup at the end.
 */
export function gatewayRuntime(
  root: string,
  opts: { flags?: string | undefined; memoryLimit?: string | undefined },
): { runtime: GatewayRuntime; nodeFlags: string[]; cgroup: MemoryCgroup | undefined } {
  const chart = chartPodRuntime(root);
  const nodeFlags = opts.flags === undefined ? chart.nodeFlags : opts.flags.split(/\s+/).filter(Boolean);
  const asked = opts.memoryLimit ?? 'chart';
  const limitMb = asked === 'chart' ? chart.memoryLimitMb : asked === 'none' ? undefined : quantityMb(asked);
  if (limitMb === undefined)
    return {
      runtime: { nodeFlags, memoryLimitMb: undefined, applied: false, note: 'no memory limit' },
      nodeFlags,
      cgroup: undefined,
    };
  const cg = memoryCgroup(limitMb);
  if (typeof cg === 'string')
    return {
      runtime: { nodeFlags, memoryLimitMb: limitMb, applied: false, note: `memory limit not applied: ${cg}` },
      nodeFlags,
      cgroup: undefined,
    };
  return {
    runtime: {
      nodeFlags,
      memoryLimitMb: limitMb,
      applied: true,
      note: `in a cgroup v${cg.version} with memory limit ${limitMb} MiB`,
    },
    nodeFlags,
    cgroup: cg,
  };
}

/** One line for a report: the gateway pod's flags and memory limit. */
export function describeRuntime(r: GatewayRuntime): string {
  const flags = r.nodeFlags.length ? r.nodeFlags.join(' ') : 'no Node flags';
  return `${flags}; ${r.note}`;
}
