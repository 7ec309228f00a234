import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { type AsyncConfig, asyncConfigFromEnv } from './async/config.ts';
import { asyncJobs } from './async/jobs.ts';
import { BackgroundResponses } from './background/service.ts';
import { responseCache } from './cache/feature.ts';
import type { ConsoleBackend } from './console/backend.ts';
import { bundleReady, ConsoleWeb, type ConsoleWebOptions } from './console-web/index.ts';
import { guardrails } from './guardrails/feature.ts';
import { buildGatewayApp } from './http/app.ts';
import { buildOpsApp } from './http/ops-app.ts';
import type { HttpLimits } from './http/server-limits.ts';
import { governedToolCalls } from './mcp/governance.ts';
import { McpHttp } from './mcp/routes.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import type { Feature } from './pipeline/feature.ts';
import { Pipeline } from './pipeline/run.ts';
import { createSettle } from './pipeline/settle.ts';
import { sessionMemory } from './sessions/index.ts';
import { ShutdownClock } from './shutdown.ts';
import { closeWithin } from './shutdown-steps.ts';
import type { SnapshotStore } from './snapshot/store.ts';
import { limitsAndCaps } from './spend/feature.ts';
import { createRuntimeState } from './state/index.ts';
import type { RuntimeState } from './state/types.ts';
import { createStores } from './stores.ts';
import { TRACING_OFF } from './tracing/off.ts';
import type { Tracing } from './tracing/types.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';

export interface Gateway {
  app: FastifyInstance;
  ops: FastifyInstance;
  metrics: GatewayMetrics;
  logger: Logger;
  state: RuntimeState;
  webhooks: WebhookDispatcher;
  /** The web console at /console/, when asked for and its bundle is built. */
  consoleWeb: ConsoleWeb | undefined;
  /** Binds both ports; returns the bound addresses (port 0 picks free ports). */
  listen(host: string, port: number, metricsPort: number): Promise<{ url: string; metricsUrl: string }>;
  /** Resolves once every session append and summary started so far has finished (for tests and shutdown). */
  sessionWorkDone(maxWaitMs?: number): Promise<void>;
  /**
   * Graceful stop within `graceMs` whatever Redis is doing: refuse new work, let in-flight requests
   * and streams finish, write what they settled, then close; what could not finish is logged.
   */
  close(graceMs?: number): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  logLevel?: string;
  /** Runtime state; in-process memory when omitted (embedded mode without Redis, unit tests). */
  state?: (metrics: GatewayMetrics, logger: Logger) => RuntimeState;
  /** Wall clock for request-log times, usage buckets, caps and limits. */
  now?: () => number;
  /** Async/WebSocket/webhook settings over the environment's (tests). */
  async?: Partial<AsyncConfig>;
  /** The console API's backend (cluster or config folder); the console API is off without one. */
  console?: ConsoleBackend;
  /** The web console's bundle and base path; not served without it or without the built bundle. */
  consoleWeb?: ConsoleWebOptions | undefined;
  /** How often a background response's job looks for a cancel, and its stream readers for events (100 ms). */
  backgroundPollMs?: number;
  /** Receive timeouts, connection cap, JSON depth, trusted proxies over the environment's (tests). */
  http?: Partial<HttpLimits>;
  /**
   * OpenTelemetry traces (tracing/index.ts `startTracing` builds it from the environment); off when
   * omitted. The gateway closes it, flushing what is left, when it closes.
   */
  tracing?: Tracing;
  /** MCP session expiry and stream keep-alives over the defaults (an hour, 15 s). */
  mcp?: { sessionTtlMs?: number; keepAliveMs?: number };
}

/**
 * The composition root: runtime state and every store are built here, once (Redis or memory is
 * chosen in stores.ts), and handed to the features; the features are composed into the pipelines
 * in the order they run; the HTTP app and the workers get what they serve.
 */
export function createGateway(store: SnapshotStore, opts: GatewayOptions = {}): Gateway {
  const logger =
    opts.logger ?? pino({ level: opts.logLevel ?? 'info', base: { service: 'switchyard-gateway' } });
  const metrics = new GatewayMetrics();
  const registry = metrics.registry;
  const state = opts.state ? opts.state(metrics, logger) : createRuntimeState({ registry, logger });
  const now = opts.now ?? (() => Date.now());
  const tracing = opts.tracing ?? TRACING_OFF;
  const asyncConfig = { ...asyncConfigFromEnv(), ...opts.async };
  const stores = createStores(state.redis, {
    now,
    logger,
    async: asyncConfig,
    answerRedis: state.answerRedis,
  });
  const settle = createSettle({ metrics, state, logger, now });
  const webhooks = new WebhookDispatcher({
    snapshots: store,
    runner: stores.runner,
    store: stores.webhooks,
    state,
    registry,
    logger,
    now,
    tracing,
  });

  const limits = limitsAndCaps({
    store: stores.guard,
    registry,
    logger,
    now,
    thresholds: {
      log: (projectId, log) =>
        state.write({
          projectId,
          log,
          logCap: store.current?.projects.get(projectId)?.config.requestLogs.maxEntries ?? 100_000,
        }),
      emit: (projectId, payload, id) => void webhooks.emitFor(projectId, 'budget.threshold', payload, id),
    },
  });
  // Session summaries count toward spend caps: they run through the limits-and-caps feature alone.
  const summaries = new Pipeline([limits], logger);
  const sessions = sessionMemory({
    store: stores.sessions,
    registry,
    logger,
    now,
    summaries: { call: (ex, p) => summaries.call(ex, p), settle },
  });
  // The order features run in: guardrails first (every later feature only sees the checked
  // request, and a blocked one takes no rate units), admission (a cache hit counts toward rate
  // limits), then the cache, then session memory (session workflows bypass the cache, so those two
  // commute).
  const features: Feature[] = [
    guardrails({ registry, now }),
    limits,
    responseCache({ store: stores.cache, registry, logger, now }),
    sessions,
  ];
  const pipeline = new Pipeline(features, logger);
  const background = new BackgroundResponses({
    snapshots: store,
    pipeline,
    settle,
    logger,
    now,
    store: stores.responses,
    conversations: stores.conversations,
    runner: stores.runner,
    tracing,
    pollMs: opts.backgroundPollMs ?? 100,
  });
  const jobs = asyncJobs({
    background: (j) => background.run(j),
    snapshots: store,
    pipeline,
    settle,
    registry,
    logger,
    now,
    config: asyncConfig,
    channels: stores.channels,
    tokens: stores.tokens,
    runner: stores.runner,
    bus: stores.bus,
    webhooks,
    tracing,
  });

  const consoleWeb =
    opts.consoleWeb && bundleReady(opts.consoleWeb.dir)
      ? new ConsoleWeb(stores.consoleSessions, store, now, opts.consoleWeb, { guard: stores.guard, state })
      : undefined;
  if (opts.consoleWeb && !consoleWeb)
    logger.warn({ msg: 'console not served: no built bundle (make console)', dir: opts.consoleWeb.dir });

  const mcp = new McpHttp({
    sessions: stores.mcpSessions,
    registry,
    calls: governedToolCalls({ admitTool: (t) => limits.admitTool(t), state, registry, logger, now }),
    logger,
    now,
    sessionTtlMs: opts.mcp?.sessionTtlMs ?? 3_600_000,
    keepAliveMs: opts.mcp?.keepAliveMs ?? 15_000,
  });

  let closing = false;
  const app = buildGatewayApp({
    store,
    metrics,
    logger,
    state,
    pipeline,
    settle,
    now,
    jobs,
    sessions: stores.sessions,
    storedResponses: stores.responses,
    compaction: summaries,
    background,
    conversations: stores.conversations,
    console: opts.console,
    consoleWeb,
    http: opts.http,
    tracing,
    mcp,
  });
  // Draining (the pod is out of its Service's endpoints by now): every answer closes its connection,
  // so a keep-alive client sends its next request on a new connection, to a pod that stays, rather
  // than on one this gateway is about to close under it.
  // Callback style: an async hook costs every answer a promise and a microtask.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  jobs.start(app.server);
  const ops = buildOpsApp(store, metrics, () => closing);
  if (store.current) metrics.setSnapshot(store.current.version);
  store.onChange((rt) => {
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
    webhooks,
    consoleWeb,
    sessionWorkDone: (maxWaitMs) => sessions.workDone(maxWaitMs),
    async listen(host, port, metricsPort) {
      const url = await app.listen({ host, port });
      const metricsUrl = await ops.listen({ host, port: metricsPort });
      return { url, metricsUrl };
    },
    async close(graceMs = 25_000) {
      closing = true;
      await closeWithin(new ShutdownClock(logger, graceMs), {
        app,
        ops,
        jobs,
        sessionWork: (ms) => sessions.workDone(ms),
        features: async () => {
          await limits.close();
          await stores.cache.close();
          await stores.sessions.close();
          await mcp.close();
        },
        state,
        tracing,
      });
    },
  };
}
