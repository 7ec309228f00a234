/** The operator runs with nothing but a ServiceAccount token bound to operator/rbac/*.yaml. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadKubeConfig } from '#operator/kube/client';
import { type Env, exampleCounts, ready, root, startEnv, type WithStatus, waitFor } from './helpers.ts';

const NS = 'switchyard-system';
const SA = `system:serviceaccount:${NS}:switchyard-operator`;
let env: Env;
let dir: string;

beforeAll(async () => {
  env = await startEnv();
  dir = await mkdtemp(join(tmpdir(), 'sy-rbac-'));
}, 600_000);

afterAll(async () => {
  await env?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('works with a ServiceAccount bound to the shipped RBAC, and is refused anything beyond it', async () => {
  await env.kubectl(['create', 'namespace', NS]);
  for (const f of ['serviceaccount', 'clusterrole', 'leader-election-role', 'bindings'])
    await env.kubectl(['apply', '-n', NS, '-f', `${root}/operator/rbac/${f}.yaml`]);
  const token = (
    await env.kubectl(['create', 'token', 'switchyard-operator', '-n', NS, '--duration=1h'])
  ).trim();
  const admin = JSON.parse(await env.kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
  };
  const cluster = admin.clusters[0];
  if (!cluster) throw new Error('no cluster in kubeconfig');
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: cluster.cluster }],
    users: [{ name: 'operator', user: { token } }],
    contexts: [{ name: 'operator', context: { cluster: 'c', user: 'operator' } }],
    'current-context': 'operator',
  };
  const path = join(dir, 'kubeconfig');
  await writeFile(path, JSON.stringify(kubeconfig));

  // Least privilege, as the API server sees it.
  const can = async (...args: string[]) =>
    (await env.cluster.kubectl(['auth', 'can-i', '--as', SA, ...args])).stdout.trim();
  expect(await can('watch', 'workflows.switchyard.dev', '-A')).toBe('yes');
  expect(await can('patch', 'workflows.switchyard.dev', '--subresource=status', '-n', 'acme')).toBe('yes');
  expect(await can('update', 'workflows.switchyard.dev', '-n', 'acme')).toBe('no');
  expect(await can('delete', 'secrets', '-n', 'acme')).toBe('no');
  expect(await can('create', 'secrets', '-n', 'acme')).toBe('yes');
  expect(await can('update', 'leases.coordination.k8s.io', '-n', NS)).toBe('yes');
  expect(await can('update', 'leases.coordination.k8s.io', '-n', 'default')).toBe('no');
  expect(await can('delete', 'leases.coordination.k8s.io', '-n', NS)).toBe('no');

  await env.kubectl(['apply', '-R', '-f', `${root}/examples/`]);
  await env.apply(`
apiVersion: switchyard.dev/v1alpha1
kind: ApiKey
metadata: {name: generated, namespace: acme}
spec: {projectRef: {name: storefront}}
`);
  const op = await env.operator({
    kubeConfig: loadKubeConfig(path),
    leaseNamespace: NS,
    identity: 'rbac-op',
  });
  await waitFor('leader', () => op.isLeader, 15_000);
  await waitFor(
    'snapshot',
    async () =>
      Object.keys((await env.snapshot())?.projects['acme.storefront']?.workflows ?? {}).length ===
      exampleCounts().workflows,
  );
  await waitFor('statuses written', async () => {
    const list = JSON.parse(
      await env.kubectl([
        'get',
        'workflows,apikeys,providers,projects,spendcaps',
        '-n',
        'acme',
        '-o',
        'json',
      ]),
    ) as {
      items: WithStatus[];
    };
    return list.items.every((o) => ready(o)?.status === 'True');
  });
  await env.get('secret', 'acme', 'generated-apikey'); // created with the token's rights
  await waitFor(
    'events recorded',
    async () => (await env.kubectl(['get', 'events', '-n', 'acme', '-o', 'name'])).trim().length > 0,
  );
  const lease = await env.get<{ spec: { holderIdentity: string } }>('lease', NS, 'switchyard-operator');
  expect(lease.spec.holderIdentity).toBe('rbac-op');
  await op.stop();
}, 120_000);
