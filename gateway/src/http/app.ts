import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { asyncFeature } from '../async/feature.ts';
import { authenticate, requireScope } from '../auth/authenticate.ts';
import type { ConsoleBackend } from '../console/backend.ts';
import { consoleRoutes } from '../console/routes.ts';
import { GatewayError } from '../errors/index.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { settle } from '../pipeline/settle.ts';
import type { PipelineStages } from '../pipeline/stages.ts';
import { LIMITS } from '../requests/limits.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { RuntimeState } from '../state/types.ts';
import { asyncRoutes } from './async-routes.ts';
import { compatRoutes } from './compat-routes.ts';
import './context.ts';
import { sendError, sendFrameworkError, surfaceOf } from './errors.ts';
import { installJsonParsers } from './json-parser.ts';
import { nativeRoutes } from './native-routes.ts';
import { readRoutes } from './read-routes.ts';
import {
  type HttpLimits,
  httpLimitsFromEnv,
  installServerLimits,
  MAX_PARAM_LENGTH,
  serverOptions,
} from './server-limits.ts';
import { sessionRoutes } from './session-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';

export interface GatewayAppOptions {
  store: SnapshotStore;
  metrics: GatewayMetrics;
  logger: Logger;
  state: RuntimeState;
  stages: PipelineStages;
  /** Wall clock for request-log times and usage buckets (tests inject one). */
  now: () => number;
  /** Where the console API writes workflows; the console routes answer 503 without one. */
  console?: ConsoleBackend | undefined;
  /** Receive timeouts, connection cap, JSON depth, trusted proxies: over the environment's (tests). */
  http?: Partial<HttpLimits> | undefined;
}

/** Every path is served under both /v1 and /api/v1 (DESIGN.md), so either SDK base URL works. */
export const API_PREFIXES = ['/v1', '/api/v1'] as const;

export function buildGatewayApp(opts: GatewayAppOptions): FastifyInstance {
  const { store, metrics, logger, state, stages, now } = opts;
  const settleDeps = { metrics, state, now, infoEnabled: () => logger.isLevelEnabled('info') };
  const limits = { ...httpLimitsFromEnv(), ...opts.http };
  const app = Fastify({
    ...serverOptions(limits, metrics),
    frameworkErrors: sendFrameworkError,
    loggerInstance: logger as FastifyBaseLogger,
    // Our own onResponse hook writes the one log line per request; fastify's two are switched off.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: LIMITS.defaultBodyBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
  });
  app.decorateRequest('auth', null);
  app.decorateRequest('record', null as never);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('accounted', false);
  void app.register(multipart, { attachFieldsToBody: false });
  installJsonParsers(app, limits.maxJsonDepth);
  installServerLimits(app, limits, metrics);

  /**
   * Settles a request exactly once (pipeline/settle.ts: metrics, log line, request log, usage) and
   * releases its in-flight slot. Fastify runs onResponse only when the response finishes; a client
   * that goes away first (a dropped stream, a timeout on a slow upstream) would otherwise stay
   * "in flight" forever and never be settled.
   */
  const account = (req: FastifyRequest, reply: FastifyReply): void => {
    // A decorated flag, not a WeakSet: WeakSet.add cost ~0.6 % of the gateway's CPU under load.
    if (req.accounted) return;
    req.accounted = true;
    if (req.routeOptions.config?.scope) metrics.inFlight.dec({ surface: req.record.surface });
    const finished = {
      id: req.id,
      method: req.method,
      path: req.url.split('?')[0] ?? req.url,
      status: reply.statusCode,
      durationMs: performance.now() - req.startedAt,
      record: req.record,
    };
    settle(settleDeps, finished, req.auth?.project, req.log);
  };

  app.addHook('onRequest', async (req, reply) => {
    req.startedAt = performance.now();
    const surface = req.routeOptions.config?.surface;
    req.record = { surface: surface ?? 'other' };
    const scope = req.routeOptions.config?.scope;
    if (!scope) return;
    metrics.inFlight.inc({ surface: surface ?? 'other' });
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return; // onResponse accounts for it
      req.record.outcome = 'aborted';
      account(req, reply);
    });
    const runtime = store.current;
    if (!runtime)
      throw new GatewayError('service_unavailable', 'The gateway has no configuration loaded yet.', {
        retryAfterSeconds: 1,
      });
    const auth = authenticate(req.headers.authorization, runtime, now());
    req.auth = auth;
    req.record.project = auth.key.projectId;
    req.record.keyId = auth.key.keyId;
    requireScope(auth, scope);
  });

  app.addHook('onResponse', async (req, reply) => account(req, reply));

  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => {
    req.record.surface = surfaceOf(req);
    return sendError(
      new GatewayError('not_found', `No route for ${req.method} ${req.url.split('?')[0]}.`),
      req,
      reply,
    );
  });

  for (const prefix of API_PREFIXES) {
    void app.register(
      async (scoped) => {
        nativeRoutes(scoped, stages);
        compatRoutes(scoped, stages);
        readRoutes(scoped, state, now);
        sessionRoutes(scoped, state, now);
        asyncRoutes(scoped, asyncFeature({ store, state, stages, metrics, logger, now }));
        webhookRoutes(scoped, asyncFeature({ store, state, stages, metrics, logger, now }));
      },
      { prefix },
    );
  }
  consoleRoutes(app, opts.console);
  return app;
}
