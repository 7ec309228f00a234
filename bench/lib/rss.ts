import { readFileSync } from 'node:fs';

/** Samples VmRSS of a process from /proc/<pid>/status (MB). */
export function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface RssSampler {
  /** Current value now. */
  now(): number | undefined;
  /** Starts recording the peak; stopPeak() returns it. */
  startPeak(): void;
  stopPeak(): number;
  close(): void;
}

export function rssSampler(pid: number, intervalMs = 100): RssSampler {
  let peak = 0;
  let recording = false;
  const timer = setInterval(() => {
    if (!recording) return;
    const v = rssMb(pid);
    if (v !== undefined && v > peak) peak = v;
  }, intervalMs);
  timer.unref();
  return {
    now: () => rssMb(pid),
    startPeak() {
      peak = rssMb(pid) ?? 0;
      recording = true;
    },
    stopPeak() {
      recording = false;
      const v = rssMb(pid) ?? 0;
      return Math.max(peak, v);
    },
    close: () => clearInterval(timer),
  };
}

/** CPU time (user + system) so far, in ms, from a /proc stat file (10 ms ticks). */
function statCpuMs(path: string): number | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of a process so far, all its threads, in ms. */
export function cpuMs(pid: number): number | undefined {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU time (user + system) of a process's main thread so far, in ms: the thread that runs the
 * JavaScript, and so bounds a Node process's throughput (GC helpers and the compiler run beside it).
 */
export function mainThreadCpuMs(pid: number): number | undefined {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * Times the main thread of a process has gone to sleep and been woken so far (its voluntary context
 * switches, from /proc/<pid>/task/<pid>/status): each timer tick or event of an idle process is one.
 */
export function mainThreadWakeups(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
