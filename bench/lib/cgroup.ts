import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A memory cgroup with a container's limit, for the gateway process: Node reads the limit at start
 * (libuv's constrained memory) and sizes V8's heap from it, as it does in a pod. Needs root and a
 * memory controller (cgroup v2, or v1's memory hierarchy).
 */
export interface MemoryCgroup {
  dir: string;
  limitMb: number;
  version: 1 | 2;
  /** The command that starts `cmd args` inside the cgroup (the shell execs it: same pid). */
  wrap(cmd: string, args: string[]): { cmd: string; args: string[] };
  /** Removes the cgroup once the processes in it have exited. */
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

/** The cgroup, or why it cannot be made here. */
export function memoryCgroup(
  limitMb: number,
  name = `switchyard-bench-${process.pid}`,
): MemoryCgroup | string {
  const bytes = String(Math.round(limitMb * 2 ** 20));
  let dir: string;
  let version: 1 | 2;
  try {
    const v2 = join(ROOT, 'cgroup.controllers');
    if (existsSync(v2) && readFileSync(v2, 'utf8').split(/\s+/).includes('memory')) {
      version = 2;
      const control = join(ROOT, 'cgroup.subtree_control');
      if (!readFileSync(control, 'utf8').split(/\s+/).includes('memory')) writeFileSync(control, '+memory');
      dir = join(ROOT, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'memory.max'), bytes);
    } else if (existsSync(join(ROOT, 'memory'))) {
      version = 1;
      dir = join(ROOT, 'memory', name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    } else return 'no cgroup memory controller on this machine';
  } catch (err) {
    return `cannot make a memory cgroup here (${err instanceof Error ? err.message : String(err)})`;
  }
  const procs = join(dir, 'cgroup.procs');
  return {
    dir,
    limitMb,
    version,
    wrap: (cmd, args) => ({
      cmd: 'sh',
      args: ['-c', `echo $$ > '${procs}' && exec "$0" "$@"`, cmd, ...args],
    }),
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        // Still holds a process (a kill in flight): the kernel keeps an empty cgroup harmlessly.
      }
    },
  };
}
