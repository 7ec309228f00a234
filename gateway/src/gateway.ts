import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { AsyncConfig } from './async/config.ts';
import { startWorkers } from './async/feature.ts';
import type { ConsoleBackend } from './console/backend.ts';
import { buildStages } from './features.ts';
import { buildGatewayApp } from './http/app.ts';
import { buildOpsApp } from './http/ops-app.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import type { PipelineStages } from './pipeline/stages.ts';
import { sessionWorkDone } from './sessions/index.ts';
import type { Runtime } from './snapshot/runtime.ts';
import type { SnapshotStore } from './snapshot/store.ts';
import { createRuntimeState } from './state/index.ts';
import type { RuntimeState } from './state/types.ts';
import { warmTokenizer } from './tokens/count.ts';
import { closeUpstreamPools } from './upstream/http.ts';

export interface Gateway {
  app: FastifyInstance;
  ops: FastifyInstance;
  metrics: GatewayMetrics;
  logger: Logger;
  state: RuntimeState;
  /** Binds both ports; returns the bound addresses (port 0 picks free ports). */
  listen(host: string, port: number, metricsPort: number): Promise<{ url: string; metricsUrl: string }>;
  /** Graceful stop: refuse new work, let in-flight requests and streams finish, then close. */
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

/**
 * A draining gateway keeps its keep-alive connections open while they keep closing (each busy one
 * closes after its next answer, which carries `Connection: close`): until none is left, none closed
 * for QUIET_MS (the rest are idle), or CONNECTION_DRAIN_MS (bounded by the grace period).
 */
const CONNECTION_DRAIN_MS = 2_000;
const QUIET_MS = 500;

async function connectionsClosed(server: Server, withinMs: number): Promise<void> {
  const count = () => new Promise<number>((r) => server.getConnections((_err, n) => r(n ?? 0)));
  const end = Date.now() + withinMs;
  let open = await count();
  let changedAt = Date.now();
  while (open > 0 && Date.now() < end && Date.now() - changedAt < QUIET_MS) {
    await new Promise((r) => setTimeout(r, 50));
    const now = await count();
    if (now !== open) changedAt = Date.now();
    open = now;
  }
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
  const app = buildGatewayApp({ store, metrics, logger, state, stages, now, console: opts.console });
  // Draining (the pod is out of its Service's endpoints by now): every answer closes its connection,
  // so a keep-alive client sends its next request on a new connection, to a pod that stays, rather
  // than on one this gateway is about to close under it.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
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
      const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
      timer.unref();
      await workers.drain();
      await connectionsClosed(app.server, Math.min(graceMs, CONNECTION_DRAIN_MS));
      await app.close();
      clearTimeout(timer);
      await ops.close();
      await workers.close();
      // Session turns appended after their answers (and summaries under way) finish first, bounded.
      await sessionWorkDone(state, 10_000);
      // Settled requests are written before the process goes (close waits a bounded time for them).
      await state.close();
      await closeUpstreamPools();
    },
  };
}
