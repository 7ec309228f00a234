import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';

/**
 * How every Switchyard process reaches Redis: one Redis (`url`) or a Redis Cluster (`clusterNodes`).
 * The operator and the gateways read the same two variables (the chart sets them on both), so the
 * parsing and the client construction live here, next to the keys they share.
 */
export interface RedisConnection {
  /** `redis://` or `rediss://` URL; with clusterNodes, only its credentials and TLS are used. */
  url?: string;
  /** Seed nodes, `host:port`; the client learns the rest of the cluster from them. */
  clusterNodes?: string[];
}

export class RedisConfigError extends Error {
  readonly code = 'REDIS_CONFIG_INVALID';
}

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):\d{1,5}$/, 'must be host:port');

/** REDIS_URL and REDIS_CLUSTER_NODES (comma-separated host:port seeds), as both processes read them. */
export const redisConnectionEnv = z.object({
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .transform((s) =>
      (s ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n.length > 0),
    )
    .pipe(z.array(hostPort)),
});

/**
 * REDIS_CLUSTER_NODES selects Redis Cluster (REDIS_URL then lends credentials and TLS), else REDIS_URL
 * one Redis; undefined when neither is set. Throws RedisConfigError naming the bad variable.
 */
export function redisConnectionFromEnv(env: NodeJS.ProcessEnv = process.env): RedisConnection | undefined {
  const parsed = redisConnectionEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new RedisConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const { REDIS_URL: url, REDIS_CLUSTER_NODES: nodes } = parsed.data;
  if (nodes.length > 0) return url ? { url, clusterNodes: nodes } : { clusterNodes: nodes };
  return url ? { url } : undefined;
}

function splitHostPort(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(node.slice(at + 1)) };
}

/** Credentials and TLS a URL carries, for the cluster's per-node connections. */
function urlAuth(url: string | undefined): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  if (!url) return {};
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

export type RedisClient = Redis | Cluster;

/**
 * Builds the client for `conn`. `options` are written for a single Redis; on a cluster, the ones
 * ioredis only honours at the cluster level (lazyConnect, offline queue, auto-pipelining, the
 * reconnect strategy) are lifted there and the rest apply to every node connection. `cluster` adds
 * cluster-only settings (e.g. scaleReads).
 */
export function connectRedis(
  conn: RedisConnection,
  options: RedisOptions = {},
  cluster: Omit<ClusterOptions, 'redisOptions'> = {},
): RedisClient {
  if (conn.clusterNodes && conn.clusterNodes.length > 0) {
    const { retryStrategy, lazyConnect, enableOfflineQueue, enableAutoPipelining, ...perNode } = {
      ...options,
      ...urlAuth(conn.url),
    };
    return new Cluster(conn.clusterNodes.map(splitHostPort), {
      ...(retryStrategy !== undefined ? { clusterRetryStrategy: retryStrategy } : {}),
      ...(lazyConnect !== undefined ? { lazyConnect } : {}),
      ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
      ...(enableAutoPipelining !== undefined ? { enableAutoPipelining } : {}),
      ...cluster,
      redisOptions: perNode,
    });
  }
  if (!conn.url) throw new RedisConfigError('Redis needs a url or cluster nodes');
  return new Redis(conn.url, options);
}
