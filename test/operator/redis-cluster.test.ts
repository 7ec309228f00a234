/**
 * A deployment on Redis Cluster, named only by its seed nodes: the operator publishes snapshots into a
 * real three-master cluster and reads spend from it, a gateway follows the snapshot channel there.
 */
import { type Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  periodWindow,
  REDIS_KEYS,
  type RedisConnection,
  SNAPSHOT_HISTORY,
  type Snapshot,
  SPEND_KEYS,
} from '#contract';
import { type RunningRedisCluster, startRedisCluster } from '#devkit/redis-cluster';
import { createGateway, type Gateway } from '#gateway/gateway';
import { RedisSnapshotSource } from '#gateway/snapshot/redis-source';
import { SnapshotStore } from '#gateway/snapshot/store';
import { readOperatorEnv } from '#operator/env';
import {
  ask,
  type Env,
  EXAMPLE_KEY,
  logger,
  ready,
  root,
  startEnv,
  type WithStatus,
  waitFor,
} from './helpers.ts';

let env: Env;
let redisCluster: RunningRedisCluster;
let conn: RedisConnection;
let reader: Cluster;
let gateway: Gateway;
let store: SnapshotStore;
let source: RedisSnapshotSource;
let gatewayUrl: string;
let metricsUrl: string;

beforeAll(async () => {
  [env, redisCluster] = await Promise.all([startEnv(), startRedisCluster()]);
  conn = { clusterNodes: redisCluster.nodes };
  reader = connectRedis(conn) as Cluster;
  store = new SnapshotStore(env.sealKey);
  // Polling off (10 min): a change can only reach this gateway through pub/sub on the cluster.
  source = new RedisSnapshotSource(store, { ...conn, logger, pollMs: 600_000 });
  gateway = createGateway(store, { logger });
  await source.start();
  ({ url: gatewayUrl, metricsUrl } = await gateway.listen('127.0.0.1', 0, 0));
  await env.operator({ redis: conn });
  await env.kubectl(['apply', '-R', '-f', `${root}/examples/`]);
}, 600_000);

afterAll(async () => {
  await gateway?.close(500);
  await source?.stop();
  reader?.disconnect();
  await env?.stop();
  await redisCluster?.stop();
});

async function clusterSnapshot(): Promise<Snapshot | undefined> {
  const version = await reader.get(REDIS_KEYS.current);
  const json = version ? await reader.get(REDIS_KEYS.snapshot(version)) : null;
  return json ? (JSON.parse(json) as Snapshot) : undefined;
}

/** The master that serves `key` (host:port), from the client's slot table. */
function owner(key: string, slot: number): string {
  const nodeKey = reader.slots[slot]?.[0];
  if (!nodeKey) throw new Error(`no owner known for ${key} (slot ${slot})`);
  return nodeKey;
}

describe('operator and gateway on Redis Cluster', () => {
  it('reads the cluster from REDIS_CLUSTER_NODES alone (REDIS_URL only lends credentials)', () => {
    const base = { SWITCHYARD_SEAL_KEY: 'k' };
    expect(readOperatorEnv({ ...base, REDIS_CLUSTER_NODES: 'r-0:6379, r-1:6379' }).redis).toEqual({
      clusterNodes: ['r-0:6379', 'r-1:6379'],
    });
    expect(
      readOperatorEnv({ ...base, REDIS_CLUSTER_NODES: 'r-0:6379', REDIS_URL: 'rediss://:pw@r:6379' }).redis,
    ).toEqual({ url: 'rediss://:pw@r:6379', clusterNodes: ['r-0:6379'] });
    expect(readOperatorEnv({ ...base, REDIS_URL: 'redis://r:6379' }).redis).toEqual({
      url: 'redis://r:6379',
    });
    expect(() => readOperatorEnv(base)).toThrow(/REDIS_URL: set REDIS_URL or REDIS_CLUSTER_NODES/);
    expect(() => readOperatorEnv({ ...base, REDIS_CLUSTER_NODES: 'r-0' })).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it('the operator publishes into the cluster and the gateway serves the examples from it', async () => {
    const snap = await waitFor('a snapshot with the example key and workflow', async () => {
      const s = await clusterSnapshot();
      const usable =
        s && Object.keys(s.apiKeys).length > 0 && s.projects['acme.storefront']?.workflows['support-chat'];
      return usable ? s : undefined;
    });
    await waitFor('the gateway on it', () => store.current?.version === snap.version);
    expect((await fetch(`${metricsUrl}/readyz`)).status).toBe(200);
    const res = await ask(gatewayUrl, EXAMPLE_KEY, 'support-chat');
    expect(res.status).toBe(200);
    expect(res.model).toBe('gpt-4o-mini');
  });

  it('every change reaches the gateway by pub/sub, on every node, and history stays trimmed', async () => {
    const nodes = redisCluster.nodes;
    // A plain subscriber on each master: PUBLISH inside the script must reach all of them.
    const heard = new Map<string, string[]>(nodes.map((n) => [n, []]));
    const subs = nodes.map((n) => {
      const [host, port] = n.split(':');
      const s = new Redis({ host, port: Number(port) });
      s.on('message', (_channel: string, version: string) => heard.get(n)?.push(version));
      return s;
    });
    try {
      await Promise.all(subs.map((s) => s.subscribe(REDIS_KEYS.changed)));
      const versions: string[] = [];
      const publishes = SNAPSHOT_HISTORY + 2;
      for (let i = 1; i <= publishes; i++) {
        const description = `cluster change ${i}`;
        await env.kubectl([
          'patch',
          'workflow',
          '-n',
          'acme',
          'product-embeddings',
          '--type=merge',
          '-p',
          JSON.stringify({ spec: { description } }),
        ]);
        const snap = await waitFor('the change published', async () => {
          const s = await clusterSnapshot();
          return s?.projects['acme.storefront']?.workflows['product-embeddings']?.description === description
            ? s
            : undefined;
        });
        versions.push(snap.version);
        await waitFor(
          'the gateway on the new snapshot (pub/sub only)',
          () => store.current?.version === snap.version,
          5000,
          20,
        );
      }
      expect(new Set(versions).size).toBe(publishes);
      for (const n of nodes)
        await waitFor(`node ${n} heard every publish`, () =>
          versions.every((v) => heard.get(n)?.includes(v)),
        );

      // The script deleted the snapshots that fell out of history (keys it built from ARGV).
      const kept = await reader.zrange(REDIS_KEYS.history, '0', '-1');
      expect(kept).toHaveLength(SNAPSHOT_HISTORY);
      expect(kept).toEqual(expect.arrayContaining(versions.slice(-SNAPSHOT_HISTORY)));
      for (const v of versions.slice(0, publishes - SNAPSHOT_HISTORY))
        expect(await reader.exists(REDIS_KEYS.snapshot(v))).toBe(0);
      for (const v of kept) expect(await reader.exists(REDIS_KEYS.snapshot(v))).toBe(1);
    } finally {
      for (const s of subs) s.disconnect();
    }
  });

  it('SpendCap status reads spend of projects whose keys live on different masters', async () => {
    await env.apply(`
apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: { name: warehouse, namespace: acme }
spec: { displayName: Warehouse }
---
apiVersion: switchyard.dev/v1alpha1
kind: SpendCap
metadata: { name: warehouse-daily, namespace: acme }
spec:
  projectRef: { name: warehouse }
  scope: project
  period: daily
  limitUsd: "10.00"
`);
    const now = new Date();
    const storefrontKey = SPEND_KEYS.project(
      'acme.storefront',
      'monthly',
      periodWindow('monthly', now).start,
    );
    const warehouseKey = SPEND_KEYS.project('acme.warehouse', 'daily', periodWindow('daily', now).start);
    const slotOf = async (key: string) => Number(await reader.call('CLUSTER', 'KEYSLOT', key));
    expect(owner(warehouseKey, await slotOf(warehouseKey))).not.toBe(
      owner(storefrontKey, await slotOf(storefrontKey)),
    );
    await reader.incrby(storefrontKey, 41_000_000); // $41 of $50
    await reader.incrby(warehouseKey, 12_000_000); // $12 of $10
    const [storefront, warehouse] = await waitFor(
      'both SpendCaps report spend',
      async () => {
        const a = await env.get<WithStatus>('spendcap', 'acme', 'storefront-monthly');
        const b = await env.get<WithStatus>('spendcap', 'acme', 'warehouse-daily');
        return a.status?.state === 'warning' && b.status?.state === 'exceeded' ? [a, b] : undefined;
      },
      20_000,
      250,
    );
    expect(storefront.status).toMatchObject({ spentUsd: '41.00' });
    expect(warehouse.status).toMatchObject({ spentUsd: '12.00' });
    expect(ready(warehouse)?.status).toBe('True');
  });
});
