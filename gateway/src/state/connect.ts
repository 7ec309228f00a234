import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { ConfigError } from '../config/env.ts';

/** Where runtime state lives: one Redis (`url`) or a Redis Cluster (`clusterNodes`, seed nodes). */
export interface StateRedisConfig {
  /** `redis://` or `rediss://` URL; with clusterNodes, only its credentials and TLS are used. */
  url?: string;
  /** Seed nodes, `host:port`; the client learns the rest of the cluster from them. */
  clusterNodes?: string[];
}

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):\d{1,5}$/, 'must be host:port');

const redisEnv = z.object({
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
 * Runtime-state Redis from the environment: REDIS_CLUSTER_NODES (comma-separated host:port) selects
 * Redis Cluster, else REDIS_URL a single Redis; undefined when neither is set (in-process state).
 */
export function redisOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): StateRedisConfig | undefined {
  const parsed = redisEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const { REDIS_URL: url, REDIS_CLUSTER_NODES: nodes } = parsed.data;
  if (nodes.length > 0) return url ? { url, clusterNodes: nodes } : { clusterNodes: nodes };
  return url ? { url } : undefined;
}

/**
 * Client settings for runtime state. No ioredis offline queue: while Redis is away, writes fail at
 * once into the state layer's own bounded buffer and reads fail fast into a 503, instead of piling
 * up unbounded in the client.
 */
const stateClientOptions: RedisOptions = {
  connectionName: 'switchyard-state',
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 5000,
  connectTimeout: 5000,
  retryStrategy: (times: number) => Math.min(times * 100, 2000),
};

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

export type StateClient = Redis | Cluster;

/** Builds (and starts connecting) the runtime-state client for `cfg`. */
export function connectStateRedis(cfg: StateRedisConfig, overrides: RedisOptions = {}): StateClient {
  if (cfg.clusterNodes && cfg.clusterNodes.length > 0) {
    const { retryStrategy, ...perNode } = { ...stateClientOptions, ...urlAuth(cfg.url), ...overrides };
    return new Cluster(cfg.clusterNodes.map(splitHostPort), {
      scaleReads: 'master',
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: retryStrategy ?? null,
      redisOptions: perNode,
    });
  }
  if (!cfg.url) throw new ConfigError('runtime state: Redis needs a url or cluster nodes');
  // Auto-pipelining batches the settle calls of one event-loop tick into one socket write
  // (measured: ~80 µs of caller time per settle without, ~15-25 µs with, on a loaded 2-core box).
  return new Redis(cfg.url, { ...stateClientOptions, enableAutoPipelining: true, ...overrides });
}
