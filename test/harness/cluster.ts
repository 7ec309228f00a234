import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopChild } from '#devkit/child';

/**
 * A Kubernetes API server for the tests: the control plane built from test/cluster (etcd +
 * kube-apiserver + kube-controller-manager, see docs/cluster.md) on free loopback ports, or, when
 * KUBECONFIG is set, the cluster it points at (kind, or anything else).
 */

const root = resolve(fileURLToPath(import.meta.url), '../../..');
export const controlPlaneBinary = join(root, '.cache/cluster/bin/controlplane');

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface KubectlOptions {
  /** Written to kubectl's stdin (e.g. for `apply -f -`). */
  input?: string;
  timeoutMs?: number;
}

export interface Cluster {
  kubeconfigPath: string;
  server: string;
  /** False when KUBECONFIG pointed at an existing cluster (stop() then leaves it alone). */
  started: boolean;
  kubectl(args: readonly string[], opts?: KubectlOptions): Promise<KubectlResult>;
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Use $KUBECONFIG's cluster when it is set (default true). */
  useKubeconfigEnv?: boolean;
  /** Run kube-controller-manager (GC, namespace deletion, service accounts...). Default true. */
  controllerManager?: boolean;
  /** How long to wait for /readyz once the binary is built. Default 5 minutes. */
  readyTimeoutMs?: number;
  /** The apiserver's bind and advertise address (default 127.0.0.1): the e2e node's pods reach it there. */
  address?: string;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

function run(
  cmd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input?: string,
  timeoutMs = 120_000,
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ stdout, stderr: signal ? `${stderr}\nkilled by ${signal}` : stderr, code: code ?? 1 });
    });
    // kubectl may exit before reading stdin (e.g. a flag error); that is its answer, not ours to crash on.
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

let building: Promise<string> | undefined;

/** Builds the control-plane binary through `make cluster-build` (a no-op when up to date). */
export function buildControlPlane(): Promise<string> {
  building ??= run('make', ['-s', '-C', root, 'cluster-build'], process.env, undefined, 60 * 60_000).then(
    (r) => {
      if (r.code !== 0) throw new Error(`make cluster-build failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
      return controlPlaneBinary;
    },
  );
  return building;
}

function kubectlWith(kubeconfig: string, explicit: boolean) {
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  return async (args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> => {
    const bin = await buildControlPlane();
    const pre = explicit ? ['kubectl', `--kubeconfig=${kubeconfig}`] : ['kubectl'];
    return run(bin, [...pre, ...args], env, opts.input, opts.timeoutMs);
  };
}

function waitReady(child: ChildProcess, timeoutMs: number): Promise<{ server: string }> {
  return new Promise((done, fail) => {
    let out = '';
    let err = '';
    const timer = setTimeout(
      () => fail(new Error(`control plane not ready in ${timeoutMs} ms:\n${err}`)),
      timeoutMs,
    );
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      err = (err + d).slice(-20_000);
    });
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const info = JSON.parse(line) as { ready?: boolean; server?: string };
          if (info.ready && info.server) {
            clearTimeout(timer);
            done({ server: info.server });
          }
        } catch {}
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`control plane exited (${code ?? signal}) before ready:\n${err}`));
    });
  });
}

/** Starts a control plane on free ports (or uses $KUBECONFIG's cluster). */
export async function startCluster(opts: StartClusterOptions = {}): Promise<Cluster> {
  const fromEnv = process.env.KUBECONFIG;
  if (fromEnv && opts.useKubeconfigEnv !== false) {
    const kubectl = kubectlWith(fromEnv, false);
    const view = await kubectl([
      'config',
      'view',
      '--minify',
      '-o',
      'jsonpath={.clusters[0].cluster.server}',
    ]);
    if (view.code !== 0) throw new Error(`KUBECONFIG=${fromEnv} is not usable: ${view.stderr}`);
    return {
      kubeconfigPath: fromEnv,
      server: view.stdout.trim(),
      started: false,
      kubectl,
      stop: async () => {},
    };
  }

  const bin = await buildControlPlane();
  // The control plane picks free ports and binds them a moment later, so another process on the
  // machine may take one in between (etcd then exits with "address already in use"): such a start
  // is tried again, on ports picked afresh.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startControlPlane(bin, opts);
    } catch (e) {
      if (attempt >= 3 || !(e as Error).message.includes('address already in use')) throw e;
    }
  }
}

async function startControlPlane(bin: string, opts: StartClusterOptions): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-cluster-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const args = ['up', '--dir', dir, '--exit-on-stdin-close', '--remove-dir-on-exit'];
  if (opts.controllerManager === false) args.push('--no-controller-manager');
  if (opts.address) args.push('--address', opts.address);
  // stdin stays open; if this process dies the pipe closes and the control plane shuts down.
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(child, 30_000);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const { server } = await waitReady(child, opts.readyTimeoutMs ?? 5 * 60_000);
    return { kubeconfigPath, server, started: true, kubectl: kubectlWith(kubeconfigPath, true), stop };
  } catch (e) {
    const log = await readFile(join(dir, 'logs/kube-apiserver.log'), 'utf8').catch(() => '');
    await stop();
    throw new Error(`${(e as Error).message}\nkube-apiserver.log (tail):\n${log.slice(-4000)}`);
  }
}
