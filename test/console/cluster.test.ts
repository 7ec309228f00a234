/**
 * The console API on a real API server: a real gateway process (SWITCHYARD_CONSOLE=kubernetes)
 * with nothing but a ServiceAccount token bound to operator/rbac/gateway-*.yaml, the real operator
 * reconciling, Redis carrying the snapshot. One control plane for the whole file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeConsoleBackend } from '#gateway/console/kube-backend';
import { KubeClient, loadKubeConfig } from '#operator/kube/index';
import type { RunningOperator } from '#operator/operator';
import { NS, PROJECT } from '../harness/manifests.ts';
import { type Env, startEnv, waitFor } from '../operator/helpers.ts';
import { type Proc, root, startProcess } from './helpers.ts';
import { consoleContract, type StoredWorkflow, startingConfig } from './suite.ts';

const SYSTEM = 'switchyard-system';
const SA = `system:serviceaccount:${SYSTEM}:switchyard-gateway`;
let env: Env;
let op: RunningOperator;
let gw: Proc;
let dir: string;
let kubeconfig: string;

/** A kubeconfig that authenticates as the gateway's ServiceAccount, nothing more. */
async function serviceAccountKubeconfig(): Promise<string> {
  const token = (
    await env.kubectl(['create', 'token', 'switchyard-gateway', '-n', SYSTEM, '--duration=1h'])
  ).trim();
  const admin = JSON.parse(await env.kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  const path = join(dir, 'kubeconfig');
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'gateway', user: { token } }],
      contexts: [{ name: 'gateway', context: { cluster: 'c', user: 'gateway' } }],
      'current-context': 'gateway',
    }),
  );
  return path;
}

beforeAll(async () => {
  env = await startEnv();
  dir = await mkdtemp(join(tmpdir(), 'sy-console-k8s-'));
  await env.kubectl(['create', 'namespace', SYSTEM]);
  await env.kubectl(['create', 'namespace', NS]);
  for (const f of ['serviceaccount', 'clusterrole', 'bindings'])
    await env.kubectl(['apply', '-n', SYSTEM, '-f', `${root}/operator/rbac/gateway-${f}.yaml`]);
  kubeconfig = await serviceAccountKubeconfig();
  await env.apply(
    startingConfig()
      .map((m) => stringify(m))
      .join('---\n'),
  );
  op = await env.operator();
  await waitFor('the handmade workflow in the snapshot', async () =>
    Boolean((await env.snapshot())?.projects[`${NS}.${PROJECT}`]?.workflows.handmade),
  );
  gw = await startProcess(
    'gateway/src/main.ts',
    [],
    {
      REDIS_URL: env.redis.url,
      SWITCHYARD_SEAL_KEY: env.sealKey.toString('hex'),
      SWITCHYARD_CONSOLE: 'kubernetes',
      KUBECONFIG: kubeconfig,
    },
    (port, metricsPort) => ({
      args: [],
      env: {
        SWITCHYARD_HOST: '127.0.0.1',
        SWITCHYARD_PORT: String(port),
        SWITCHYARD_METRICS_PORT: String(metricsPort),
      },
    }),
  );
}, 600_000);

afterAll(async () => {
  await gw?.stop();
  await env?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('on a cluster (Workflow CRs, the operator compiles)', () => {
  it('the gateway role is least privilege: workflows only, no status, no Secrets', async () => {
    const can = async (...args: string[]) =>
      (await env.cluster.kubectl(['auth', 'can-i', '--as', SA, ...args])).stdout.trim();
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'delete'])
      expect(await can(verb, 'workflows.switchyard.dev', '-n', NS)).toBe('yes');
    expect(await can('patch', 'workflows.switchyard.dev', '--subresource=status', '-n', NS)).toBe('no');
    expect(await can('get', 'secrets', '-n', NS)).toBe('no');
    expect(await can('create', 'apikeys.switchyard.dev', '-n', NS)).toBe('no');
  });

  consoleContract({
    mode: 'cluster',
    url: () => gw.url,
    async stored(objectName) {
      const r = await env.cluster.kubectl(['get', 'workflow', '-n', NS, objectName, '-o', 'json']);
      return r.code === 0 ? (JSON.parse(r.stdout) as StoredWorkflow) : undefined;
    },
    async plant(manifest) {
      await env.apply(stringify(manifest));
    },
  });

  it('the operator has the last word: what a stale snapshot let through is undone and answered 422', async () => {
    const backend = new KubeConsoleBackend({
      client: new KubeClient(loadKubeConfig(kubeconfig)),
      logger: pino({ level: 'silent' }),
    });
    const snap = (await env.snapshot())?.projects[`${NS}.${PROJECT}`];
    if (!snap) throw new Error('no snapshot');
    const oai = snap.providers.oai;
    if (!oai) throw new Error('no oai provider');
    // As if the gateway still served a Provider "ghost" that the cluster no longer has.
    const stale = { ...snap, providers: { ...snap.providers, ghost: { ...oai, name: 'ghost' } } };
    const project = { id: `${NS}.${PROJECT}`, namespace: NS, name: PROJECT, snapshot: stale };
    const spec = { projectRef: { name: PROJECT }, name: 'stale', provider: 'ghost', model: 'gpt-4o-mini' };
    await expect(backend.create(project, spec)).rejects.toMatchObject({
      reason: 'ProviderNotFound',
      specPath: 'provider',
    });
    const left = await env.cluster.kubectl(['get', 'workflows', '-n', NS, '-o', 'name']);
    expect(left.stdout).not.toContain('stale');

    const created = await backend.create(project, { ...spec, provider: 'oai' });
    expect(created.record.ready.status).toBe('True');
    await expect(backend.replace(project, spec)).rejects.toMatchObject({ reason: 'ProviderNotFound' });
    const back = await env.get<{ spec: { provider: string } }>('workflow', NS, created.record.objectName);
    expect(back.spec.provider).toBe('oai');
    await backend.delete(project, 'stale');
  });

  it('without the operator a write is 202 with the verdict still Unknown once the wait is over', async () => {
    await op.stop();
    const backend = new KubeConsoleBackend({
      client: new KubeClient(loadKubeConfig(kubeconfig)),
      logger: pino({ level: 'silent' }),
      settleTimeoutMs: 300,
    });
    const project = { id: `${NS}.${PROJECT}`, namespace: NS, name: PROJECT };
    const result = await backend.create(project, {
      projectRef: { name: PROJECT },
      name: 'while-down',
      provider: 'oai',
      model: 'gpt-4o-mini',
    });
    expect(result.settled).toBe(false);
    expect(result.record.ready).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(result.record.managed).toBe(true);
  });
});
