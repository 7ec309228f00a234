import type { Exchange } from '../pipeline/exchange.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { NativeMeta } from './native.ts';

/**
 * `meta` and the `x-service-*` headers, built in one place from the exchange's record and the
 * outcome, for every encoder (native raw, wrapped, SSE, compatible, async results).
 */
export function nativeMeta(ex: Exchange, outcome: Outcome): NativeMeta {
  const p = outcome.prepared;
  const r = ex.record;
  const failed = outcome.kind === 'failed';
  return {
    status: failed ? 'error' : 'success',
    http_status: failed ? outcome.error.httpStatus : 200,
    workflow: p.workflowName,
    requested_provider: p.requestedProvider,
    requested_model: p.requestedModel,
    used_provider: failed ? null : (r.usedProvider ?? null),
    used_model: failed ? null : (r.usedModel ?? null),
    duration_ms: Math.round(performance.now() - ex.startedAt),
    usage: failed ? {} : (r.usage ?? {}),
    structured_output: p.plan.structured !== undefined || p.plan.json,
    attempts: r.attempts ?? [],
    ...(r.sessionId ? { session_id: r.sessionId } : {}),
    ...(r.cache ? { cache: r.cache } : {}),
    request_log_id: ex.id,
  };
}

/** The SSE `metadata` event that opens a native stream. */
export function streamMetadata(ex: Exchange, outcome: Outcome): Record<string, unknown> {
  const r = ex.record;
  return {
    workflow: outcome.prepared.workflowName,
    session_id: r.sessionId ?? null,
    used_provider: r.usedProvider ?? null,
    used_model: r.usedModel ?? null,
    request_log_id: ex.id,
  };
}

/** The `x-service-*` headers, and the `x-ratelimit-*` ones of a rate-limited project or key. */
export function serviceHeaders(
  ex: Exchange,
  outcome: Outcome,
  opts: { duration: boolean },
): Record<string, string> {
  const r = ex.record;
  const h: Record<string, string> = {
    'x-service-workflow': outcome.prepared.workflowName ?? '',
    'x-service-used-provider': r.usedProvider ?? '',
    'x-service-used-model': r.usedModel ?? '',
    'x-service-request-log-id': ex.id,
  };
  if (opts.duration) h['x-service-duration-ms'] = String(Math.round(performance.now() - ex.startedAt));
  if (r.cache) h['x-service-cache'] = r.cache;
  if (r.sessionId) h['x-service-session-id'] = r.sessionId;
  if (ex.rateLimitHeaders) Object.assign(h, ex.rateLimitHeaders);
  return h;
}
