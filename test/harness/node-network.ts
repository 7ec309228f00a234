import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Run, root, run } from '../charts/tools.ts';

/**
 * The e2e node's network and the machine it holds (docs/e2e.md): a bridge of its own for the pods,
 * the host on its first address, and a machine-wide lock, since one node per machine can run at a
 * time (iptables chains, the bridge). Needs root.
 */

export const NODE_NETWORK = {
  bridge: 'sy-e2e0',
  hostIp: '10.244.0.1',
  podCidr: '10.244.0.0/24',
  serviceCidr: '10.96.0.0/16',
} as const;

/** A binary of .cache/bin (the node's: make node-build). */
export const bin = (name: string) => join(root, '.cache/bin', name);

export async function must(cmd: string, args: readonly string[], input?: string): Promise<Run> {
  const r = await run(cmd, args, { input, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
