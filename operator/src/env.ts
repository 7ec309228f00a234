import { hostname } from 'node:os';
import { z } from 'zod';
import { type RedisConnection, redisConnectionEnv, redisConnectionFromEnv } from '#contract';

/** The operator's environment, validated once at start. */
export const operatorEnv = z
  .object({
    KUBECONFIG: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Kubeconfig path; in-cluster config when unset.' }),
    // REDIS_CLUSTER_NODES (host:port seeds) selects Redis Cluster; REDIS_URL then lends credentials/TLS.
    ...redisConnectionEnv.shape,
    SWITCHYARD_SEAL_KEY: z.string().min(1).optional(),
    /** `<namespace>/<name>[:<key>]` of a Secret holding the seal key (key defaults to sealKey). */
    SWITCHYARD_SEAL_KEY_SECRET: z
      .string()
      .regex(/^[a-z0-9-]+\/[a-z0-9.-]+(:[-._a-zA-Z0-9]+)?$/, 'must be <namespace>/<name>[:<key>]')
      .optional(),
    WATCH_NAMESPACE: z.string().min(1).optional(),
    POD_NAME: z.string().min(1).optional(),
    POD_NAMESPACE: z.string().min(1).optional(),
    LEASE_NAMESPACE: z.string().min(1).optional(),
    LEASE_NAME: z.string().min(1).default('switchyard-operator'),
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9091),
    METRICS_HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SPEND_REFRESH_MS: z.coerce.number().int().min(500).default(2000),
    MCP_PROBE_MS: z.coerce.number().int().min(1000).default(60_000),
    RESYNC_MS: z.coerce.number().int().min(1000).default(300_000),
  })
  .refine((e) => e.SWITCHYARD_SEAL_KEY || e.SWITCHYARD_SEAL_KEY_SECRET, {
    message: 'set SWITCHYARD_SEAL_KEY or SWITCHYARD_SEAL_KEY_SECRET',
    path: ['SWITCHYARD_SEAL_KEY'],
  })
  .refine((e) => e.REDIS_URL || e.REDIS_CLUSTER_NODES.length > 0, {
    message: 'set REDIS_URL or REDIS_CLUSTER_NODES',
    path: ['REDIS_URL'],
  });
export type OperatorEnv = z.infer<typeof operatorEnv>;

export class ConfigError extends Error {}

export function readOperatorEnv(env: NodeJS.ProcessEnv = process.env): OperatorEnv & {
  identity: string;
  leaseNamespace: string;
  /** Where snapshots are published and spend is read: the same Redis (or Cluster) the gateways use. */
  redis: RedisConnection;
} {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = operatorEnv.safeParse(cleaned);
  if (!parsed.success)
    throw new ConfigError(
      parsed.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`).join('; '),
    );
  const e = parsed.data;
  return {
    ...e,
    // Validated above, so this neither throws nor comes back empty.
    redis: redisConnectionFromEnv(cleaned) ?? {},
    identity: e.POD_NAME ?? `${hostname()}-${process.pid}`,
    leaseNamespace: e.LEASE_NAMESPACE ?? e.POD_NAMESPACE ?? e.WATCH_NAMESPACE ?? 'default',
  };
}
