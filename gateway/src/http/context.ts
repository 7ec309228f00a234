import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '#contract';
import type { AuthContext } from '../auth/authenticate.ts';
import type { RequestRecord } from '../observability/request-record.ts';
import type { Exchange } from '../pipeline/exchange.ts';

/** The API surfaces served over HTTP: each parses and encodes; the pipeline is the same. */
export type HttpSurface = 'native' | 'compat' | 'responses' | 'messages';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    record: RequestRecord;
    startedAt: number;
    /** Set once the request has been settled (app.ts). */
    accounted: boolean;
  }
  interface FastifyContextConfig {
    surface?: HttpSurface;
    /** The key scope a route needs; routes without one are public (health, metrics). */
    scope?: ApiKeyScope;
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

/** The pipeline's view of an HTTP request. */
export function exchangeOf(req: FastifyRequest, reply: FastifyReply, surface: HttpSurface): Exchange {
  return {
    id: req.id,
    surface,
    startedAt: req.startedAt,
    auth: authOf(req),
    signal: clientAbortSignal(reply.raw),
    record: req.record,
    cacheControl: req.headers['cache-control'],
  };
}
