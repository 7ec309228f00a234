/**
 * The charts as helm renders them, without a cluster: lint, golden files for default and full
 * values (UPDATE_GOLDEN=1 rewrites them), the strict values schema, and the invariants that tie
 * the charts to their sources (crds/, operator/rbac/, the alert rules and the dashboard).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  buildChartTools,
  CHART,
  CRD_CHART,
  FULL_VALUES,
  find,
  GOLDEN_DIR,
  helm,
  helmOk,
  type KubeObject,
  parseObjects,
  REQUIRED_VALUES,
  root,
  template,
} from './tools.ts';

beforeAll(() => buildChartTools(), 30 * 60_000);

type Container = {
  name: string;
  args: string[];
  env: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  ports: { name: string; containerPort: number }[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  lifecycle?: { preStop: { sleep: { seconds: number } } };
};
type PodSpec = {
  securityContext: Record<string, unknown>;
  terminationGracePeriodSeconds: number;
  automountServiceAccountToken?: boolean;
  serviceAccountName: string;
  containers: Container[];
};
const podSpec = (o: KubeObject) => (o.spec as { template: { spec: PodSpec } }).template.spec;
const container = (o: KubeObject) => {
  const c = podSpec(o).containers[0];
  if (!c) throw new Error(`${o.metadata.name} has no container`);
  return c;
};
const envOf = (o: KubeObject, name: string) => container(o).env.find((e) => e.name === name);

/** The generated seal key differs on every render; the golden holds a placeholder. */
function normalize(rendered: string): string {
  return rendered.replace(/^( {2}sealKey: )(\S+)$/m, (_all, head: string, value: string) => {
    const key = Buffer.from(Buffer.from(value, 'base64').toString('utf8'), 'base64');
    if (key.length !== 32) throw new Error(`generated seal key is ${key.length} bytes, not 32`);
    return `${head}<generated: base64 of 32 random bytes>`;
  });
}

async function golden(name: string, values: readonly string[]): Promise<void> {
  const rendered = normalize(await template(CHART, values));
  const file = join(GOLDEN_DIR, `${name}.yaml`);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, rendered);
  expect(rendered, `${file} (UPDATE_GOLDEN=1 rewrites it after a deliberate change)`).toBe(
    readFileSync(file, 'utf8'),
  );
}

describe('helm lint', () => {
  it('passes for both charts, strict', async () => {
    const crds = await helm(['lint', '--strict', CRD_CHART]);
    expect(crds.stdout + crds.stderr).toContain('0 chart(s) failed');
    expect(crds.code).toBe(0);
    for (const values of [[...REQUIRED_VALUES], ['-f', FULL_VALUES]]) {
      const r = await helm(['lint', '--strict', CHART, ...values]);
      expect(r.stdout + r.stderr).toContain('0 chart(s) failed');
      expect(r.code).toBe(0);
    }
  });
});

describe('golden files', () => {
  it('default values (plus the required redis.url)', () => golden('default', REQUIRED_VALUES));
  it('every option set (test/charts/values-full.yaml)', () => golden('full', ['-f', FULL_VALUES]));
});

describe('values.schema.json', () => {
  const refused = async (args: string[]) => {
    const r = await helm(['template', 'x', CHART, ...REQUIRED_VALUES, ...args]);
    expect(r.code, r.stdout).not.toBe(0);
    return r.stderr;
  };

  it('refuses a misspelt key anywhere, naming it', async () => {
    expect(await refused(['--set', 'gateway.replcas=3'])).toMatch(
      /at '\/gateway': additional properties 'replcas' not allowed/,
    );
    expect(await refused(['--set', 'imagee.tag=x'])).toMatch(/additional properties 'imagee' not allowed/);
    expect(await refused(['--set', 'operator.resources.limit.memory=1Gi'])).toMatch(
      /at '\/operator\/resources': additional properties 'limit' not allowed/,
    );
    expect(await refused(['--set', 'networkPolicy.apiFrom[0].podSelecter.matchLabels.a=b'])).toMatch(
      /additional properties 'podSelecter' not allowed/,
    );
  });

  it('refuses wrong types and values, naming the field', async () => {
    expect(await refused(['--set', 'gateway.port=eighty'])).toMatch(
      /at '\/gateway\/port': got string, want integer/,
    );
    expect(await refused(['--set', 'logLevel=verbose'])).toMatch(/at '\/logLevel'/);
    expect(await refused(['--set', 'console.timeoutMs=50'])).toMatch(/at '\/console\/timeoutMs'/);
    expect(await refused(['--set', 'console.enable=true'])).toMatch(
      /at '\/console': additional properties 'enable' not allowed/,
    );
    expect(await refused(['--set', 'redis.url=http://redis:6379'])).toMatch(/at '\/redis\/url'/);
    expect(await refused(['--set', 'serviceMonitor.interval=often'])).toMatch(
      /at '\/serviceMonitor\/interval'/,
    );
    expect(await refused(['--set', 'gateway.mallocEnv.NODE_OPTIONS=--inspect'])).toMatch(
      /at '\/gateway\/mallocEnv\/NODE_OPTIONS'/,
    );
    expect(await refused(['--set-string', 'gateway.mallocEnv.MALLOC_ARENA_MAX=two'])).toMatch(
      /at '\/gateway\/mallocEnv\/MALLOC_ARENA_MAX'/,
    );
    expect(await refused(['--set', 'gateway.allocator=tcmalloc'])).toMatch(/at '\/gateway\/allocator'/);
    expect(await refused(['--set-string', 'gateway.jemallocConf=narenas:2;rm -rf'])).toMatch(
      /at '\/gateway\/jemallocConf'/,
    );
  });

  it('the CRD chart is strict too', async () => {
    const r = await helm(['template', 'x', CRD_CHART, '--set', 'kep=false']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/additional properties 'kep' not allowed/);
  });

  it('every object of the schema refuses unknown keys', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const loose: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.properties && n.additionalProperties !== false) loose.push(path || '/');
      for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`);
    };
    walk(schema, '');
    expect(loose).toEqual([]);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('needs exactly one place Redis is named', async () => {
    const none = await helm(['template', 'x', CHART]);
    expect(none.stderr).toContain(
      'set redis.url, redis.clusterNodes (Redis Cluster) or redis.existingSecret.name',
    );
    const two = await helm([
      'template',
      'x',
      CHART,
      ...REQUIRED_VALUES,
      '--set',
      'redis.existingSecret.name=r',
    ]);
    expect(two.stderr).toContain('set exactly one of redis.url or redis.existingSecret.name');
    const seeds = await helm([
      'template',
      'x',
      CHART,
      '--set',
      'redis.existingSecret.name=r',
      '--set',
      'redis.clusterNodes={a:6379}',
    ]);
    expect(seeds.stderr).toContain('redis.existingSecret.clusterNodesKey instead of redis.clusterNodes');
    expect(await refused(['--set', 'redis.clusterNodes={not-a-seed}'])).toMatch(
      /at '\/redis\/clusterNodes\/0'/,
    );
  });
});

describe('what the chart renders', () => {
  let defaults: KubeObject[];
  let full: KubeObject[];
  beforeAll(async () => {
    [defaults, full] = await Promise.all([
      template(CHART, REQUIRED_VALUES).then(parseObjects),
      template(CHART, ['-f', FULL_VALUES]).then(parseObjects),
    ]);
  });

  it('the CRD chart renders exactly crds/, plus release labels and the keep policy', async () => {
    const rendered = parseObjects(await template(CRD_CHART));
    const files = ['apikeys', 'guardrails', 'mcpservers', 'projects', 'providers', 'spendcaps', 'workflows'];
    expect(rendered.map((o) => o.metadata.name).sort()).toEqual(files.map((f) => `${f}.switchyard.dev`));
    for (const crd of rendered) {
      const source = parse(
        readFileSync(join(root, 'crds', `${crd.metadata.name}.yaml`), 'utf8'),
      ) as KubeObject;
      expect(crd.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      expect(crd.metadata.labels).toMatchObject({
        ...source.metadata.labels,
        'app.kubernetes.io/managed-by': 'Helm',
      });
      const strip = ({ metadata: { name }, ...rest }: KubeObject) => ({ name, ...rest });
      expect(strip(crd)).toEqual(strip(source));
    }
    const unkept = parseObjects(await template(CRD_CHART, ['--set', 'keep=false']));
    expect(unkept.every((o) => o.metadata.annotations === undefined)).toBe(true);
  });

  it('RBAC: the operator gets exactly the rules of operator/rbac/; the gateway none unless the console is on', async () => {
    const file = (f: string) =>
      parse(readFileSync(join(root, 'operator/rbac', f), 'utf8')) as { rules: unknown };
    expect(find(defaults, 'ClusterRole').rules).toEqual(file('clusterrole.yaml').rules);
    expect(find(defaults, 'Role').rules).toEqual(file('leader-election-role.yaml').rules);
    const rbacKinds = (objects: KubeObject[]) =>
      objects
        .filter((o) => /Role/.test(o.kind))
        .map((o) => `${o.kind} ${o.metadata.name}`)
        .sort();
    expect(rbacKinds(defaults)).toEqual([
      'ClusterRole switchyard-system-switchyard-operator',
      'ClusterRoleBinding switchyard-system-switchyard-operator',
      'Role switchyard-operator-leader-election',
      'RoleBinding switchyard-operator-leader-election',
    ]);
    // watchNamespace: the ClusterRole is bound in that namespace only.
    const binding = full.filter((o) => o.kind === 'RoleBinding').find((o) => o.metadata.namespace === 'acme');
    expect(binding?.roleRef).toMatchObject({ kind: 'ClusterRole' });
    expect(full.some((o) => o.kind === 'ClusterRoleBinding')).toBe(false);
    expect(envOf(find(full, 'Deployment', 'ai-gateway-operator'), 'WATCH_NAMESPACE')?.value).toBe('acme');

    // Console off (the default): no role, no token, no console variables.
    const gateway = find(defaults, 'Deployment', 'switchyard-gateway');
    expect(podSpec(gateway).automountServiceAccountToken).toBe(false);
    expect(find(defaults, 'ServiceAccount', 'switchyard-gateway').automountServiceAccountToken).toBe(false);
    expect(container(gateway).env.filter((e) => e.name.startsWith('SWITCHYARD_CONSOLE'))).toEqual([]);

    // Console on: exactly the rules of operator/rbac/gateway-clusterrole.yaml, bound to the gateway's
    // ServiceAccount cluster-wide, or in the watched namespace only.
    const on = parseObjects(await template(CHART, [...REQUIRED_VALUES, '--set', 'console.enabled=true']));
    const role = find(on, 'ClusterRole', 'switchyard-system-switchyard-gateway-console');
    expect(role.rules).toEqual(file('gateway-clusterrole.yaml').rules);
    const subjects = [{ kind: 'ServiceAccount', name: 'switchyard-gateway', namespace: 'switchyard-system' }];
    expect(find(on, 'ClusterRoleBinding', 'switchyard-system-switchyard-gateway-console')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'switchyard-system-switchyard-gateway-console' },
      subjects,
    });
    const gwOn = find(on, 'Deployment', 'switchyard-gateway');
    expect(podSpec(gwOn).automountServiceAccountToken).toBe(true);
    expect(envOf(gwOn, 'SWITCHYARD_CONSOLE')?.value).toBe('kubernetes');
    expect(envOf(gwOn, 'SWITCHYARD_CONSOLE_TIMEOUT_MS')).toBeUndefined();
    // The operator's role is untouched by the console's.
    expect(find(on, 'ClusterRole', 'switchyard-system-switchyard-operator').rules).toEqual(
      file('clusterrole.yaml').rules,
    );

    expect(find(full, 'ClusterRole', 'switchyard-system-ai-gateway-gateway-console').rules).toEqual(
      file('gateway-clusterrole.yaml').rules,
    );
    expect(find(full, 'RoleBinding', 'switchyard-system-ai-gateway-gateway-console')).toMatchObject({
      metadata: { namespace: 'acme' },
      roleRef: { kind: 'ClusterRole', name: 'switchyard-system-ai-gateway-gateway-console' },
      subjects: [{ kind: 'ServiceAccount', name: 'gateway-sa', namespace: 'switchyard-system' }],
    });
    const gwFull = find(full, 'Deployment', 'ai-gateway-gateway');
    expect(podSpec(gwFull).automountServiceAccountToken).toBe(true);
    expect(envOf(gwFull, 'SWITCHYARD_CONSOLE_TIMEOUT_MS')?.value).toBe('15000');

    // console.rbac.create=false: the token and variables, but the role is the user's business.
    const own = parseObjects(
      await template(CHART, [
        ...REQUIRED_VALUES,
        '--set',
        'console.enabled=true',
        '--set',
        'console.rbac.create=false',
      ]),
    );
    expect(rbacKinds(own)).toEqual(rbacKinds(defaults));
    expect(podSpec(find(own, 'Deployment', 'switchyard-gateway')).automountServiceAccountToken).toBe(true);
  });

  it('RBAC: console.identities adds the token and access reviews and the patch rights, cluster-wide', async () => {
    const source = parseAllDocuments(
      readFileSync(join(root, 'operator/rbac/gateway-console-identity-clusterrole.yaml'), 'utf8'),
    )[0]?.toJSON() as { rules: unknown };
    const on = parseObjects(
      await template(CHART, [
        ...REQUIRED_VALUES,
        '--set',
        'console.enabled=true',
        '--set',
        'console.identities.enabled=true',
      ]),
    );
    const name = 'switchyard-system-switchyard-gateway-console-identities';
    expect(find(on, 'ClusterRole', name).rules).toEqual(source.rules);
    expect(find(on, 'ClusterRoleBinding', name)).toMatchObject({
      roleRef: { kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: 'switchyard-gateway', namespace: 'switchyard-system' }],
    });
    expect(envOf(find(on, 'Deployment', 'switchyard-gateway'), 'SWITCHYARD_CONSOLE_IDENTITIES')?.value).toBe(
      'true',
    );
    // Off by default, even with the console on.
    const plain = parseObjects(await template(CHART, [...REQUIRED_VALUES, '--set', 'console.enabled=true']));
    expect(plain.some((o) => o.metadata.name === name)).toBe(false);
  });

  it('pods: restricted security context, probes on the ops ports, drain-long grace period', () => {
    for (const objects of [defaults, full])
      for (const d of objects.filter((o) => o.kind === 'Deployment')) {
        const spec = podSpec(d);
        expect(spec.securityContext).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(container(d).securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container(d).livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
        expect(container(d).readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
      }
    const gw = find(full, 'Deployment', 'ai-gateway-gateway');
    // gateway.nodeFlags go before the entry point, where node reads its own and V8's flags.
    expect(container(gw).args).toEqual([
      '--max-semi-space-size=16',
      '--heap-growing-percent=50',
      'dist/gateway/pod/main.js',
    ]);
    // By default, V8's young generation is sized explicitly, not from the container's memory limit,
    // and an idle pod's collections do not shrink the heap the next burst needs.
    expect(container(find(defaults, 'Deployment', 'switchyard-gateway')).args).toEqual([
      '--max-semi-space-size=16',
      '--no-memory-reducer-favors-memory',
      'dist/gateway/pod/main.js',
    ]);
    // jemalloc by default, preloaded by name with its options; glibc's malloc settings instead with
    // allocator glibc (the full values).
    const gwDefault = find(defaults, 'Deployment', 'switchyard-gateway');
    expect(envOf(gwDefault, 'LD_PRELOAD')?.value).toBe('libjemalloc.so.2');
    expect(envOf(gwDefault, 'MALLOC_CONF')?.value).toBe(
      'narenas:1,tcache:false,dirty_decay_ms:250,muzzy_decay_ms:0',
    );
    expect(envOf(gwDefault, 'MALLOC_ARENA_MAX')).toBeUndefined();
    expect(envOf(gw, 'MALLOC_ARENA_MAX')?.value).toBe('4');
    expect(envOf(gw, 'LD_PRELOAD')).toBeUndefined();
    expect(container(gw).ports).toEqual([
      { name: 'http', containerPort: 8000, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9000, protocol: 'TCP' },
    ]);
    expect(envOf(gw, 'SWITCHYARD_SHUTDOWN_GRACE_MS')?.value).toBe('120000');
    expect(container(gw).lifecycle?.preStop.sleep.seconds).toBe(10);
    expect(podSpec(gw).terminationGracePeriodSeconds).toBe(10 + 120 + 5);
    const op = find(defaults, 'Deployment', 'switchyard-operator');
    expect(container(op).args).toEqual(['dist/operator/pod/main.js']);
    expect((op.spec as { replicas: number }).replicas).toBe(2);
    expect(envOf(op, 'METRICS_PORT')?.value).toBe('9091');
    expect(envOf(op, 'LEASE_NAMESPACE')?.value).toBe('switchyard-system');
  });

  it('autoscaling owns the gateway replica count when on; the Deployment does when off', () => {
    const hpa = find(defaults, 'HorizontalPodAutoscaler');
    expect(hpa.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 10,
      scaleTargetRef: { name: 'switchyard-gateway' },
    });
    expect(
      (find(defaults, 'Deployment', 'switchyard-gateway').spec as { replicas?: number }).replicas,
    ).toBeUndefined();
    expect(full.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
    expect((find(full, 'Deployment', 'ai-gateway-gateway').spec as { replicas?: number }).replicas).toBe(3);
  });

  it('secrets: a generated seal key and the Redis URL by default; the user’s Secrets when named', () => {
    const secrets = defaults.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name);
    expect(secrets.sort()).toEqual(['switchyard-redis', 'switchyard-seal-key']);
    const gw = find(defaults, 'Deployment', 'switchyard-gateway');
    expect(envOf(gw, 'REDIS_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'switchyard-redis', key: 'url' });
    expect(envOf(gw, 'SWITCHYARD_SEAL_KEY')?.valueFrom?.secretKeyRef).toEqual({
      name: 'switchyard-seal-key',
      key: 'sealKey',
    });
    expect(full.some((o) => o.kind === 'Secret')).toBe(false);
    for (const name of ['ai-gateway-gateway', 'ai-gateway-operator']) {
      const d = find(full, 'Deployment', name);
      // On a cluster the URL only lends credentials: the managed Secret may leave it out.
      expect(envOf(d, 'REDIS_URL')?.valueFrom?.secretKeyRef).toEqual({
        name: 'redis-credentials',
        key: 'redis-url',
        optional: true,
      });
      expect(envOf(d, 'SWITCHYARD_SEAL_KEY')?.valueFrom?.secretKeyRef).toEqual({
        name: 'switchyard-seal',
        key: 'key',
      });
    }
    // A Redis Cluster is the whole release's: operator and gateways get the same seeds.
    for (const name of ['ai-gateway-gateway', 'ai-gateway-operator'])
      expect(envOf(find(full, 'Deployment', name), 'REDIS_CLUSTER_NODES')?.valueFrom?.secretKeyRef).toEqual({
        name: 'redis-credentials',
        key: 'cluster-seeds',
      });
    for (const name of ['switchyard-gateway', 'switchyard-operator'])
      expect(envOf(find(defaults, 'Deployment', name), 'REDIS_CLUSTER_NODES')).toBeUndefined();
  });

  it('redis.clusterNodes alone put operator and gateways on a Redis Cluster; a URL only adds credentials', async () => {
    const seeds = 'redis-0.redis:6379,redis-1.redis:6379';
    const only = parseObjects(
      await template(CHART, ['--set', 'redis.clusterNodes={redis-0.redis:6379,redis-1.redis:6379}']),
    );
    expect(find(only, 'Secret', 'switchyard-redis').stringData).toEqual({ clusterNodes: seeds });
    for (const name of ['switchyard-gateway', 'switchyard-operator']) {
      const d = find(only, 'Deployment', name);
      expect(envOf(d, 'REDIS_CLUSTER_NODES')?.valueFrom?.secretKeyRef).toEqual({
        name: 'switchyard-redis',
        key: 'clusterNodes',
      });
      expect(envOf(d, 'REDIS_URL')).toBeUndefined();
    }
    const withUrl = parseObjects(
      await template(CHART, [
        ...REQUIRED_VALUES,
        '--set',
        'redis.clusterNodes={redis-0.redis:6379,redis-1.redis:6379}',
      ]),
    );
    expect(find(withUrl, 'Secret', 'switchyard-redis').stringData).toEqual({
      url: 'redis://redis.example:6379',
      clusterNodes: seeds,
    });
    for (const name of ['switchyard-gateway', 'switchyard-operator']) {
      const d = find(withUrl, 'Deployment', name);
      expect(envOf(d, 'REDIS_URL')?.valueFrom?.secretKeyRef).toEqual({
        name: 'switchyard-redis',
        key: 'url',
      });
      expect(envOf(d, 'REDIS_CLUSTER_NODES')?.valueFrom?.secretKeyRef?.key).toBe('clusterNodes');
    }
  });

  it('monitoring objects are off by default and carry their release label when on', () => {
    const monitoring = (objects: KubeObject[]) =>
      objects.filter((o) => ['ServiceMonitor', 'PrometheusRule'].includes(o.kind) || o.kind === 'ConfigMap');
    expect(monitoring(defaults)).toEqual([]);
    const on = monitoring(full);
    expect(on.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'PrometheusRule', 'ServiceMonitor']);
    for (const o of on)
      expect(o.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', team: 'platform' });
    const dashboard = find(full, 'ConfigMap');
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(dashboard.metadata.namespace).toBe('monitoring');
    expect((dashboard.data as Record<string, string>)['switchyard.json']).toBe(
      readFileSync(join(CHART, 'files/dashboard.json'), 'utf8').trimEnd(),
    );
  });

  it('the PrometheusRule holds files/alerts.yaml, with runbook_url when a base URL is set', async () => {
    const source = parse(readFileSync(join(CHART, 'files/alerts.yaml'), 'utf8')) as {
      groups: { rules: { annotations: Record<string, string> }[] }[];
    };
    const withUrls = structuredClone(source);
    for (const g of withUrls.groups)
      for (const r of g.rules)
        r.annotations.runbook_url = `https://git.example.com/platform/switchyard/blob/main/${r.annotations.runbook}`;
    expect(find(full, 'PrometheusRule').spec).toEqual(withUrls);
    const plain = parseObjects(
      await template(CHART, [...REQUIRED_VALUES, '--set', 'prometheusRule.enabled=true']),
    );
    expect(find(plain, 'PrometheusRule').spec).toEqual(source);
  });

  it('NetworkPolicy admits the API and metrics ports from the configured peers', () => {
    const gw = find(full, 'NetworkPolicy', 'ai-gateway-gateway').spec as {
      ingress: { ports: { port: string }[]; from?: unknown[] }[];
    };
    expect(gw.ingress.map((i) => [i.ports[0]?.port, i.from?.length])).toEqual([
      ['http', 2],
      ['metrics', 1],
    ]);
    const open = find(defaults, 'NetworkPolicy', 'switchyard-gateway').spec as {
      ingress: { from?: unknown[] }[];
    };
    expect(open.ingress.every((i) => i.from === undefined)).toBe(true);
  });

  it('renders no duplicate keys (YAML 1.2 strict parse of the whole stream)', async () => {
    for (const values of [[...REQUIRED_VALUES], ['-f', FULL_VALUES]]) {
      const docs = parseAllDocuments(await helmOk(['template', 'x', CHART, ...values]), { uniqueKeys: true });
      expect(docs.flatMap((d) => d.errors.map((e) => e.message))).toEqual([]);
    }
  });
});
