import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stopChild } from '#devkit/child';
import { freePort } from '#devkit/ports';
import { type Run, run } from '../charts/tools.ts';
import type { Cluster } from './cluster.ts';
import {
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  NODE_NAME,
  PAUSE_IMAGE,
} from './node-config.ts';
import { bin, must, NODE_NETWORK, waitFor } from './node-network.ts';

/**
 * A real Kubernetes node for the e2e suite (docs/e2e.md), joined to a control plane started with
 * `startCluster({ address: NODE_NETWORK.hostIp })`: Debian's containerd and runc, the CNI bridge
 * plugin, and kubelet, kube-scheduler and kube-proxy (iptables mode) built from test/cluster's
 * Kubernetes release (make node-build). Pods get addresses on a bridge of their own; the host
 * holds the bridge's first address, where the API server, Redis and the test's own servers listen.
 *
 * One node per machine at a time (iptables chains, the bridge): `lockMachine()` (node-network.ts) serialises runs.
 * Needs root.
 */

const KERNEL_TUNABLES = ['vm/overcommit_memory', 'kernel/panic', 'kernel/panic_on_oops'] as const;

export interface StartNodeOptions {
  /** docker-archive tarballs imported into containerd before the kubelet starts. */
  images: readonly string[];
}

export interface RunningNode {
  name: string;
  dir: string;
  /** `ctr` against this node's containerd, namespace k8s.io. */
  ctr(args: readonly string[]): Promise<Run>;
  /** Seconds from the first process started to the node Ready. */
  readySeconds: number;
  stop(): Promise<void>;
}

interface Proc {
  name: string;
  child: ChildProcess;
}

function startProc(dir: string, name: string, cmd: string, args: readonly string[]): Proc {
  const log = openSync(join(dir, 'logs', `${name}.log`), 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', log, log] });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  return { name, child };
}

export async function startNode(cluster: Cluster, opts: StartNodeOptions): Promise<RunningNode> {
  const started = Date.now();
  // The kubelet sets these for its own defaults; the machine gets its own back at stop().
  const tunables = Object.fromEntries(
    KERNEL_TUNABLES.map((t) => [t, readFileSync(`/proc/sys/${t}`, 'utf8').trim()] as const),
  );
  const dir = await mkdtemp('/tmp/sy-node-');
  for (const d of ['logs', 'cni', 'kubelet']) mkdirSync(join(dir, d), { recursive: true });
  const procs: Proc[] = [];
  const ctr = (args: readonly string[]) =>
    run('ctr', ['--address', join(dir, 'containerd.sock'), '-n', 'k8s.io', ...args], { timeoutMs: 300_000 });
  const kubectl = async (args: readonly string[]) => {
    const r = await cluster.kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  const stop = async () => {
    // Pods first, through the kubelet, so their sandboxes, mounts and network namespaces go too.
    if (procs.some((p) => p.name === 'kubelet' && p.child.exitCode === null)) {
      await cluster.kubectl(['delete', 'pods', '--all', '-A', '--grace-period=1', '--wait=false']);
      await waitFor(
        'the node to stop every pod',
        async () => (await ctr(['tasks', 'ls', '-q'])).stdout.trim() === '',
        60_000,
        500,
      ).catch(() => {});
    }
    for (const p of [...procs].reverse()) await stopChild(p.child, 10_000);
    await killLeftovers(dir);
    for (const [t, v] of Object.entries(tunables)) writeFileSync(`/proc/sys/${t}`, v);
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  };

  try {
    writeFileSync(join(dir, 'containerd.toml'), containerdConfig(dir));
    writeFileSync(join(dir, 'cni', '10-switchyard-e2e.conflist'), cniConfig(dir));
    procs.push(startProc(dir, 'containerd', 'containerd', ['--config', join(dir, 'containerd.toml')]));
    await waitFor('containerd', async () => (await ctr(['version'])).code === 0, 30_000);

    await importPause(dir, ctr);
    for (const image of opts.images) {
      const r = await ctr(['images', 'import', '--no-unpack=false', image]);
      if (r.code !== 0) throw new Error(`ctr images import ${image}: ${r.stderr}`);
    }

    const caFile = join(dir, 'ca.crt');
    const ca = await kubectl([
      'config',
      'view',
      '--raw',
      '--minify',
      '-o',
      'jsonpath={.clusters[0].cluster.certificate-authority-data}',
    ]);
    writeFileSync(caFile, Buffer.from(ca, 'base64'));
    const [kubeletPort, kubeletHealthz, proxyMetrics, proxyHealthz, schedulerPort] = await Promise.all(
      [0, 1, 2, 3, 4].map(() => freePort()),
    );
    writeFileSync(
      join(dir, 'kubelet.json'),
      kubeletConfig(dir, caFile, kubeletPort ?? 0, kubeletHealthz ?? 0),
    );
    writeFileSync(
      join(dir, 'kube-proxy.json'),
      kubeProxyConfig(cluster.kubeconfigPath, proxyMetrics ?? 0, proxyHealthz ?? 0),
    );

    // The node authenticates with the admin kubeconfig: this test cluster has no bootstrap tokens.
    procs.push(
      startProc(dir, 'kubelet', bin('kubelet'), [
        `--config=${join(dir, 'kubelet.json')}`,
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--root-dir=${join(dir, 'kubelet')}`,
        `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
        `--hostname-override=${NODE_NAME}`,
        `--node-ip=${NODE_NETWORK.hostIp}`,
        '--v=1',
      ]),
    );
    procs.push(
      startProc(dir, 'kube-scheduler', bin('kube-scheduler'), [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--authentication-kubeconfig=${cluster.kubeconfigPath}`,
        `--authorization-kubeconfig=${cluster.kubeconfigPath}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${schedulerPort}`,
        '--v=1',
      ]),
    );
    procs.push(
      startProc(dir, 'kube-proxy', bin('kube-proxy'), [`--config=${join(dir, 'kube-proxy.json')}`, '--v=1']),
    );

    await waitFor(
      `node ${NODE_NAME} Ready`,
      async () => {
        for (const p of procs)
          if (p.child.exitCode !== null)
            throw new Error(
              `${p.name} exited (${p.child.exitCode}):\n${tail(join(dir, 'logs', `${p.name}.log`))}`,
            );
        const r = await cluster.kubectl([
          'get',
          'node',
          NODE_NAME,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
        ]);
        return r.stdout.trim() === 'True';
      },
      120_000,
      500,
    );
    return { name: NODE_NAME, dir, ctr, readySeconds: (Date.now() - started) / 1000, stop };
  } catch (e) {
    const logs = procs.map((p) => `--- ${p.name}:\n${tail(join(dir, 'logs', `${p.name}.log`))}`).join('\n');
    await stop();
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
}

function tail(file: string, chars = 3000): string {
  try {
    return readFileSync(file, 'utf8').slice(-chars);
  } catch {
    return '';
  }
}

/** The pause binary as a one-layer image, imported under PAUSE_IMAGE. */
async function importPause(dir: string, ctr: (args: readonly string[]) => Promise<Run>): Promise<void> {
  const archive = join(dir, 'pause.tar');
  const work = join(dir, 'pause-build');
  mkdirSync(work);
  const c = (await must('buildah', ['from', 'scratch'])).stdout.trim();
  try {
    await must('buildah', ['copy', '--quiet', c, bin('sy-pause'), '/pause']);
    await must('buildah', ['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', c]);
    await must('buildah', ['commit', '--quiet', c, PAUSE_IMAGE]);
  } finally {
    await run('buildah', ['rm', c]);
  }
  await must('buildah', ['push', '--quiet', PAUSE_IMAGE, `docker-archive:${archive}:${PAUSE_IMAGE}`]);
  const r = await ctr(['images', 'import', archive]);
  if (r.code !== 0) throw new Error(`ctr images import pause: ${r.stderr}`);
}

/**
 * Whatever the kubelet did not stop (a test that failed half-way): containers through runc, the
 * shims of this containerd, and mounts under the node's directory.
 */
async function killLeftovers(dir: string): Promise<void> {
  const runcRoot = join(dir, 'runc', 'k8s.io');
  if (existsSync(runcRoot)) {
    const list = await run('runc', ['--root', runcRoot, 'list', '-q']);
    for (const id of list.stdout.split('\n').filter(Boolean)) {
      await run('runc', ['--root', runcRoot, 'kill', id, 'KILL']);
      await run('runc', ['--root', runcRoot, 'delete', '-f', id]);
    }
  }
  const sock = join(dir, 'containerd.sock');
  const ps = await run('sh', ['-c', `grep -lsF -- '${sock}' /proc/[0-9]*/cmdline | cut -d/ -f3`]);
  for (const pid of ps.stdout.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {}
  }
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await run('umount', ['-l', m]);
  // The kubelet's pod cgroups (cgroupfs driver), empty once the containers are gone.
  await run('sh', [
    '-c',
    'for d in /sys/fs/cgroup/*/kubepods; do [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + ; done; true',
  ]);
}
