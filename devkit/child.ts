import type { ChildProcess } from 'node:child_process';

/**
 * Stops a child process the way a kubelet stops a pod: SIGTERM, then SIGKILL if it is still there
 * after `graceMs`. Resolves once it has exited (at once if it already had).
 */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
