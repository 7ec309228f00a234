import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../harness/cluster.ts';

// The first run builds the control plane from source (many minutes); later runs start in seconds.
const BUILD_AND_START_MS = 45 * 60_000;

let cluster: Cluster;
const ns = `smoke-${process.pid}-${Date.now().toString(36)}`;

async function ok(args: readonly string[], input?: string): Promise<string> {
  const r = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Kubernetes control plane (test/cluster)', () => {
  beforeAll(async () => {
    cluster = await startCluster();
  }, BUILD_AND_START_MS);

  afterAll(async () => {
    if (cluster?.started === false) await cluster.kubectl(['delete', 'namespace', ns, '--wait=false']);
    await cluster?.stop();
  }, 60_000);

  it('serves Kubernetes 1.33 or newer', async () => {
    const version = JSON.parse(await ok(['get', '--raw', '/version'])) as { major: string; minor: string };
    expect(version.major).toBe('1');
    expect(Number.parseInt(version.minor, 10)).toBeGreaterThanOrEqual(33);
  });

  it('issues service-account tokens (TokenRequest) and RBAC denies what is not granted', async () => {
    await ok(['create', 'namespace', ns]);
    await ok(['-n', ns, 'create', 'serviceaccount', 'robot']);
    const token = (await ok(['-n', ns, 'create', 'token', 'robot', '--duration=10m'])).trim();
    const parts = token.split('.');
    expect(parts).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString()) as { sub: string };
    expect(claims.sub).toBe(`system:serviceaccount:${ns}:robot`);

    // A kubeconfig that authenticates with the token only.
    const cfg = JSON.parse(await ok(['config', 'view', '--minify', '--raw', '--flatten', '-o', 'json'])) as {
      clusters: { name: string; cluster: object }[];
    };
    const tokenConfig = join(tmpdir(), `${ns}-token.kubeconfig`);
    await writeFile(
      tokenConfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: cfg.clusters,
        users: [{ name: 'robot', user: { token } }],
        contexts: [{ name: 'robot', context: { cluster: cfg.clusters[0]?.name, user: 'robot' } }],
        'current-context': 'robot',
      }),
    );
    try {
      const whoami = await ok([`--kubeconfig=${tokenConfig}`, 'auth', 'whoami', '-o', 'json']);
      expect(JSON.stringify(JSON.parse(whoami))).toContain(`system:serviceaccount:${ns}:robot`);
      const denied = await cluster.kubectl([`--kubeconfig=${tokenConfig}`, '-n', ns, 'get', 'secrets']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toMatch(/forbidden/i);
      expect(denied.stderr).toContain(`system:serviceaccount:${ns}:robot`);
    } finally {
      await rm(tokenConfig, { force: true });
    }
    const canI = await cluster.kubectl([
      'auth',
      'can-i',
      'list',
      'secrets',
      '-n',
      ns,
      `--as=system:serviceaccount:${ns}:robot`,
    ]);
    expect(canI.stdout.trim()).toBe('no');
  });

  it('garbage-collects owned objects and deletes namespaces (kube-controller-manager)', async () => {
    await ok(['-n', ns, 'create', 'configmap', 'owner']);
    const uid = (await ok(['-n', ns, 'get', 'configmap', 'owner', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const owned = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'owned',
        namespace: ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }],
      },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(owned));
    await ok(['-n', ns, 'delete', 'configmap', 'owner']);
    await until('the owned ConfigMap to be garbage-collected', async () => {
      const r = await cluster.kubectl(['-n', ns, 'get', 'configmap', 'owned']);
      return r.code !== 0 && /NotFound/.test(r.stderr);
    });
    await ok(['delete', 'namespace', ns, '--wait=true', '--timeout=90s']);
  }, 120_000);
});
