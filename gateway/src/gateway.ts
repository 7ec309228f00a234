import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { AsyncConfig } from './async/config.ts';
import { startWorkers } from './async/feature.ts';
import type { ConsoleBackend } from './console/backend.ts';
import { buildStages } from './features.ts';
import { buildGatewayApp } from './http/app.ts';
import { buildOpsApp } from './http/ops-app.ts';
import type { HttpLimits } from './http/server-limits.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import type { PipelineStages } from './pipeline/stages.ts';
import { ShutdownClock } from './shutdown.ts';
import { closeWithin } from './shutdown-steps.ts';
import type { Runtime } from './snapshot/runtime.ts';
import type { SnapshotStore } from './snapshot/store.ts';
import { createRuntimeState } from './state/index.ts';
import type { RuntimeState } from './state/types.ts';
import { warmTokenizer } from './tokens/count.ts';

export interface Gateway {
  app: FastifyInstance;
  ops: FastifyInstance;
  metrics: GatewayMetrics;
  logger: Logger;
  state: RuntimeState;
  /** Binds both ports; returns the bound addresses (port 0 picks free ports). */
  listen(host: string, port: number, metricsPort: number): Promise<{ url: string; metricsUrl: string }>;
  /**
   * Graceful stop within `graceMs` whatever Redis is doing: refuse new work, let in-flight requests
   * and streams finish, write what they settled, then close; what could not finish is logged.
   */
  close(graceMs?: number): Promise<void>;
}

/** Spend caps, token rate limits and session memory estimate tokens before the provider answers. */
function needsTokenCounts(rt: Runtime): boolean {
  for (const key of rt.keys.values()) if (key.rateLimit?.tokensPerMinute) return true;
  for (const p of rt.projects.values()) {
    if (p.config.spendCaps.length > 0 || p.config.rateLimit?.tokensPerMinute) return true;
    for (const wf of p.workflows.values()) if (wf.config.sessionMemory.enabled) return true;
  }
  return false;
}

export interface GatewayOptions {
  logger?: Logger;
  logLevel?: string;
  /** Runtime state; in-process memory when omitted (embedded mode without Redis, unit tests). */
  state?: (metrics: GatewayMetrics, logger: Logger) => RuntimeState;
  stages?: PipelineStages;
  /** Wall clock for request-log times and usage buckets. */
  now?: () => number;
  /** Async/WebSocket/webhook settings over the environment's (tests). */
  async?: Partial<AsyncConfig>;
  /** The console API's backend (cluster or config folder); the console API is off without one. */
  console?: ConsoleBackend;
  /** Receive timeouts, connection cap, JSON depth, trusted proxies over the environment's (tests). */
  http?: Partial<HttpLimits>;
}

export function createGateway(store: SnapshotStore, opts: GatewayOptions = {}): Gateway {
  const logger =
    opts.logger ?? pino({ level: opts.logLevel ?? 'info', base: { service: 'switchyard-gateway' } });
  const metrics = new GatewayMetrics();
  const state = opts.state
    ? opts.state(metrics, logger)
    : createRuntimeState({ registry: metrics.registry, logger });
  const now = opts.now ?? (() => Date.now());
  let closing = false;
  const stages = opts.stages ?? buildStages({ state, metrics, logger, now });
  const app = buildGatewayApp({
    store,
    metrics,
    logger,
    state,
    stages,
    now,
    console: opts.console,
    http: opts.http,
  });
  // Async jobs, webhook deliveries and the WebSocket endpoint (async/feature.ts).
  const workers = startWorkers(
    { store, state, stages, metrics, logger, now, config: opts.async },
    app.server,
  );
  const ops = buildOpsApp(store, metrics, () => closing);
  if (store.current) metrics.setSnapshot(store.current.version);
  // The tokenizer loads in the background when a snapshot needs token counts; a starting gateway
  // waits for it before it takes traffic, so its first estimates are exact.
  let tokenizer: Promise<void> | undefined;
  const installed = (rt: Runtime) => {
    if (needsTokenCounts(rt)) tokenizer ??= warmTokenizer();
  };
  if (store.current) installed(store.current);
  store.onChange((rt) => {
    installed(rt);
    metrics.setSnapshot(rt.version);
    logger.info({
      msg: 'snapshot installed',
      version: rt.version,
      projects: rt.projects.size,
      keys: rt.keys.size,
    });
  });

  return {
    app,
    ops,
    metrics,
    logger,
    state,
    async listen(host, port, metricsPort) {
      await tokenizer;
      const url = await app.listen({ host, port });
      const metricsUrl = await ops.listen({ host, port: metricsPort });
      return { url, metricsUrl };
    },
    async close(graceMs = 25_000) {
      closing = true;
      await closeWithin(new ShutdownClock(logger, graceMs), { app, ops, workers, state });
    },
  };
}
