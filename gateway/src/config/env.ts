import { z } from 'zod';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** Gateway process settings from the environment, validated like every other input. */
export const gatewayEnv = z.object({
  SWITCHYARD_HOST: z.string().default('0.0.0.0'),
  SWITCHYARD_PORT: port(8080),
  SWITCHYARD_METRICS_PORT: port(9090),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  SWITCHYARD_SEAL_KEY: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SWITCHYARD_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  // How long request-log entries and usage wait to go out together (0: every event-loop turn).
  SWITCHYARD_STATE_FLUSH_MS: z.coerce.number().int().min(0).max(1000).default(5),
});
export type GatewayEnv = z.infer<typeof gatewayEnv>;

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
}

export function readGatewayEnv(env: NodeJS.ProcessEnv = process.env): GatewayEnv {
  const parsed = gatewayEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
}
