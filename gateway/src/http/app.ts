import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { AsyncJobs } from '../async/jobs.ts';
import { authenticate, credentialOf, requireScope } from '../auth/authenticate.ts';
import type { CookieAuthenticator } from '../auth/session.ts';
import type { BackgroundResponses } from '../background/service.ts';
import type { ConsoleBackend } from '../console/backend.ts';
import { consoleRoutes } from '../console/routes.ts';
import type { ConversationStore } from '../conversations/types.ts';
import { GatewayError } from '../errors/index.ts';
import type { McpHttp } from '../mcp/routes.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Pipeline } from '../pipeline/run.ts';
import type { Settle } from '../pipeline/settle.ts';
import { LIMITS } from '../requests/limits.ts';
import type { SessionStore } from '../sessions/types.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { RuntimeState } from '../state/types.ts';
import type { StoredResponseStore } from '../stored-responses/types.ts';
import type { Tracing } from '../tracing/types.ts';
import { asyncRoutes } from './async-routes.ts';
import { compactRoute } from './compact-route.ts';
import { compatRoutes } from './compat-routes.ts';
import { conversationsRoutes } from './conversations-routes.ts';
import './context.ts';
import { evaluateRoute } from '../guardrails/evaluate-route.ts';
import { sendError, sendFrameworkError, surfaceOf } from './errors.ts';
import { inputTokensRoute } from './input-tokens-route.ts';
import { installJsonParsers } from './json-parser.ts';
import { messagesRoutes } from './messages-routes.ts';
import { nativeRoutes } from './native-routes.ts';
import { readRoutes } from './read-routes.ts';
import { responsesRoutes } from './responses-routes.ts';
import {
  type HttpLimits,
  httpLimitsFromEnv,
  installServerLimits,
  MAX_PARAM_LENGTH,
  serverOptions,
} from './server-limits.ts';
import { sessionRoutes } from './session-routes.ts';
import { requestSettle } from './settle.ts';
import { webhookRoutes } from './webhook-routes.ts';
import { ZOD_ONLY } from './zod-only.ts';

export interface GatewayAppOptions {
  store: SnapshotStore;
  metrics: GatewayMetrics;
  logger: Logger;
  state: RuntimeState;
  pipeline: Pipeline;
  settle: Settle;
  jobs: AsyncJobs;
  sessions: SessionStore;
  storedResponses: StoredResponseStore;
  /** What POST /v1/responses/compact's summary call runs through (limits and caps, no cache or sessions). */
  compaction?: Pipeline;
  /** Background responses (`background: true` on POST /v1/responses). */
  background: BackgroundResponses;
  conversations: ConversationStore;
  /** Wall clock for request-log times and usage buckets (tests inject one). */
  now: () => number;
  /** Where the console API writes workflows; the console routes answer 503 without one. */
  console?: ConsoleBackend | undefined;
  /** The web console: its routes, and its session cookie as the alternative to a key on console routes. */
  consoleWeb?:
    | { sessions: CookieAuthenticator; register(app: FastifyInstance, pipeline: Pipeline): void }
    | undefined;
  /** Receive timeouts, connection cap, JSON depth, trusted proxies: over the environment's (tests). */
  http?: Partial<HttpLimits> | undefined;
  /** A server span per request (a no-op when tracing is off). */
  tracing: Tracing;
  /** The MCP endpoint (`/v1/mcp`); not served without it. */
  mcp?: McpHttp | undefined;
}

/** Every path is served under both /v1 and /api/v1 (docs/api.md, "Paths"), so either SDK base URL works. */
export const API_PREFIXES = ['/v1', '/api/v1'] as const;

export function buildGatewayApp(opts: GatewayAppOptions): FastifyInstance {
  const { store, metrics, logger, state, pipeline, settle, now, tracing } = opts;
  const limits = { ...httpLimitsFromEnv(), ...opts.http };
  const app = Fastify({
    ...serverOptions(limits, metrics),
    frameworkErrors: sendFrameworkError,
    loggerInstance: logger as FastifyBaseLogger,
    // Our own onResponse hook writes the one log line per request; fastify's two are switched off.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: LIMITS.defaultBodyBytes,
    genReqId: () => randomUUID(),
    // No per-request child logger: each request's one log line (pipeline/settle.ts) and the
    // internal-error line (errors.ts) carry the request id themselves; a pino child per request
    // cost an object, a bindings string and the garbage they leave on every request.
    childLoggerFactory: (logger) => logger,
    requestIdHeader: false,
    // A draining gateway still answers what arrives on its open connections, each answer closing its
    // connection (gateway.ts): a 503 would fail a request that nothing else failed.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    schemaController: ZOD_ONLY,
  });
  app.decorateRequest('auth', null);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('accounted', false);
  app.decorateRequest('exchange', null);
  app.decorateRequest('refusal', null);
  app.decorateRequest('logAs', null);
  app.decorateRequest('logDetails', null);
  app.decorateRequest('trace', null);
  installJsonParsers(app, limits.maxJsonDepth);
  installServerLimits(app, limits, metrics);

  // Settled where it ends: its response finished (onResponse) or its client went away first ('close').
  const settleRequest = requestSettle(settle, metrics);

  // Callback-style hooks: an async one costs every request a promise and a microtask. A throw here
  // reaches the error handler as an async hook's rejection would (Fastify's hook runner catches it).
  app.addHook('onRequest', (req, reply, done) => {
    req.startedAt = performance.now();
    req.trace = tracing.request(req);
    const scope = req.routeOptions.config?.scope;
    if (!scope) {
      done();
      return;
    }
    metrics.inFlight.inc(req.routeOptions.config?.surface ?? 'other');
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return; // onResponse settles it
      settleRequest(req, reply, true);
    });
    const runtime = store.current;
    if (!runtime)
      throw new GatewayError('service_unavailable', 'The gateway has no configuration loaded yet.', {
        retryAfterSeconds: 1,
      });
    const messages = req.routeOptions.config?.surface === 'messages';
    const credential = credentialOf(req.headers, messages);
    const viaSession =
      credential === undefined && scope === 'console'
        ? opts.consoleWeb?.sessions.authenticate(req, runtime, now())
        : undefined;
    if (viaSession) {
      viaSession
        .then((auth) => {
          req.auth = auth;
          requireScope(auth, scope);
        })
        .then(() => done(), done);
      return;
    }
    const auth = authenticate(credential, runtime, now());
    req.auth = auth;
    requireScope(auth, scope);
    done();
  });

  app.addHook('onResponse', (req, reply, done) => {
    settleRequest(req, reply, false);
    done();
  });

  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => {
    req.logAs = { surface: surfaceOf(req) };
    return sendError(
      new GatewayError('not_found', `No route for ${req.method} ${req.url.split('?')[0]}.`),
      req,
      reply,
    );
  });

  for (const prefix of API_PREFIXES) {
    void app.register(
      async (scoped) => {
        nativeRoutes(scoped, pipeline);
        compatRoutes(scoped, pipeline);
        responsesRoutes(scoped, pipeline, opts.storedResponses, now, opts.conversations, opts.background);
        conversationsRoutes(scoped, opts.conversations, now);
        inputTokensRoute(scoped, opts.storedResponses, opts.conversations);
        evaluateRoute(scoped);
        compactRoute(scoped, opts.compaction ?? pipeline, opts.storedResponses);
        messagesRoutes(scoped, pipeline);
        readRoutes(scoped, state, now);
        sessionRoutes(scoped, opts.sessions);
        asyncRoutes(scoped, opts.jobs.service);
        webhookRoutes(scoped, opts.jobs.webhooks);
        opts.mcp?.register(scoped, prefix);
      },
      { prefix },
    );
  }
  opts.mcp?.registerMetadata(app, API_PREFIXES);
  consoleRoutes(app, opts.console);
  opts.consoleWeb?.register(app, pipeline);
  return app;
}
