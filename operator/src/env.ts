import { hostname } from 'node:os';
import { z } from 'zod';

/** The operator's environment, validated once at start. */
export const operatorEnv = z
  .object({
    KUBECONFIG: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Kubeconfig path; in-cluster config when unset.' }),
    REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
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
    SPEND_REFRESH_MS: z.coerce.number().int().min(500).default(5000),
    RESYNC_MS: z.coerce.number().int().min(1000).default(300_000),
  })
  .refine((e) => e.SWITCHYARD_SEAL_KEY || e.SWITCHYARD_SEAL_KEY_SECRET, {
    message: 'set SWITCHYARD_SEAL_KEY or SWITCHYARD_SEAL_KEY_SECRET',
    path: ['SWITCHYARD_SEAL_KEY'],
  });
export type OperatorEnv = z.infer<typeof operatorEnv>;

export class ConfigError extends Error {}

export function readOperatorEnv(env: NodeJS.ProcessEnv = process.env): OperatorEnv & {
  identity: string;
  leaseNamespace: string;
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
    identity: e.POD_NAME ?? `${hostname()}-${process.pid}`,
    leaseNamespace: e.LEASE_NAMESPACE ?? e.POD_NAMESPACE ?? e.WATCH_NAMESPACE ?? 'default',
  };
}
