import { z } from 'zod';
import { ConfigError } from '../config/env.ts';

/**
 * Tracing settings from the standard OpenTelemetry environment variables. Tracing is on only when
 * an OTLP endpoint is set (and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says
 * otherwise). What this file does not read (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, the
 * certificate files) the OTLP exporter reads from the process environment itself.
 */

// Kubernetes manifests often set a variable to '' to mean "unset".
const optional = <T extends z.ZodType>(t: T) => z.preprocess((v) => (v === '' ? undefined : v), t.optional());

const protocol = z.enum(['http/protobuf', 'http/json', 'grpc']);
const millis = z.coerce.number().int().min(1).max(3_600_000);
const count = z.coerce.number().int().min(1).max(1_000_000);
const samplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export const tracingEnv = z.object({
  OTEL_SDK_DISABLED: optional(z.enum(['true', 'false', 'TRUE', 'FALSE', 'True', 'False'])),
  OTEL_TRACES_EXPORTER: optional(z.string()),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(z.url({ protocol: /^https?$/ })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(z.url({ protocol: /^https?$/ })),
  OTEL_EXPORTER_OTLP_PROTOCOL: optional(protocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional(protocol),
  OTEL_SERVICE_NAME: optional(z.string()),
  OTEL_RESOURCE_ATTRIBUTES: optional(z.string()),
  OTEL_TRACES_SAMPLER: optional(z.enum(samplers)),
  OTEL_TRACES_SAMPLER_ARG: optional(z.coerce.number().min(0).max(1)),
  OTEL_BSP_SCHEDULE_DELAY: optional(millis),
  OTEL_BSP_EXPORT_TIMEOUT: optional(millis),
  OTEL_BSP_MAX_QUEUE_SIZE: optional(count),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: optional(count),
});

export type SamplerName = (typeof samplers)[number];

export interface TracingConfig {
  /**
   * Where spans go: over HTTP the traces URL itself (`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`);
   * over gRPC the receiver's address (`http://` plaintext, `https://` TLS), as the endpoint says.
   */
  url: string;
  protocol: 'http/protobuf' | 'http/json' | 'grpc';
  serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES as given (`key=value,...`, values percent-encoded). */
  resourceAttributes: string | undefined;
  sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers. */
  ratio: number;
  batch: {
    scheduledDelayMillis?: number | undefined;
    exportTimeoutMillis?: number | undefined;
    maxQueueSize?: number | undefined;
    maxExportBatchSize?: number | undefined;
  };
}

const tracesUrl = (base: string): string => `${base.endsWith('/') ? base : `${base}/`}v1/traces`;

/** The tracing settings, or undefined when tracing is off. Throws ConfigError for a bad value. */
export function readTracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  const parsed = tracingEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid tracing environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const proto = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  // gRPC names a service, not a path: the specification takes the endpoint as it is.
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base && proto !== 'grpc' ? tracesUrl(base) : base);
  if (!url) return undefined;
  if (e.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  const exporter = e.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter !== undefined && exporter !== 'otlp')
    throw new ConfigError(`OTEL_TRACES_EXPORTER: only "otlp" (or "none") is supported, not "${exporter}"`);
  return {
    url,
    protocol: proto,
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES,
    sampler: e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    batch: {
      scheduledDelayMillis: e.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMillis: e.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    },
  };
}
