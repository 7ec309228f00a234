import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pino from 'pino';
import { parseAllDocuments } from 'yaml';
import { REDIS_KEYS, type Snapshot } from '#contract';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { createGateway, type Gateway } from '#gateway/gateway';
import { RedisSnapshotSource } from '#gateway/snapshot/redis-source';
import { SnapshotStore } from '#gateway/snapshot/store';
import { loadKubeConfig } from '#operator/kube/client';
import { type OperatorOptions, type RunningOperator, startOperator } from '#operator/operator';
import { type Cluster, startCluster } from '../harness/cluster.ts';

export { metricValue } from '../harness/metrics.ts';

export const root = resolve(fileURLToPath(import.meta.url), '../../..');
export const EXAMPLE_KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  everyMs = 50,
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
    await sleep(everyMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
  );
}

export interface Env {
  cluster: Cluster;
  redis: RunningRedis;
  redisClient: Redis;
  sealKey: Buffer;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  apply(yaml: string): Promise<string>;
  get<T = Record<string, unknown>>(resource: string, ns: string, name: string): Promise<T>;
  snapshot(): Promise<Snapshot | undefined>;
  operator(overrides?: Partial<OperatorOptions>): Promise<RunningOperator>;
  gateway(): Promise<FollowingGateway>;
  stop(): Promise<void>;
}

export interface FollowingGateway {
  url: string;
  metricsUrl: string;
  gateway: Gateway;
  store: SnapshotStore;
  close(): Promise<void>;
}

/** A real API server with the CRDs installed, a real redis-server, helpers to run operators and gateways. */
export async function startEnv(): Promise<Env> {
  const [cluster, redis] = await Promise.all([startCluster(), startRedis()]);
  const redisClient = new Redis(redis.url);
  const sealKey = randomBytes(32);
  const started: { stop(): Promise<void> }[] = [];
  const kubectl = async (args: readonly string[], input?: string) => {
    const r = await cluster.kubectl(args, input !== undefined ? { input } : {});
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  };
  await kubectl(['apply', '--server-side', '-f', `${root}/crds/`]);
  await kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    'app.kubernetes.io/part-of=switchyard',
  ]).catch(() => kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']));
  const env: Env = {
    cluster,
    redis,
    redisClient,
    sealKey,
    kubectl,
    apply: (yaml) => kubectl(['apply', '-f', '-'], yaml),
    get: async <T>(resource: string, ns: string, name: string) =>
      JSON.parse(await kubectl(['get', resource, '-n', ns, name, '-o', 'json'])) as T,
    async snapshot() {
      const v = await redisClient.get(REDIS_KEYS.current);
      if (!v) return undefined;
      const json = await redisClient.get(REDIS_KEYS.snapshot(v));
      return json ? (JSON.parse(json) as Snapshot) : undefined;
    },
    async operator(overrides = {}) {
      const op = await startOperator({
        kubeConfig: loadKubeConfig(cluster.kubeconfigPath),
        redis: { url: redis.url },
        sealKey,
        logger,
        identity: `op-${randomBytes(3).toString('hex')}`,
        leaseNamespace: 'default',
        metricsPort: 0,
        metricsHost: '127.0.0.1',
        spendRefreshMs: 1000,
        ...overrides,
      });
      started.push({ stop: () => op.abort() });
      return op;
    },
    async gateway() {
      const store = new SnapshotStore(sealKey);
      const source = new RedisSnapshotSource(store, { url: redis.url, logger, pollMs: 500 });
      const gateway = createGateway(store, { logger });
      await source.start();
      const { url, metricsUrl } = await gateway.listen('127.0.0.1', 0, 0);
      const g = {
        url,
        metricsUrl,
        gateway,
        store,
        close: async () => {
          await gateway.close(500);
          await source.stop();
        },
      };
      started.push({ stop: g.close });
      return g;
    },
    async stop() {
      const t = Date.now();
      const trace = (m: string) =>
        process.env.TEST_TRACE_STOP && console.log(`[stop] ${m} +${Date.now() - t} ms`);
      for (const s of started.reverse()) {
        await s.stop().catch(() => {});
        trace('component stopped');
      }
      redisClient.disconnect();
      await Promise.all([
        cluster.stop().then(() => trace('cluster')),
        redis.stop().then(() => trace('redis')),
      ]);
    },
  };
  return env;
}

export async function ask(
  url: string,
  key: string,
  workflow: string,
  path = '/v1/ai',
): Promise<{ status: number; model: string | null; body: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ workflow, messages: [{ role: 'user', content: 'hello' }] }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, model: res.headers.get('x-service-used-model'), body };
}

export type Cond = {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
};
export type WithStatus = {
  metadata: { generation?: number };
  status?: Record<string, unknown> & { conditions?: Cond[] };
};
export const ready = (o: WithStatus): Cond | undefined =>
  o.status?.conditions?.find((c) => c.type === 'Ready');

/**
 * How many objects of each kind examples/ declares for the project `acme.storefront`, so the e2e
 * tests wait for exactly what the folder holds as examples are added.
 */
export function exampleCounts(): {
  workflows: number;
  apiKeys: number;
  spendCaps: number;
  /** ApiKeys of every project in the folder (the snapshot's key table is global). */
  allApiKeys: number;
} {
  const dir = fileURLToPath(new URL('../../examples/', import.meta.url));
  const counts = { workflows: 0, apiKeys: 0, spendCaps: 0, allApiKeys: 0 };
  const field = { Workflow: 'workflows', ApiKey: 'apiKeys', SpendCap: 'spendCaps' } as const;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')))
    for (const doc of parseAllDocuments(readFileSync(`${dir}${file}`, 'utf8'))) {
      const o = doc.toJS() as {
        kind?: string;
        metadata?: { namespace?: string };
        spec?: { projectRef?: { name?: string } };
      } | null;
      if (o?.kind === 'ApiKey') counts.allApiKeys++;
      const key = o?.kind ? field[o.kind as keyof typeof field] : undefined;
      if (key && o?.metadata?.namespace === 'acme' && o.spec?.projectRef?.name === 'storefront')
        counts[key]++;
    }
  return counts;
}
