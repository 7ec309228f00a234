import { z } from 'zod';

/** Async, WebSocket and webhook settings; the environment supplies them, tests override them. */
export interface AsyncConfig {
  /** How long a pipeline workflow waits for its backend callback (5 minutes by default). */
  callbackTimeoutMs: number;
  /** Lifetime of a ws_token that has not been used. */
  tokenTtlMs: number;
  /** How long a channel's state and result stay readable (GET /v1/ai/async/{id}, late joiners). */
  channelTtlSec: number;
  /** Delay of the test-mode backend a pipeline workflow in testMode simulates (1.5 s by default). */
  simulatedBackendMs: number;
  /**
   * Public base URL (`https://api.example.com`) of websocket_url and callback_url; else the request's
   * scheme and Host (X-Forwarded-* only from SWITCHYARD_TRUSTED_PROXIES).
   */
  publicUrl: string | undefined;
  /** Jobs a gateway runs at once. */
  concurrency: number;
  /** BullMQ lock duration: a killed pod's jobs are taken over by others after about this long. */
  lockMs: number;
}

const env = z.object({
  SWITCHYARD_CALLBACK_TIMEOUT_MS: z.coerce.number().int().min(1).default(300_000),
  SWITCHYARD_WS_TOKEN_TTL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60_000),
  SWITCHYARD_CHANNEL_TTL_SEC: z.coerce.number().int().min(60).default(86_400),
  SWITCHYARD_SIMULATED_BACKEND_MS: z.coerce.number().int().min(0).default(1500),
  SWITCHYARD_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  SWITCHYARD_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
  SWITCHYARD_JOB_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
});

export function asyncConfigFromEnv(source: NodeJS.ProcessEnv = process.env): AsyncConfig {
  const e = env.parse(source);
  return {
    callbackTimeoutMs: e.SWITCHYARD_CALLBACK_TIMEOUT_MS,
    tokenTtlMs: e.SWITCHYARD_WS_TOKEN_TTL_MS,
    channelTtlSec: e.SWITCHYARD_CHANNEL_TTL_SEC,
    simulatedBackendMs: e.SWITCHYARD_SIMULATED_BACKEND_MS,
    publicUrl: e.SWITCHYARD_PUBLIC_URL?.replace(/\/+$/, ''),
    concurrency: e.SWITCHYARD_JOB_CONCURRENCY,
    lockMs: e.SWITCHYARD_JOB_LOCK_MS,
  };
}
