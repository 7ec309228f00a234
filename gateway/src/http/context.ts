import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '#contract';
import type { AuthContext } from '../auth/authenticate.ts';
import type { GatewayError } from '../errors/index.ts';
import { type Exchange, openExchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import type { Pipeline, PipelineRequest } from '../pipeline/run.ts';
import type { RequestLogType } from '../state/types.ts';
import { NO_TRACE } from '../tracing/off.ts';
import type { ExchangeTrace } from '../tracing/types.ts';

/** The API surfaces served over HTTP: each parses and encodes; the pipeline is the same. */
export type HttpSurface = 'native' | 'compat' | 'responses' | 'messages';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    startedAt: number;
    /** Set once the request has been settled (settle.ts). */
    accounted: boolean;
    /** The pipeline's exchange, once a surface started one (context.ts `exchangeOf`). */
    exchange: Exchange | null;
    /** The refusal the error encoder answered (http/errors.ts). */
    refusal: GatewayError | null;
    /** The request's server span (app.ts onRequest); ended when it is settled. */
    trace: ExchangeTrace | null;
    /** How a route logs its request, when not as a plain `request` of its surface (the callback, a 404). */
    logAs: { type?: RequestLogType; channelId?: string; surface?: HttpSurface } | null;
    /** What a route adds to its request-log entry's details (e.g. the hosted tools it omitted). */
    logDetails: Record<string, unknown> | null;
  }
  interface FastifyContextConfig {
    surface?: HttpSurface;
    /** The key scope a route needs; routes without one are public (health, metrics). */
    scope?: ApiKeyScope;
    /**
     * The route's body is optional: an empty body labelled JSON is none (the Python SDK sends one on
     * POST /responses/{id}/cancel), not invalid JSON.
     */
    bodyOptional?: boolean;
  }
}

export function authOf(req: { auth: AuthContext | null }): AuthContext {
  // The onRequest hook authenticates every route with a scope; reaching here without auth is a bug.
  if (!req.auth) throw new Error('route reached without authentication');
  return req.auth;
}

/** Aborts upstream work when the client goes away before the response is complete. */
export function clientAbortSignal(raw: import('node:http').ServerResponse): AbortSignal {
  const ac = new AbortController();
  raw.once('close', () => {
    if (!raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

/** The pipeline's view of an HTTP request; the request keeps it, so it is settled from it. */
export function exchangeOf(
  req: FastifyRequest,
  reply: FastifyReply,
  surface: HttpSurface,
  kind: Exchange['kind'] = 'request',
): Exchange {
  const ex = openExchange({
    id: req.id,
    kind,
    surface,
    startedAt: req.startedAt,
    auth: authOf(req),
    signal: clientAbortSignal(reply.raw),
    cacheControl: req.headers['cache-control'],
    trace: req.trace ?? NO_TRACE,
  });
  req.exchange = ex;
  return ex;
}

/** Runs the pipeline for a surface's request; a refusal is thrown to the error encoder. */
export async function serve(
  pipeline: Pipeline,
  req: FastifyRequest,
  reply: FastifyReply,
  surface: HttpSurface,
  request: PipelineRequest,
): Promise<{ ex: Exchange; result: Exclude<PipelineResult, { kind: 'refused' }> }> {
  const ex = exchangeOf(req, reply, surface);
  const result = await pipeline.run(ex, request);
  if (result.kind === 'refused') throw result.error;
  return { ex, result };
}
