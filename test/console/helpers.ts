import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopChild } from '#devkit/child';
import { freePort } from '#devkit/ports';

export const root = resolve(fileURLToPath(import.meta.url), '../../..');

/**
 * Where the suite saves its screenshots: .cache/screenshots on every run (each page's ids and times
 * differ, so writing the README's copies each time would leave the tree changed after every run),
 * and docs/images, the README's, with `make screenshots` (SWITCHYARD_SCREENSHOTS=docs).
 */
export const screenshotPath = (name: string): string =>
  resolve(root, process.env.SWITCHYARD_SCREENSHOTS === 'docs' ? 'docs/images' : '.cache/screenshots', name);

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const call = async (url: string, key: string, method: string, body?: unknown): Promise<Answer> => {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

/** The console API of one project, as a key holder calls it. */
export function consoleApi(gatewayUrl: string, key: string, projectId: string) {
  const base = `${gatewayUrl}/api/console/projects/${encodeURIComponent(projectId)}/workflows`;
  const one = (name: string) => `${base}/${encodeURIComponent(name)}`;
  return {
    create: (body: unknown) => call(base, key, 'POST', body),
    list: () => call(base, key, 'GET'),
    get: (name: string) => call(one(name), key, 'GET'),
    replace: (name: string, body: unknown) => call(one(name), key, 'PUT', body),
    delete: (name: string) => call(one(name), key, 'DELETE'),
  };
}

/** One native chat call to a workflow; the model that answered comes from x-service-used-model. */
export async function ask(gatewayUrl: string, key: string, workflow: string) {
  const res = await fetch(`${gatewayUrl}/v1/ai`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ workflow, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await res.arrayBuffer();
  return { status: res.status, model: res.headers.get('x-service-used-model') };
}

/** Polls `probe` until it holds; returns the milliseconds since `since` (performance.now()), or after `giveUpMs`. */
export async function servedAfter(
  since: number,
  giveUpMs: number,
  probe: () => Promise<boolean>,
): Promise<number> {
  while (performance.now() - since < giveUpMs) {
    if (await probe()) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Number.POSITIVE_INFINITY;
}

export interface Proc {
  url: string;
  metricsUrl: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a Node entry point of this repo as a real process on free ports; resolves once /readyz is 200. */
export async function startProcess(
  entry: string,
  args: readonly string[],
  env: Record<string, string>,
  portArgs: (port: number, metricsPort: number) => { args: string[]; env: Record<string, string> },
): Promise<Proc> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const extra = portArgs(port, metricsPort);
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', entry, ...args, ...extra.args],
    {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn', ...env, ...extra.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited (${child.exitCode}):\n${out}`);
    const ok = await fetch(`${metricsUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`${entry} not ready in 30 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    metricsUrl,
    child,
    output: () => out,
    stop: () => stopChild(child, 10_000),
  };
}
