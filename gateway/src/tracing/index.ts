import type { Logger } from 'pino';
import { readTracingConfig } from './config.ts';
import { TRACING_OFF } from './off.ts';
import type { Tracing } from './types.ts';

export { NO_TRACE, TRACING_OFF } from './off.ts';
export type * from './types.ts';

/**
 * Tracing as the environment asks for it: off (a no-op, and no OpenTelemetry module loaded) unless
 * an OTLP endpoint is set; then the SDK is imported, here and only here.
 */
export async function startTracing(env: NodeJS.ProcessEnv, logger: Logger): Promise<Tracing> {
  const config = readTracingConfig(env);
  if (!config) return TRACING_OFF;
  const { startOtelTracing } = await import('./otel.ts');
  return startOtelTracing(config, logger);
}
