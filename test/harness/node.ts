import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stopChild } from '#devkit/child';
import { freePort } from '#devkit/ports';
import { type Run, root, run } from '../charts/tools.ts';
import type { Cluster } from './cluster.ts';

/**
 * A real Kubernetes node for the e2e suite (docs/e2e.md), joined to a control plane started with
 * `startCluster({ address: NODE_NETWORK.hostIp })`: Debian's containerd and runc, the CNI bridge
 * plugin, and kubelet, kube-scheduler and kube-proxy (iptables mode) built from test/cluster's
 * Kubernetes release (make node-build). Pods get addresses on a bridge of their own; the host
 * holds the bridge's first address, where the API server, Redis and the test's own servers listen.
 *
 * One node per machine at a time (iptables chains, the bridge): `lockMachine()` serialises runs.
 * Needs root.
 */

export const NODE_NETWORK = {
  bridge: 'sy-e2e0',
  hostIp: '10.244.0.1',
  podCidr: '10.244.0.0/24',
  serviceCidr: '10.96.0.0/16',
} as const;

export const NODE_NAME = 'sy-e2e-node';
/** containerd's sandbox image, built from test/cluster/pause (no registry needed). */
export const PAUSE_IMAGE = 'localhost/switchyard-e2e-pause:1';

const bin = (name: string) => join(root, '.cache/bin', name);

async function must(cmd: string, args: readonly string[], input?: string): Promise<Run> {
  const r = await run(cmd, args, { input, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const start = Date.now();
  let last: unknown;
  while (Date.now() - start < timeoutMs) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/**
 * Holds a machine-wide lock (flock on /run/lock) until the returned release is called or this
 * process exits: `flock` keeps it while its stdin, our pipe, stays open.
 */
export async function lockMachine(timeoutMs = 45 * 60_000): Promise<() => void> {
  mkdirSync('/run/lock', { recursive: true });
  const child = spawn(
    'flock',
    [
      '-w',
      String(Math.ceil(timeoutMs / 1000)),
      '/run/lock/switchyard-e2e.lock',
      'sh',
      '-c',
      'echo locked; exec cat >/dev/null',
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((done, fail) => {
    child.stdout?.once('data', () => done());
    child.once('exit', (code) =>
      fail(new Error(`could not take the e2e machine lock (flock exited ${code})`)),
    );
  });
  return () => {
    child.stdin?.end();
  };
}

/** iptables guard: nothing from the pods' bridge is forwarded to another interface. */
const GUARD = ['FORWARD', '-i', NODE_NETWORK.bridge, '!', '-o', NODE_NETWORK.bridge, '-j', 'DROP'];

/**
 * The pods' bridge with the host's address on it, before anything starts: the API server and
 * Redis bind there. Service addresses route onto the bridge too, so a Service without a DNAT
 * rule goes nowhere rather than out of the machine, and the guard keeps pod traffic on the bridge.
 */
export async function setUpNetwork(): Promise<() => Promise<void>> {
  await tearDownNetwork();
  const forward = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
  const { bridge, hostIp, serviceCidr } = NODE_NETWORK;
  await must('ip', ['link', 'add', bridge, 'type', 'bridge']);
  await must('ip', ['addr', 'add', `${hostIp}/24`, 'dev', bridge]);
  await must('ip', ['link', 'set', bridge, 'up']);
  await must('ip', ['route', 'add', serviceCidr, 'dev', bridge, 'src', hostIp]);
  await must('iptables', ['-I', ...GUARD]);
  return async () => {
    await tearDownNetwork();
    writeFileSync('/proc/sys/net/ipv4/ip_forward', forward);
  };
}

/** The kubelet's own chains (KUBE-FIREWALL and its canaries), which kube-proxy --cleanup leaves. */
async function removeKubeletChains(): Promise<void> {
  for (const ipt of ['iptables', 'ip6tables']) {
    for (const hook of ['INPUT', 'OUTPUT'])
      while ((await run(ipt, ['-D', hook, '-j', 'KUBE-FIREWALL'])).code === 0) {}
    for (const table of ['filter', 'nat', 'mangle']) {
      const chains = (await run(ipt, ['-t', table, '-S'])).stdout
        .split('\n')
        .filter((l) => /^-N KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT)$/.test(l))
        .map((l) => l.slice(3));
      for (const chain of chains) {
        await run(ipt, ['-t', table, '-F', chain]);
        await run(ipt, ['-t', table, '-X', chain]);
      }
    }
  }
}

async function tearDownNetwork(): Promise<void> {
  while ((await run('iptables', ['-D', ...GUARD])).code === 0) {}
  if (existsSync(bin('kube-proxy'))) await run(bin('kube-proxy'), ['--cleanup']);
  await removeKubeletChains();
  await run('ip', ['link', 'del', NODE_NETWORK.bridge]);
}

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

export function nodeLog(node: RunningNode, name: string): string {
  try {
    return readFileSync(join(node.dir, 'logs', `${name}.log`), 'utf8');
  } catch {
    return '';
  }
}

function containerdConfig(dir: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${dir}/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"
[${cri}]
  sandbox_image = "${PAUSE_IMAGE}"
  # This sandbox lacks CAP_SYS_RESOURCE: a negative oom_score_adj (the sandbox's -998) cannot be
  # set, so none goes below containerd's own.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "${dir}/runc"
[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni"
`;
}

function cniConfig(dir: string): string {
  const { bridge, hostIp, podCidr } = NODE_NETWORK;
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'switchyard-e2e',
    plugins: [
      {
        type: 'bridge',
        bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: podCidr, gateway: hostIp }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: join(dir, 'cni-ipam'),
        },
      },
    ],
  });
}

function kubeletConfig(dir: string, caFile: string, port: number, healthzPort: number): string {
  return JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_NETWORK.hostIp,
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: caFile },
    },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
    // This machine has cgroup v1 (hybrid) and no systemd.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    failSwapOn: false,
    // No cluster DNS: the pods reach Redis, the API server and the test's servers by address.
    resolvConf: '/etc/resolv.conf',
    // The images are imported, never pulled: keep them whatever the disk holds.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    serializeImagePulls: false,
    nodeStatusUpdateFrequency: '2s',
    syncFrequency: '5s',
  });
}

function kubeProxyConfig(kubeconfig: string, metricsPort: number, healthzPort: number): string {
  return JSON.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    mode: 'iptables',
    hostnameOverride: NODE_NAME,
    clusterCIDR: NODE_NETWORK.podCidr,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    nodePortAddresses: [`${NODE_NETWORK.hostIp}/32`],
    // Every connection to a Service is masqueraded, so replies always come back through the host.
    iptables: { masqueradeAll: true, syncPeriod: '30s', minSyncPeriod: '0s', localhostNodePorts: false },
    // Leave the machine's conntrack settings alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}

/** Starts containerd, imports the images, then kubelet, kube-scheduler and kube-proxy; waits for Ready. */
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
