/**
 * Both charts installed into a real API server (test/harness/cluster.ts): every object accepted,
 * kubeconform against that server's own schemas, then the operator run as a local process with
 * nothing but the chart's ServiceAccount token (and the seal key it reads from the chart's Secret)
 * reconciling examples/, a gateway process serving a key the operator generated, and every step
 * beyond the chart's RBAC refused. Pods stay Pending (no kubelet): the API objects are what is tested.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#devkit/ports';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { type Cluster, controlPlaneBinary, startCluster } from '../harness/cluster.ts';
import { writeKubeconformSchemas } from './kube-schemas.ts';
import {
  buildChartTools,
  CHART,
  CRD_CHART,
  FULL_VALUES,
  helm,
  KUBECONFORM,
  type KubeObject,
  NAMESPACE,
  parseObjects,
  RELEASE,
  REQUIRED_VALUES,
  root,
  run,
  template,
} from './tools.ts';

const SA = `system:serviceaccount:${NAMESPACE}:switchyard-operator`;
const FULL_NAMESPACE = 'switchyard-full';
/** The full values turn the console API on: this ServiceAccount may write Workflows in acme. */
const CONSOLE_SA = `system:serviceaccount:${FULL_NAMESPACE}:gateway-sa`;
const EXAMPLE_KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';

let cluster: Cluster;
let redis: RunningRedis;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-chart-install-'));
  [cluster, redis] = await Promise.all([startCluster(), startRedis(), buildChartTools()]);
}, 900_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all([cluster?.stop(), redis?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function kubectl(args: readonly string[], input?: string): Promise<string> {
  const r = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function helmIn(args: readonly string[]): Promise<string> {
  const r = await helm(args, { env: { KUBECONFIG: cluster.kubeconfigPath } });
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** kubectl with the given kubeconfig only (not the admin one the harness adds). */
const kubectlAs = (kubeconfig: string, args: readonly string[]) =>
  run(controlPlaneBinary, ['kubectl', `--kubeconfig=${kubeconfig}`, ...args]);

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const start = Date.now();
  let last: unknown;
  while (Date.now() - start < timeoutMs) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
  );
}

/** `node <script>` from the repository, as `make operator` / `make gateway` run it. */
function startNode(
  script: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const s of [child.stdout, child.stderr])
    s?.setEncoding('utf8').on('data', (d: string) => (output += d));
  children.push(child);
  return { child, output: () => output };
}

const exited = (c: ChildProcess) =>
  new Promise<number | null>((r) =>
    c.exitCode !== null ? r(c.exitCode) : c.once('exit', (code) => r(code)),
  );

/** All objects of a release's manifest, read back from the API server. */
async function assertAllServed(release: string, namespace: string): Promise<number> {
  const manifest = parseObjects(await helmIn(['get', 'manifest', release, '-n', namespace]));
  const served = JSON.parse(
    await kubectl(
      ['get', '-f', '-', '-o', 'json'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifest }),
    ),
  ) as {
    items?: KubeObject[];
    kind: string;
  };
  const items = served.items ?? [served as unknown as KubeObject];
  const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  expect(items.map(key).sort()).toEqual(manifest.map(key).sort());
  return items.length;
}

describe('helm install into the API server', () => {
  it('the CRD chart, then the main chart with default and with full values: every object accepted', async () => {
    await helmIn(['install', 'switchyard-crds', CRD_CHART]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=switchyard',
    ]);
    expect(await assertAllServed('switchyard-crds', 'default')).toBe(7);

    // The namespaces the full values point into (the watched namespace, the dashboard's).
    await kubectl(['apply', '-f', join(root, 'examples/00-namespace.yaml')]);
    await kubectl(['create', 'namespace', 'monitoring']);
    await helmIn([
      'install',
      RELEASE,
      CHART,
      '-n',
      NAMESPACE,
      '--create-namespace',
      '--set',
      `redis.url=${redis.url}`,
    ]);
    // ServiceMonitor and PrometheusRule need the prometheus-operator CRDs, which this server lacks.
    await helmIn([
      'install',
      'full',
      CHART,
      '-n',
      FULL_NAMESPACE,
      '--create-namespace',
      '-f',
      FULL_VALUES,
      '--set',
      'serviceMonitor.enabled=false',
      '--set',
      'prometheusRule.enabled=false',
    ]);
    // 2 Deployments, 2 Services, 2 ServiceAccounts, 2 Secrets, 2 NetworkPolicies, 2 PDBs, the HPA,
    // ClusterRole + ClusterRoleBinding, leader-election Role + RoleBinding.
    expect(await assertAllServed(RELEASE, NAMESPACE)).toBe(17);
    // No Secrets (existing ones named), no HPA, one PDB, the RoleBinding in acme, the dashboard
    // ConfigMap, and the console's ClusterRole with its RoleBinding in acme.
    expect(await assertAllServed('full', FULL_NAMESPACE)).toBe(16);
    // Two releases live side by side: cluster-scoped names carry the namespace.
    const roles = await kubectl([
      'get',
      'clusterroles',
      '-l',
      'app.kubernetes.io/part-of=switchyard',
      '-o',
      'name',
    ]);
    expect(roles.trim().split('\n').sort()).toEqual([
      'clusterrole.rbac.authorization.k8s.io/switchyard-full-ai-gateway-gateway-console',
      'clusterrole.rbac.authorization.k8s.io/switchyard-full-ai-gateway-operator',
      'clusterrole.rbac.authorization.k8s.io/switchyard-system-switchyard-operator',
    ]);
  }, 120_000);

  it('kubeconform: the rendered charts are valid against this server’s schemas, strictly', async () => {
    const rendered = await Promise.all([
      template(CHART, REQUIRED_VALUES),
      template(CHART, ['-f', FULL_VALUES]),
      template(CRD_CHART),
    ]);
    const kinds = new Map<string, { apiVersion: string; kind: string }>();
    for (const o of rendered.flatMap(parseObjects))
      if (o.apiVersion !== 'monitoring.coreos.com/v1') kinds.set(`${o.apiVersion} ${o.kind}`, o);
    const swagger = JSON.parse(await kubectl(['get', '--raw', '/openapi/v2'])) as unknown;
    const location = writeKubeconformSchemas(swagger, join(dir, 'schemas'), [...kinds.values()]);
    const files = rendered.map((text, i) => {
      const f = join(dir, `rendered-${i}.yaml`);
      writeFileSync(f, text);
      return f;
    });
    // The prometheus-operator kinds have no schema on this server; promtool checks the rules.
    const args = [
      '-strict',
      '-summary',
      '-schema-location',
      location,
      '-skip',
      'ServiceMonitor,PrometheusRule',
    ];
    const r = await run(KUBECONFORM, [...args, ...files]);
    expect(r.stdout + r.stderr).toMatch(/Invalid: 0, Errors: 0, Skipped: 2/);
    expect(r.code).toBe(0);
    expect(Number(/(\d+) resources found/.exec(r.stdout)?.[1])).toBeGreaterThan(30);

    // The same check refuses a misspelt field and a wrong type.
    const broken = (rendered[0] ?? '')
      .replace('terminationGracePeriodSeconds: 35', 'terminationGracePeriodSecond: 35')
      .replace('maxUnavailable: 1', 'maxUnavailable: [1]');
    const bad = await run(KUBECONFORM, [...args, '-'], { input: broken });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toContain("additional properties 'terminationGracePeriodSecond' not allowed");
    expect(bad.stdout).toMatch(/maxUnavailable': 'anyOf' failed/);
  }, 120_000);
});

/** A kubeconfig holding nothing but a token of the ServiceAccount, as its pod would mount it. */
async function tokenKubeconfig(serviceAccount: string, namespace: string): Promise<string> {
  const token = (await kubectl(['create', 'token', serviceAccount, '-n', namespace, '--duration=1h'])).trim();
  const admin = JSON.parse(await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  const file = join(dir, `${namespace}-${serviceAccount}-kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'sa', user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
      'current-context': 'sa',
    }),
  );
  return file;
}

describe('the operator with the chart’s ServiceAccount and RBAC', () => {
  let saKubeconfig: string;
  let consoleKubeconfig: string;

  beforeAll(async () => {
    [saKubeconfig, consoleKubeconfig] = await Promise.all([
      tokenKubeconfig('switchyard-operator', NAMESPACE),
      tokenKubeconfig('gateway-sa', FULL_NAMESPACE),
    ]);
  });

  it('reconciles examples/, generates a key a gateway process serves (its console writing Workflows with the chart’s gateway role), and releases the Lease on SIGTERM', async () => {
    await kubectl(['apply', '-R', '-f', join(root, 'examples')]);
    // The first key as NOTES.txt creates it: generated by the operator into <name>-apikey.
    await kubectl(
      ['apply', '-f', '-'],
      'apiVersion: switchyard.dev/v1alpha1\nkind: ApiKey\nmetadata: {name: first-key, namespace: acme}\nspec: {projectRef: {name: storefront}, scopes: [ai]}\n',
    );
    const metricsPort = await freePort();
    const op = startNode('operator/src/main.ts', {
      KUBECONFIG: saKubeconfig,
      REDIS_URL: redis.url,
      // Read through the ServiceAccount: the chart's generated Secret, with the chart's RBAC.
      SWITCHYARD_SEAL_KEY_SECRET: `${NAMESPACE}/switchyard-seal-key`,
      POD_NAME: 'op-chart-test',
      POD_NAMESPACE: NAMESPACE,
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await waitFor(`operator /readyz\n${op.output()}`, async () => (await fetch(`${metricsUrl}/readyz`)).ok);
    await waitFor('every example object Ready', async () => {
      const list = JSON.parse(
        await kubectl(['get', 'projects,providers,workflows,apikeys,spendcaps', '-n', 'acme', '-o', 'json']),
      ) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
      return (
        list.items.length >= 9 &&
        list.items.every((o) => o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    });
    const lease = JSON.parse(
      await kubectl(['get', 'lease', 'switchyard-operator', '-n', NAMESPACE, '-o', 'json']),
    ) as {
      spec: { holderIdentity?: string };
    };
    expect(lease.spec.holderIdentity).toBe('op-chart-test');
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^switchyard_operator_leader 1$/m);
    expect(metrics).toMatch(/^process_cpu_seconds_total /m);

    const secret = await waitFor(
      'generated key Secret',
      async () =>
        JSON.parse(await kubectl(['get', 'secret', 'first-key-apikey', '-n', 'acme', '-o', 'json'])) as {
          data: { apiKey: string };
        },
    );
    const key = Buffer.from(secret.data.apiKey, 'base64').toString('utf8');
    const sealed = JSON.parse(
      await kubectl(['get', 'secret', 'switchyard-seal-key', '-n', NAMESPACE, '-o', 'json']),
    ) as {
      data: { sealKey: string };
    };
    const [port, opsPort] = await Promise.all([freePort(), freePort()]);
    const gw = startNode('gateway/src/main.ts', {
      REDIS_URL: redis.url,
      SWITCHYARD_SEAL_KEY: Buffer.from(sealed.data.sealKey, 'base64').toString('utf8'),
      SWITCHYARD_HOST: '127.0.0.1',
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_METRICS_PORT: String(opsPort),
      LOG_LEVEL: 'warn',
      // The console API on the full release's gateway ServiceAccount (its role bound in acme).
      SWITCHYARD_CONSOLE: 'kubernetes',
      KUBECONFIG: consoleKubeconfig,
    });
    await waitFor(
      `gateway /readyz\n${gw.output()}`,
      async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok,
    );
    const res = await fetch(`http://127.0.0.1:${port}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-workflow')).toBe('support-chat');

    // The console writes a Workflow CR with nothing but the gateway's token; the operator judges it.
    const consoleUrl = `http://127.0.0.1:${port}/api/console/projects/acme.storefront/workflows`;
    const auth = { authorization: `Bearer ${EXAMPLE_KEY}`, 'content-type': 'application/json' };
    const created = await fetch(consoleUrl, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        name: 'chart-console',
        provider: 'openai',
        model: 'gpt-4o-mini',
        testMode: true,
      }),
    });
    const createdBody = (await created.json()) as {
      name: string;
      ready?: { status: string };
      resource: { name: string };
    };
    // The object name the console chose: a slug of project and name plus a hash of the pair.
    const objectName = createdBody.resource.name;
    expect(objectName).toMatch(/^storefront-chart-console-[0-9a-f]{16}$/);
    expect(created.status, JSON.stringify(createdBody)).toBe(201);
    expect(createdBody.ready?.status).toBe('True');
    const written = JSON.parse(
      await kubectl(['get', 'workflows.switchyard.dev', objectName, '-n', 'acme', '-o', 'json']),
    ) as { spec: { model: string } };
    expect(written.spec.model).toBe('gpt-4o-mini');
    const replaced = await fetch(`${consoleUrl}/chart-console`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ provider: 'openai', model: 'gpt-4o', testMode: true }),
    });
    expect(replaced.status, await replaced.clone().text()).toBe(200);
    await replaced.arrayBuffer();
    const deleted = await fetch(`${consoleUrl}/chart-console`, {
      method: 'DELETE',
      headers: { authorization: auth.authorization },
    });
    expect(deleted.status, await deleted.clone().text()).toBe(204);

    gw.child.kill('SIGTERM');
    op.child.kill('SIGTERM');
    expect(await exited(gw.child)).toBe(0);
    expect(await exited(op.child)).toBe(0);
    const released = JSON.parse(
      await kubectl(['get', 'lease', 'switchyard-operator', '-n', NAMESPACE, '-o', 'json']),
    ) as {
      spec: { holderIdentity?: string };
    };
    expect(released.spec.holderIdentity ?? '').toBe('');
  }, 120_000);

  it('is refused everything beyond its role, by the API server', async () => {
    const can = async (...args: string[]) =>
      (await cluster.kubectl(['auth', 'can-i', '--as', SA, ...args])).stdout.trim();
    expect(await can('watch', 'workflows.switchyard.dev', '-A')).toBe('yes');
    expect(await can('patch', 'workflows.switchyard.dev', '--subresource=status', '-n', 'acme')).toBe('yes');
    expect(await can('create', 'secrets', '-n', 'acme')).toBe('yes');
    expect(await can('update', 'leases.coordination.k8s.io', '-n', NAMESPACE)).toBe('yes');
    for (const denied of [
      ['update', 'workflows.switchyard.dev', '-n', 'acme'],
      ['delete', 'workflows.switchyard.dev', '-n', 'acme'],
      ['delete', 'secrets', '-n', 'acme'],
      ['delete', 'customresourcedefinitions.apiextensions.k8s.io'],
      ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
      ['get', 'configmaps', '-n', 'acme'],
      ['create', 'pods', '-n', NAMESPACE],
      ['update', 'leases.coordination.k8s.io', '-n', 'default'],
      ['delete', 'leases.coordination.k8s.io', '-n', NAMESPACE],
    ])
      expect(await can(...denied), denied.join(' ')).toBe('no');

    // Real requests with the token (server-side dry run, so a wrong grant could not do harm).
    const deleteCrd = await kubectlAs(saKubeconfig, [
      'delete',
      'crd',
      'workflows.switchyard.dev',
      '--dry-run=server',
    ]);
    expect(deleteCrd.code).not.toBe(0);
    expect(deleteCrd.stderr).toMatch(/forbidden/i);
    const configmaps = await kubectlAs(saKubeconfig, ['get', 'configmaps', '-n', 'acme']);
    expect(configmaps.stderr).toMatch(/forbidden/i);
  }, 60_000);

  it('the gateway’s ServiceAccount may write Workflows for the console and nothing else; without the console it may do nothing', async () => {
    const can = async (as: string, ...args: string[]) =>
      (await cluster.kubectl(['auth', 'can-i', '--as', as, ...args])).stdout.trim();
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'delete'])
      expect(await can(CONSOLE_SA, verb, 'workflows.switchyard.dev', '-n', 'acme'), verb).toBe('yes');
    const plainGateway = `system:serviceaccount:${NAMESPACE}:switchyard-gateway`;
    for (const denied of [
      // Bound in the watched namespace only.
      ['create', 'workflows.switchyard.dev', '-n', 'default'],
      ['list', 'workflows.switchyard.dev', '-A'],
      ['patch', 'workflows.switchyard.dev', '-n', 'acme'],
      ['update', 'workflows.switchyard.dev', '--subresource=status', '-n', 'acme'],
      ['get', 'secrets', '-n', 'acme'],
      ['list', 'secrets', '-n', FULL_NAMESPACE],
      ['get', 'projects.switchyard.dev', '-n', 'acme'],
      ['create', 'apikeys.switchyard.dev', '-n', 'acme'],
      ['get', 'configmaps', '-n', 'acme'],
      ['update', 'leases.coordination.k8s.io', '-n', FULL_NAMESPACE],
    ])
      expect(await can(CONSOLE_SA, ...denied), denied.join(' ')).toBe('no');
    // The default release has the console off: its gateway may not even read a Workflow.
    expect(await can(plainGateway, 'get', 'workflows.switchyard.dev', '-n', 'acme')).toBe('no');

    // Real requests with the token: Secrets are refused, another namespace too.
    for (const args of [
      ['get', 'secrets', '-n', 'acme'],
      ['get', 'workflows.switchyard.dev', '-n', 'default'],
      ['get', 'projects.switchyard.dev', '-n', 'acme'],
    ]) {
      const r = await kubectlAs(consoleKubeconfig, args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(/forbidden/i);
    }
    const allowed = await kubectlAs(consoleKubeconfig, [
      'get',
      'workflows.switchyard.dev',
      '-n',
      'acme',
      '-o',
      'name',
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('support-chat');
  }, 60_000);

  it('with operator.watchNamespace it can read Secrets of that namespace only; the seal key survives the upgrade', async () => {
    const sealKey = async () =>
      (
        await kubectl([
          'get',
          'secret',
          'switchyard-seal-key',
          '-n',
          NAMESPACE,
          '-o',
          'jsonpath={.data.sealKey}',
        ])
      ).trim();
    const before = await sealKey();
    await helmIn([
      'upgrade',
      RELEASE,
      CHART,
      '-n',
      NAMESPACE,
      '--reuse-values',
      '--set',
      'operator.watchNamespace=acme',
    ]);
    expect(await sealKey()).toBe(before);
    expect(await assertAllServed(RELEASE, NAMESPACE)).toBe(17);

    const inAcme = await kubectlAs(saKubeconfig, ['get', 'secrets', '-n', 'acme', '-o', 'name']);
    expect(inAcme.code, inAcme.stderr).toBe(0);
    expect(inAcme.stdout).toContain('secret/first-key-apikey');
    for (const args of [
      ['get', 'secrets', '-n', 'default'],
      ['get', 'secrets', '-n', FULL_NAMESPACE],
      ['get', 'workflows.switchyard.dev', '-A'],
    ]) {
      const r = await kubectlAs(saKubeconfig, args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(/forbidden/i);
    }
  }, 60_000);
});
