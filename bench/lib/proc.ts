import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'undici';
import { stopChild } from '#devkit/child';
import { freePort } from '#devkit/ports';

/** Child processes of a bench run: spawn, log tail, wait for a first 200, stop. */

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** performance.now() at spawn. */
  spawnedAt: number;
  log(): string;
  stop(): Promise<void>;
}

const running = new Set<Proc>();
process.once('exit', () => {
  for (const p of running) p.child.kill('SIGKILL');
});

export function startProc(
  name: string,
  command: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Proc {
  const spawnedAt = performance.now();
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${command}`);
  const proc: Proc = {
    name,
    child,
    pid: child.pid,
    spawnedAt,
    log: () => tail,
    async stop() {
      running.delete(proc);
      await stopChild(child, 10_000);
    },
  };
  running.add(proc);
  return proc;
}

export interface Probe {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** Polls until the probe answers 200; returns ms from spawn to that answer. */
export async function waitFor200(proc: Proc, probe: Probe, timeoutMs = 60_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null)
      throw new Error(
        `${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}):\n${proc.log()}`,
      );
    try {
      const res = await request(probe.url, {
        method: probe.method ?? 'GET',
        headers: probe.headers,
        body: probe.body,
        headersTimeout: 2000,
        bodyTimeout: 2000,
      });
      const text = await res.body.text();
      if (res.statusCode === 200) return performance.now() - proc.spawnedAt;
      last = `${res.statusCode} ${text.slice(0, 300)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(
    `${proc.name}: no 200 from ${probe.url} within ${timeoutMs} ms (last: ${last})\n${proc.log()}`,
  );
}

export { freePort };
